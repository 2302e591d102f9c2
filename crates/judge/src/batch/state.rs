//! The record of the running batches of one task on one model, kept with the run (natively a JSON file beside the cache,
//! `<cache-dir>/batches/<run-key>.json`; in the browser, storage next to the cache) so that a
//! restarted process or a reloaded page resumes polling instead of submitting again. It holds ids
//! and request names only: no key, no prompt, no base URL.

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    pub version: u32,
    pub run_key: String,
    pub provider: String,
    pub model: String,
    pub task: String,
    pub batches: Vec<BatchRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// The provider's batch id (`msgbatch_...`, `batch_...`, `batches/...`).
    pub id: String,
    /// Unix milliseconds.
    pub submitted_ms: u64,
    /// The requests in it, in submission order (Gemini answers in that order).
    pub custom_ids: Vec<String>,
    /// The sample index of each request (for the cached reply's record).
    #[serde(default)]
    pub samples: Vec<u32>,
    /// The provider's last state word seen (`submitted` before the first poll).
    pub state: String,
    /// Its replies are in the cache.
    pub imported: bool,
}

/// Where run states are kept.
pub trait StateStore {
    fn load(&self, run_key: &str) -> LocalBoxFuture<'_, Result<Option<RunState>, String>>;
    fn save(&self, run_key: &str, state: &RunState) -> LocalBoxFuture<'_, Result<(), String>>;
}

/// States in memory (tests; the app before it persists them).
#[derive(Debug, Default)]
pub struct MemoryStateStore {
    map: RefCell<HashMap<String, RunState>>,
}

impl MemoryStateStore {
    pub fn new() -> Self {
        Self::default()
    }
}

impl StateStore for MemoryStateStore {
    fn load(&self, run_key: &str) -> LocalBoxFuture<'_, Result<Option<RunState>, String>> {
        let r = self.map.borrow().get(run_key).cloned();
        Box::pin(async move { Ok(r) })
    }
    fn save(&self, run_key: &str, state: &RunState) -> LocalBoxFuture<'_, Result<(), String>> {
        self.map
            .borrow_mut()
            .insert(run_key.to_string(), state.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Parses a saved state (the file's name in errors).
pub fn parse_state(text: &str, name: &str) -> Result<RunState, String> {
    let s: RunState = serde_json::from_str(text)
        .map_err(|e| format!("{name}: line {}, column {}: {e}", e.line(), e.column()))?;
    if s.version != VERSION {
        return Err(format!(
            "{name}: batch state version {} (this ragscope reads {VERSION})",
            s.version
        ));
    }
    Ok(s)
}

/// One JSON file per run under a directory (the CLI: `<cache-dir>/batches`).
#[cfg(feature = "native")]
pub struct DirStateStore {
    dir: std::path::PathBuf,
}

#[cfg(feature = "native")]
impl DirStateStore {
    pub fn new(dir: impl Into<std::path::PathBuf>) -> Self {
        DirStateStore { dir: dir.into() }
    }

    pub fn path(&self, run_key: &str) -> std::path::PathBuf {
        // Run keys are hex; anything else is refused by `valid`.
        self.dir.join(format!("{run_key}.json"))
    }

    fn valid(run_key: &str) -> Result<(), String> {
        if run_key.is_empty() || !run_key.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("not a run key: {run_key:?}"));
        }
        Ok(())
    }

    fn load_sync(&self, run_key: &str) -> Result<Option<RunState>, String> {
        Self::valid(run_key)?;
        let p = self.path(run_key);
        match std::fs::read_to_string(&p) {
            Ok(t) => parse_state(&t, &p.display().to_string()).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", p.display())),
        }
    }

    fn save_sync(&self, run_key: &str, state: &RunState) -> Result<(), String> {
        Self::valid(run_key)?;
        let p = self.path(run_key);
        let io = |e: std::io::Error| format!("{}: {e}", p.display());
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let text = serde_json::to_string_pretty(state).map_err(|e| e.to_string())?;
        // Write then rename: a kill mid-write leaves the previous state, never half a file.
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text + "\n").map_err(io)?;
        std::fs::rename(&tmp, &p).map_err(io)
    }
}

#[cfg(feature = "native")]
impl StateStore for DirStateStore {
    fn load(&self, run_key: &str) -> LocalBoxFuture<'_, Result<Option<RunState>, String>> {
        let r = self.load_sync(run_key);
        Box::pin(async move { r })
    }
    fn save(&self, run_key: &str, state: &RunState) -> LocalBoxFuture<'_, Result<(), String>> {
        let r = self.save_sync(run_key, state);
        Box::pin(async move { r })
    }
}

/// Run states kept in a reply cache, under keys no request hashes to (`batch-state-<run key>`):
/// the browser keeps them in the IndexedDB cache it already has, so a reloaded page finds its
/// batches where it finds its replies (and "forget everything" forgets both).
pub struct CacheStateStore {
    cache: std::rc::Rc<dyn crate::cache::CacheStore>,
}

impl CacheStateStore {
    pub fn new(cache: std::rc::Rc<dyn crate::cache::CacheStore>) -> Self {
        CacheStateStore { cache }
    }

    fn key(run_key: &str) -> crate::cache::CacheKey {
        crate::cache::CacheKey(format!("batch-state-{run_key}"))
    }
}

impl StateStore for CacheStateStore {
    fn load(&self, run_key: &str) -> LocalBoxFuture<'_, Result<Option<RunState>, String>> {
        let key = Self::key(run_key);
        let name = key.0.clone();
        Box::pin(async move {
            match self.cache.get(key).await.map_err(|e| e.to_string())? {
                Some(r) => parse_state(&r.body, &name).map(Some),
                None => Ok(None),
            }
        })
    }

    fn save(&self, run_key: &str, state: &RunState) -> LocalBoxFuture<'_, Result<(), String>> {
        let key = Self::key(run_key);
        let reply = serde_json::to_string(state).map(|body| crate::cache::CachedReply {
            provider: state.provider.clone(),
            model: state.model.clone(),
            task: state.task.clone(),
            template_version: "batch-state".into(),
            sample: 0,
            received_ms: 0,
            body,
        });
        Box::pin(async move {
            let reply = reply.map_err(|e| e.to_string())?;
            self.cache.put(key, reply).await.map_err(|e| e.to_string())
        })
    }
}
