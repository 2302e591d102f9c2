//! The lost-in-the-middle page's results in IndexedDB (database `ragscope-litm`), one record per
//! experiment (model, data, k, settings: `LitmState::cache_key`) holding every (question,
//! position) result and every question's utilities, so a reload resumes where it stopped (the
//! model file is picked again; nothing already computed is computed twice).
//!
//! Only with the user's consent ("Keep results in this browser", `LITM` in crates/platform's
//! list of stores): without it nothing is read or written, and the database is never opened
//! (opening creates it). The database is opened per operation and closed right after, as the
//! judge cache does.

use super::litm_state::Saved;
use crate::ui::persist;
use ragscope_platform::stores::LITM;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{IdbDatabase, IdbRequest, IdbTransactionMode};

const DB: &str = LITM.db;
const STORE: &str = "experiments";

fn err(what: &str, e: JsValue) -> String {
    let detail = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_default();
    format!("IndexedDB {what}: {detail}")
}

async fn done(request: &IdbRequest) -> Result<JsValue, String> {
    ragscope_platform::idb::done(request)
        .await
        .map_err(|f| f.message(err))
}

async fn open() -> Result<IdbDatabase, String> {
    let factory = gloo::utils::window()
        .indexed_db()
        .map_err(|e| err("open", e))?
        .ok_or("this browser has no IndexedDB")?;
    ragscope_platform::idb::open(&factory, DB, STORE)
        .await
        .map_err(|f| f.message(err))
}

/// What is saved for `key` (nothing when there is no record or it no longer parses, or the user
/// did not consent to keeping results).
pub async fn load(key: &str) -> Result<Saved, String> {
    if !persist::consented(LITM) {
        return Ok(Saved::default());
    }
    let db = open().await?;
    let result = async {
        let tx = db.transaction_with_str(STORE).map_err(|e| err("read", e))?;
        let store = tx.object_store(STORE).map_err(|e| err("read", e))?;
        let value = done(
            &store
                .get(&JsValue::from_str(key))
                .map_err(|e| err("read", e))?,
        )
        .await?;
        Ok(value
            .as_string()
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default())
    }
    .await;
    db.close();
    result
}

/// Saves `saved` under `key`, only with the user's consent (else nothing is written).
pub async fn save(key: &str, saved: &Saved) -> Result<(), String> {
    if !persist::consented(LITM) {
        return Ok(());
    }
    let json = serde_json::to_string(saved).map_err(|e| e.to_string())?;
    let db = open().await?;
    let result = async {
        let tx = db
            .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
            .map_err(|e| err("write", e))?;
        let store = tx.object_store(STORE).map_err(|e| err("write", e))?;
        done(
            &store
                .put_with_key(&JsValue::from_str(&json), &JsValue::from_str(key))
                .map_err(|e| err("write", e))?,
        )
        .await
        .map(|_| ())
    }
    .await;
    db.close();
    result
}

/// Deletes every saved experiment (the database itself: clearing it would first create it).
pub async fn forget() -> Result<(), String> {
    LITM.delete(&persist::factory()?).await
}
