//! Every store the app keeps in the browser, in one list (docs/privacy.md shows the same table):
//! what each IndexedDB database holds and the localStorage flag that records the user's consent
//! to keep it. Nothing is written to a database whose flag is not set, and "Forget everything"
//! deletes every database and flag listed here ([`forget_all`]).

use crate::idb;
use web_sys::{IdbFactory, Storage};

/// One IndexedDB database the app may keep, and the consent that allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    /// The IndexedDB database's name.
    pub db: &'static str,
    /// What it holds, in words.
    pub holds: &'static str,
    /// The localStorage key set to `"1"` while the user consents to keeping it.
    pub flag: &'static str,
}

/// The loaded files (the browser's own File handles): "Remember my files here".
pub const FILES: Store = Store {
    db: "ragscope",
    holds: "the files you loaded (the browser's own File handles)",
    flag: "ragscope.remember",
};

/// API keys: "remember" beside a key.
pub const KEYS: Store = Store {
    db: "ragscope-keys",
    holds: "API keys",
    flag: "ragscope.remember-key",
};

/// Judge replies and batch ids, written by the worker: "Keep replies in this browser".
pub const JUDGE_CACHE: Store = Store {
    db: "ragscope-judge-cache",
    holds: "judge replies and batch ids",
    flag: "ragscope.keep-judge-replies",
};

/// Lost-in-the-middle results: "Keep results in this browser" on that page.
pub const LITM: Store = Store {
    db: "ragscope-litm",
    holds: "lost-in-the-middle results per model, data and position",
    flag: "ragscope.keep-litm",
};

/// Every store, each deleted by "Forget everything".
pub const STORES: [Store; 4] = [FILES, KEYS, JUDGE_CACHE, LITM];

/// The prefix of every localStorage key the app writes (the flags above).
pub const FLAG_PREFIX: &str = "ragscope.";

impl Store {
    /// Whether the user consented to keeping this store (its flag is set).
    pub fn consented(&self, storage: Option<&Storage>) -> bool {
        storage
            .and_then(|s| s.get_item(self.flag).ok().flatten())
            .is_some_and(|v| v == "1")
    }

    /// Records the consent (`on`) or its withdrawal. Withdrawing does not delete the database:
    /// [`Store::delete`] does.
    pub fn set_consent(&self, storage: Option<&Storage>, on: bool) {
        if let Some(s) = storage {
            let _ = if on {
                s.set_item(self.flag, "1")
            } else {
                s.remove_item(self.flag)
            };
        }
    }

    /// Deletes the database (nothing happens when it does not exist).
    pub async fn delete(&self, factory: &IdbFactory) -> Result<(), String> {
        let request = factory
            .delete_database(self.db)
            .map_err(|_| format!("cannot delete IndexedDB {}", self.db))?;
        idb::done(&request)
            .await
            .map(|_| ())
            .map_err(|f| f.message(|_, _| format!("cannot delete IndexedDB {}", self.db)))
    }
}

/// "Forget everything": removes every flag (and any other `ragscope.` key) from localStorage
/// and deletes every database in [`STORES`]. Every deletion is tried; the first failure is
/// returned.
pub async fn forget_all(factory: &IdbFactory, storage: Option<&Storage>) -> Result<(), String> {
    if let Some(s) = storage {
        let keys: Vec<String> = (0..s.length().unwrap_or(0))
            .filter_map(|i| s.key(i).ok().flatten())
            .filter(|k| k.starts_with(FLAG_PREFIX))
            .collect();
        for k in keys {
            let _ = s.remove_item(&k);
        }
    }
    let mut first_error = Ok(());
    for store in STORES {
        if let Err(e) = store.delete(factory).await {
            if first_error.is_ok() {
                first_error = Err(e);
            }
        }
    }
    first_error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_store_has_its_own_database_and_flag_under_the_prefix() {
        for (i, a) in STORES.iter().enumerate() {
            assert!(a.flag.starts_with(FLAG_PREFIX), "{}", a.flag);
            for b in &STORES[i + 1..] {
                assert_ne!(a.db, b.db);
                assert_ne!(a.flag, b.flag);
            }
        }
    }
}
