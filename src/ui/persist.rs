//! Opt-in persistence: the loaded files (as the browser's own Blob/File handles, never copied
//! into memory here) kept in this browser's IndexedDB, so a reload brings the same evaluation
//! back. Off unless the user turns it on; "Forget everything" deletes the database.

use js_sys::{Array, Object, Reflect};
use ragscope_platform::idb::{self, IdbFailure};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{IdbDatabase, IdbFactory, IdbRequest, IdbTransactionMode};

const DB: &str = "ragscope";
const STORE: &str = "files";
/// The opt-in flag lives in localStorage so startup knows whether to open the database at all.
const FLAG: &str = "ragscope.remember";

pub fn enabled() -> bool {
    local_storage()
        .and_then(|s| s.get_item(FLAG).ok().flatten())
        .is_some_and(|v| v == "1")
}

pub fn set_enabled(on: bool) {
    if let Some(s) = local_storage() {
        let _ = if on {
            s.set_item(FLAG, "1")
        } else {
            s.remove_item(FLAG)
        };
    }
}

pub(crate) fn local_storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

pub(crate) fn js_error(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| "IndexedDB failed".into())
}

/// Waits for an IndexedDB request and returns its result.
pub(crate) async fn done(request: &IdbRequest) -> Result<JsValue, String> {
    idb::done(request).await.map_err(failure)
}

fn failure(f: IdbFailure) -> String {
    f.message(|_, e| js_error(e))
}

/// This page's IndexedDB.
pub(crate) fn factory() -> Result<IdbFactory, String> {
    Ok(gloo::utils::window()
        .indexed_db()
        .map_err(js_error)?
        .ok_or("this browser has no IndexedDB")?)
}

/// Opens the page's database `name` with its object store `store`.
pub(crate) async fn open(name: &str, store: &str) -> Result<IdbDatabase, String> {
    idb::open(&factory()?, name, store).await.map_err(failure)
}

/// Replaces what is stored with `files` (name, blob), in order.
pub async fn save(files: Vec<(String, web_sys::Blob)>) -> Result<(), String> {
    let db = open(DB, STORE).await?;
    let tx = db
        .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
        .map_err(js_error)?;
    let store = tx.object_store(STORE).map_err(js_error)?;
    done(&store.clear().map_err(js_error)?).await?;
    for (i, (name, blob)) in files.into_iter().enumerate() {
        let record = Object::new();
        Reflect::set(&record, &"name".into(), &name.into()).map_err(js_error)?;
        Reflect::set(&record, &"blob".into(), &blob).map_err(js_error)?;
        let key = JsValue::from_f64(i as f64);
        done(&store.put_with_key(&record, &key).map_err(js_error)?).await?;
    }
    db.close();
    Ok(())
}

/// The stored files, in the order they were saved.
pub async fn load() -> Result<Vec<(String, web_sys::Blob)>, String> {
    let db = open(DB, STORE).await?;
    let tx = db.transaction_with_str(STORE).map_err(js_error)?;
    let store = tx.object_store(STORE).map_err(js_error)?;
    let all = done(&store.get_all().map_err(js_error)?).await?;
    db.close();
    let all: Array = all.dyn_into().map_err(|_| "stored files are not a list")?;
    Ok(all
        .iter()
        .filter_map(|record| {
            let name = Reflect::get(&record, &"name".into()).ok()?.as_string()?;
            let blob = Reflect::get(&record, &"blob".into())
                .ok()?
                .dyn_into::<web_sys::Blob>()
                .ok()?;
            Some((name, blob))
        })
        .collect())
}

/// Deletes the database and the opt-in flag.
pub async fn forget() -> Result<(), String> {
    set_enabled(false);
    let request = factory()?.delete_database(DB).map_err(js_error)?;
    done(&request).await.map(|_| ())
}
