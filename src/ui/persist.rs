//! Opt-in persistence: the loaded files (as the browser's own Blob/File handles, never copied
//! into memory here) kept in this browser's IndexedDB, so a reload brings the same evaluation
//! back. Off unless the user turns it on; "Forget everything" deletes the database.

use js_sys::{Array, Object, Reflect};
use ragscope_platform::idb::{self, IdbFailure};
use ragscope_platform::stores::{forget_all, Store, FILES};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{IdbDatabase, IdbFactory, IdbRequest, IdbTransactionMode};

const DB: &str = FILES.db;
const STORE: &str = "files";

/// Whether the user ticked "Remember my files here" (the flag lives in localStorage so startup
/// knows whether to open the database at all).
pub fn enabled() -> bool {
    FILES.consented(local_storage().as_ref())
}

pub fn set_enabled(on: bool) {
    FILES.set_consent(local_storage().as_ref(), on);
}

/// Whether the user consented to keeping `store`.
pub fn consented(store: Store) -> bool {
    store.consented(local_storage().as_ref())
}

/// Records a consent given by a tick; withdrawing it deletes what the store kept.
pub async fn set_consent(store: Store, on: bool) -> Result<(), String> {
    store.set_consent(local_storage().as_ref(), on);
    if on {
        Ok(())
    } else {
        store.delete(&factory()?).await
    }
}

/// "Forget everything": every database and flag in [`ragscope_platform::stores::STORES`].
pub async fn forget_everything() -> Result<(), String> {
    forget_all(&factory()?, local_storage().as_ref()).await
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

/// Deletes the database and the opt-in flag ("Remember my files here" unticked).
pub async fn forget() -> Result<(), String> {
    set_consent(FILES, false).await
}
