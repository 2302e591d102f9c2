//! A JSON object read into an ordered map that refuses duplicate keys: serde's maps keep the
//! last value silently, which would hide a doubled judgment.

use std::fmt;
use std::marker::PhantomData;

use indexmap::IndexMap;
use serde::de::{self, Deserialize, MapAccess, Visitor};

#[derive(Debug, Clone)]
pub struct UniqueMap<V>(pub IndexMap<String, V>);

impl<V> Default for UniqueMap<V> {
    fn default() -> Self {
        Self(IndexMap::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for UniqueMap<V> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct UniqueVisitor<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for UniqueVisitor<V> {
            type Value = UniqueMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object with unique keys")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = IndexMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<V>()?;
                    if out.contains_key(&key) {
                        return Err(de::Error::custom(format!("duplicate key {key:?}")));
                    }
                    out.insert(key, value);
                }
                Ok(UniqueMap(out))
            }
        }
        d.deserialize_map(UniqueVisitor(PhantomData))
    }
}
