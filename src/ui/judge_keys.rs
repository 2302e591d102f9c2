//! "Remember this key on this device": API keys kept in IndexedDB, only when the user ticks the
//! box. The flag lives in localStorage so that, without it, the database is never even opened
//! (opening one creates it). "Forget everything" deletes the database and the flag (it is
//! `KEYS` in crates/platform's list of stores).

use crate::ui::persist::{done, js_error, local_storage, open};
use ragscope_platform::stores::KEYS;
use ragscope_protocol::judges::ProviderChoice;
use wasm_bindgen::prelude::*;
use web_sys::IdbTransactionMode;

const DB: &str = KEYS.db;
const STORE: &str = "keys";

fn flagged() -> bool {
    KEYS.consented(local_storage().as_ref())
}

/// Keeps `key` for `provider` (the user opted in).
pub async fn save(provider: ProviderChoice, key: &str) -> Result<(), String> {
    KEYS.set_consent(local_storage().as_ref(), true);
    write(|store| store.put_with_key(&JsValue::from_str(key), &JsValue::from_str(provider.slug())))
        .await
}

/// Runs one write on the key store; the database is closed on every path (an open connection
/// would block "Forget everything").
async fn write(
    op: impl FnOnce(&web_sys::IdbObjectStore) -> Result<web_sys::IdbRequest, JsValue>,
) -> Result<(), String> {
    let db = open(DB, STORE).await?;
    let result = async {
        let tx = db
            .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
            .map_err(js_error)?;
        let store = tx.object_store(STORE).map_err(js_error)?;
        let request = op(&store).map_err(js_error)?;
        done(&request).await.map(|_| ())
    }
    .await;
    db.close();
    result
}

/// The key kept for `provider`, if the user opted in earlier.
pub async fn load(provider: ProviderChoice) -> Option<String> {
    if !flagged() {
        return None;
    }
    let db = open(DB, STORE).await.ok()?;
    let value = async {
        let tx = db.transaction_with_str(STORE).ok()?;
        let store = tx.object_store(STORE).ok()?;
        let request = store.get(&JsValue::from_str(provider.slug())).ok()?;
        done(&request).await.ok()
    }
    .await;
    // Closed on every path: an open connection would block "Forget everything".
    db.close();
    let value = value?;
    value.as_string().filter(|k| !k.is_empty())
}

/// Drops the key kept for `provider` (the box was unticked).
pub async fn remove(provider: ProviderChoice) -> Result<(), String> {
    if !flagged() {
        return Ok(());
    }
    write(|store| store.delete(&JsValue::from_str(provider.slug()))).await
}
