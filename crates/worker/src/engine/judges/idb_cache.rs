//! crates/judge's [`CacheStore`] on IndexedDB in the worker, so a reload resumes a job without
//! buying a reply twice; used only when the user ticked "Keep replies in this browser"
//! (`JudgeSpec::keep_replies`; without it the worker's tab-long memory cache serves instead). Records are the judge layer's `CachedReply` (raw reply bodies, no
//! headers, no base URL, never an API key) as JSON, under the hex cache key.
//!
//! The database is opened for each operation and closed right after: "Forget everything"
//! deletes it from the page, and an open connection here would block that.

use futures::future::LocalBoxFuture;
use js_sys::Promise;
use ragscope_judge::cache::CacheError;
use ragscope_judge::{CacheKey, CacheStore, CachedReply};
use ragscope_platform::idb::{self, IdbFailure};
use ragscope_platform::stores::JUDGE_CACHE;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbRequest, IdbTransactionMode, WorkerGlobalScope};

const STORE: &str = "replies";

#[derive(Debug, Default, Clone, Copy)]
pub struct IdbCache;

fn err(what: &str, e: JsValue) -> CacheError {
    let detail = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_default();
    CacheError(format!("IndexedDB {what}: {detail}"))
}

async fn done(request: &IdbRequest) -> Result<JsValue, CacheError> {
    idb::done(request).await.map_err(failure)
}

fn failure(f: IdbFailure) -> CacheError {
    CacheError(f.message(|step, e| err(step, e).0))
}

async fn open() -> Result<IdbDatabase, CacheError> {
    let scope: WorkerGlobalScope = js_sys::global()
        .dyn_into()
        .map_err(|_| CacheError("the judge cache lives in the worker".into()))?;
    let factory = scope
        .indexed_db()
        .map_err(|e| err("open", e))?
        .ok_or_else(|| CacheError("this browser has no IndexedDB".into()))?;
    idb::open(&factory, JUDGE_CACHE.db, STORE)
        .await
        .map_err(failure)
}

async fn get(key: CacheKey) -> Result<Option<CachedReply>, CacheError> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction_with_str(STORE).map_err(|e| err("read", e))?;
        let store = tx.object_store(STORE).map_err(|e| err("read", e))?;
        let value = done(
            &store
                .get(&JsValue::from_str(key.as_str()))
                .map_err(|e| err("read", e))?,
        )
        .await?;
        match value.as_string() {
            None => Ok(None),
            // A record that no longer parses is a miss: the reply is bought again, not trusted.
            Some(json) => Ok(serde_json::from_str(&json).ok()),
        }
    }
    .await;
    db.close();
    result
}

async fn put(key: CacheKey, reply: CachedReply) -> Result<(), CacheError> {
    let json = serde_json::to_string(&reply).map_err(|e| CacheError(e.to_string()))?;
    let db = open().await?;
    let result = async {
        let tx = db
            .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
            .map_err(|e| err("write", e))?;
        let store = tx.object_store(STORE).map_err(|e| err("write", e))?;
        done(
            &store
                .put_with_key(&JsValue::from_str(&json), &JsValue::from_str(key.as_str()))
                .map_err(|e| err("write", e))?,
        )
        .await
        .map(|_| ())
    }
    .await;
    db.close();
    result
}

impl CacheStore for IdbCache {
    fn get(&self, key: CacheKey) -> LocalBoxFuture<'_, Result<Option<CachedReply>, CacheError>> {
        Box::pin(get(key))
    }

    fn put(&self, key: CacheKey, reply: CachedReply) -> LocalBoxFuture<'_, Result<(), CacheError>> {
        Box::pin(put(key, reply))
    }
}

/// The batch records kept in the cache (`batch-state-<run key>`, see crates/judge
/// `CacheStateStore`) as (key, the record's JSON), for the panel after a reload.
pub async fn batch_states() -> Result<Vec<(String, String)>, CacheError> {
    // Looking must not create the database (nothing is stored before a job runs).
    if !cache_exists().await {
        return Ok(Vec::new());
    }
    let db = open().await?;
    let result = async {
        let tx = db.transaction_with_str(STORE).map_err(|e| err("read", e))?;
        let store = tx.object_store(STORE).map_err(|e| err("read", e))?;
        let keys = done(&store.get_all_keys().map_err(|e| err("read", e))?).await?;
        let keys: Vec<String> = js_sys::Array::from(&keys)
            .iter()
            .filter_map(|k| k.as_string())
            .filter(|k| k.starts_with("batch-state-"))
            .collect();
        let mut out = Vec::new();
        for key in keys {
            let value = done(
                &store
                    .get(&JsValue::from_str(&key))
                    .map_err(|e| err("read", e))?,
            )
            .await?;
            if let Some(reply) = value
                .as_string()
                .and_then(|json| serde_json::from_str::<CachedReply>(&json).ok())
            {
                out.push((key, reply.body));
            }
        }
        Ok(out)
    }
    .await;
    db.close();
    result
}

/// Whether the cache database exists, where the browser can say (`indexedDB.databases()`, not in
/// web-sys's stable API, hence the reflection); `true` where it cannot.
async fn cache_exists() -> bool {
    let Ok(Some(factory)) = js_sys::global()
        .dyn_into::<WorkerGlobalScope>()
        .map(|s| s.indexed_db().ok().flatten())
    else {
        return true;
    };
    let Some(f) = js_sys::Reflect::get(&factory, &JsValue::from_str("databases"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
    else {
        return true;
    };
    let Ok(promise) = f.call0(&factory).and_then(|p| p.dyn_into::<Promise>()) else {
        return true;
    };
    match JsFuture::from(promise).await {
        Ok(list) => js_sys::Array::from(&list).iter().any(|d| {
            js_sys::Reflect::get(&d, &JsValue::from_str("name"))
                .ok()
                .and_then(|n| n.as_string())
                .is_some_and(|n| n == JUDGE_CACHE.db)
        }),
        Err(_) => true,
    }
}
