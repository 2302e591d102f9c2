//! IndexedDB plumbing shared by the page's databases (ui/persist.rs, ui/judge_keys.rs) and the
//! worker's judge cache (engine/judges/idb_cache.rs): a request awaited as a future, and a
//! database opened with its one object store (created on the first open). Each caller gets
//! its factory (window or worker scope) and words the errors its own way.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbFactory, IdbRequest};

/// Why an IndexedDB step failed.
pub enum IdbFailure {
    /// The request failed: the browser's message.
    Request(String),
    /// A call threw this value; the step is `"open"` (opening) or `"result"` (reading a
    /// request's result).
    Thrown(&'static str, JsValue),
    /// The open request gave something other than a database.
    NoDatabase,
}

impl IdbFailure {
    /// The failure in words; `thrown` words a thrown value for its step.
    pub fn message(self, thrown: impl FnOnce(&'static str, JsValue) -> String) -> String {
        match self {
            IdbFailure::Request(m) => m,
            IdbFailure::Thrown(step, e) => thrown(step, e),
            IdbFailure::NoDatabase => "IndexedDB returned no database".into(),
        }
    }
}

/// Waits for an IndexedDB request and returns its result.
pub async fn done(request: &IdbRequest) -> Result<JsValue, IdbFailure> {
    let promise = Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    JsFuture::from(promise).await.map_err(|_| {
        IdbFailure::Request(
            request
                .error()
                .ok()
                .flatten()
                .map(|e| e.message())
                .unwrap_or_else(|| "IndexedDB request failed".into()),
        )
    })?;
    request
        .result()
        .map_err(|e| IdbFailure::Thrown("result", e))
}

/// Opens database `name` (version 1), creating object store `store` when the database is new.
pub async fn open(
    factory: &IdbFactory,
    name: &str,
    store: &str,
) -> Result<IdbDatabase, IdbFailure> {
    let request = factory
        .open_with_u32(name, 1)
        .map_err(|e| IdbFailure::Thrown("open", e))?;
    let target = request.clone();
    let store = store.to_string();
    let on_upgrade = Closure::once(move |_: web_sys::Event| {
        if let Ok(db) = target.result().and_then(|r| r.dyn_into::<IdbDatabase>()) {
            let _ = db.create_object_store(&store);
        }
    });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    let db = done(&request).await?;
    drop(on_upgrade);
    db.dyn_into::<IdbDatabase>()
        .map_err(|_| IdbFailure::NoDatabase)
}
