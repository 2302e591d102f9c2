//! The reply cache, which is also how a run resumes: every 2xx reply body is stored under a key
//! of everything that determines it, before it is parsed. A rerun (after Ctrl-C, a crash, a page
//! reload) finds it and sends nothing; a reply that did not parse is parsed again, never bought
//! again.
//!
//! The key is a SHA-256 of (provider, base URL, model, endpoint, the exact request body with
//! canonically ordered keys — the parameters are in it —, task, template version, sample index).
//! No API key is part of it, and nothing stored contains one.

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;

/// A hex SHA-256 naming one cached reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CacheKey(pub String);

/// What a cache key is computed from.
#[derive(Clone, Copy, Debug)]
pub struct CacheKeyParts<'a> {
    pub provider: &'a str,
    pub base_url: &'a str,
    pub model: &'a str,
    pub endpoint: &'a str,
    pub body: &'a Value,
    pub task: &'a str,
    pub template_version: &'a str,
    pub sample: u32,
}

impl CacheKey {
    pub fn new(p: &CacheKeyParts<'_>) -> Self {
        let mut h = Sha256::new();
        // Length-prefixed fields: no two different tuples hash the same bytes.
        for field in [
            "ragscope-judge-cache-v1",
            p.provider,
            p.base_url,
            p.model,
            p.endpoint,
            &canonical_json(p.body),
            p.task,
            p.template_version,
            &p.sample.to_string(),
        ] {
            h.update((field.len() as u64).to_le_bytes());
            h.update(field.as_bytes());
        }
        let mut hex = String::with_capacity(64);
        for b in h.finalize() {
            let _ = write!(hex, "{b:02x}");
        }
        CacheKey(hex)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// JSON with object keys sorted at every level, so the key does not depend on serde_json's
/// `preserve_order` feature (which the CLI enables and the library alone does not).
pub fn canonical_json(v: &Value) -> String {
    fn go(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    go(&m[k], out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    go(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut s = String::new();
    go(v, &mut s);
    s
}

/// One stored reply: the provider's raw 2xx body and what it answered (no base URL: it may carry
/// credentials; no headers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedReply {
    pub provider: String,
    pub model: String,
    pub task: String,
    pub template_version: String,
    pub sample: u32,
    /// Unix milliseconds when it was received.
    pub received_ms: u64,
    pub body: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cache: {0}")]
pub struct CacheError(pub String);

/// Where replies are kept: a directory natively ([`crate::native::DirCache`]), IndexedDB in the
/// browser, memory in tests.
pub trait CacheStore {
    fn get(&self, key: CacheKey) -> LocalBoxFuture<'_, Result<Option<CachedReply>, CacheError>>;
    fn put(&self, key: CacheKey, reply: CachedReply) -> LocalBoxFuture<'_, Result<(), CacheError>>;
}

/// A cache that lives as long as the value (tests; the app when the user opts out of storage).
#[derive(Debug, Default)]
pub struct MemoryCache {
    map: RefCell<HashMap<CacheKey, CachedReply>>,
}

impl MemoryCache {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.map.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.borrow().is_empty()
    }
    /// Every stored reply (tests look for secrets in them).
    pub fn entries(&self) -> Vec<(CacheKey, CachedReply)> {
        let mut v: Vec<_> = self
            .map
            .borrow()
            .iter()
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

impl CacheStore for MemoryCache {
    fn get(&self, key: CacheKey) -> LocalBoxFuture<'_, Result<Option<CachedReply>, CacheError>> {
        let r = self.map.borrow().get(&key).cloned();
        Box::pin(async move { Ok(r) })
    }

    fn put(&self, key: CacheKey, reply: CachedReply) -> LocalBoxFuture<'_, Result<(), CacheError>> {
        self.map.borrow_mut().insert(key, reply);
        Box::pin(async { Ok(()) })
    }
}

/// A cache that stores nothing (`--no-cache`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCache;

impl CacheStore for NoCache {
    fn get(&self, _key: CacheKey) -> LocalBoxFuture<'_, Result<Option<CachedReply>, CacheError>> {
        Box::pin(async { Ok(None) })
    }
    fn put(&self, _key: CacheKey, _r: CachedReply) -> LocalBoxFuture<'_, Result<(), CacheError>> {
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parts<'a>(body: &'a Value, sample: u32) -> CacheKeyParts<'a> {
        CacheKeyParts {
            provider: "openai",
            base_url: "https://api.openai.com/v1",
            model: "gpt-4o",
            endpoint: "/chat/completions",
            body,
            task: "umbrela",
            template_version: "1",
            sample,
        }
    }

    #[test]
    fn key_ignores_key_order_but_not_content_or_sample() {
        let a = json!({"model": "m", "temperature": 0.0, "messages": [{"role": "user", "content": "x"}]});
        let b = json!({"messages": [{"content": "x", "role": "user"}], "temperature": 0.0, "model": "m"});
        let c = json!({"model": "m", "temperature": 0.5, "messages": [{"role": "user", "content": "x"}]});
        assert_eq!(CacheKey::new(&parts(&a, 0)), CacheKey::new(&parts(&b, 0)));
        assert_ne!(CacheKey::new(&parts(&a, 0)), CacheKey::new(&parts(&c, 0)));
        assert_ne!(CacheKey::new(&parts(&a, 0)), CacheKey::new(&parts(&a, 1)));
        assert_eq!(CacheKey::new(&parts(&a, 0)).as_str().len(), 64);
    }
}
