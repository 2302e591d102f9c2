//! The native host: HTTP with ureq (rustls, webpki roots) on one thread per request in flight,
//! timers on threads, and a directory cache. The async core is polled on the caller's thread
//! (`futures::executor::block_on`); the threads only wake it.

use crate::cache::{CacheError, CacheKey, CacheStore, CachedReply};
use crate::http::{HttpRequest, HttpResponse, Runtime, Transport, TransportError};
use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Sends requests with a shared ureq agent (keep-alive pool), each on its own thread.
#[derive(Clone)]
pub struct UreqTransport {
    agent: ureq::Agent,
}

impl Default for UreqTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl UreqTransport {
    pub fn new() -> Self {
        let config = ureq::Agent::config_builder()
            // 4xx/5xx are answers the retry layer reads, not errors.
            .http_status_as_error(false)
            .user_agent(concat!("ragscope/", env!("CARGO_PKG_VERSION")))
            .build();
        UreqTransport {
            agent: ureq::Agent::new_with_config(config),
        }
    }
}

fn send_blocking(agent: &ureq::Agent, req: HttpRequest) -> Result<HttpResponse, TransportError> {
    let timeout = req.timeout;
    let map_err = |e: ureq::Error| match e {
        ureq::Error::Timeout(_) => TransportError::Timeout(timeout.unwrap_or_default()),
        ureq::Error::Io(e) => TransportError::Connection(e.to_string()),
        ureq::Error::ConnectionFailed | ureq::Error::BodyStalled => {
            TransportError::Connection(e.to_string())
        }
        ureq::Error::Protocol(e) => TransportError::Connection(e.to_string()),
        other => TransportError::Other(other.to_string()),
    };
    // GET (batch status and results) has no body: ureq types it apart from POST.
    let resp = match req.method.as_str() {
        "POST" => {
            let mut builder = agent.post(&req.url);
            for (k, v) in &req.headers {
                builder = builder.header(k.as_str(), v.as_str());
            }
            let builder = builder.config().timeout_global(timeout).build();
            builder.send(req.body.as_str()).map_err(map_err)?
        }
        "GET" => {
            let mut builder = agent.get(&req.url);
            for (k, v) in &req.headers {
                builder = builder.header(k.as_str(), v.as_str());
            }
            let builder = builder.config().timeout_global(timeout).build();
            builder.call().map_err(map_err)?
        }
        other => {
            return Err(TransportError::Other(format!(
                "method {other} is not supported"
            )))
        }
    };
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = resp.into_body().read_to_string().map_err(map_err)?;
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

impl Transport for UreqTransport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        let (tx, rx) = oneshot::channel();
        let agent = self.agent.clone();
        let spawned = std::thread::Builder::new()
            .name("ragscope-judge-http".into())
            .spawn(move || {
                let _ = tx.send(send_blocking(&agent, request));
            });
        Box::pin(async move {
            if let Err(e) = spawned {
                return Err(TransportError::Other(format!("cannot start a thread: {e}")));
            }
            rx.await
                .unwrap_or_else(|_| Err(TransportError::Other("request thread died".into())))
        })
    }
}

/// Wall clock and thread sleeps.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadRuntime;

impl Runtime for ThreadRuntime {
    fn sleep(&self, duration: Duration) -> LocalBoxFuture<'static, ()> {
        let (tx, rx) = oneshot::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("ragscope-judge-timer".into())
            .spawn(move || {
                std::thread::sleep(duration);
                let _ = tx.send(());
            });
        Box::pin(async move {
            if spawned.is_ok() {
                let _ = rx.await;
            }
        })
    }

    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}

/// `$XDG_CACHE_HOME/ragscope/judge` (or the platform's cache dir), when there is one.
pub fn default_cache_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("ragscope").join("judge"))
}

/// One JSON file per reply: `DIR/ab/abcdef....json` (written to a temporary file and renamed, so
/// an interrupted write leaves no half file).
#[derive(Clone, Debug)]
pub struct DirCache {
    dir: PathBuf,
}

impl DirCache {
    /// Creates the directory when missing.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, CacheError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| CacheError(format!("{}: {e}", dir.display())))?;
        Ok(DirCache { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &CacheKey) -> PathBuf {
        let k = key.as_str();
        self.dir
            .join(k.get(..2).unwrap_or("__"))
            .join(format!("{k}.json"))
    }

    fn get_sync(&self, key: &CacheKey) -> Result<Option<CachedReply>, CacheError> {
        let p = self.path(key);
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CacheError(format!("{}: {e}", p.display()))),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| CacheError(format!("{}: {e} (delete the file to refetch)", p.display())))
    }

    fn put_sync(&self, key: &CacheKey, reply: &CachedReply) -> Result<(), CacheError> {
        let p = self.path(key);
        let io = |e: std::io::Error| CacheError(format!("{}: {e}", p.display()));
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_string(reply).map_err(|e| CacheError(e.to_string()))?;
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &p).map_err(io)
    }
}

impl CacheStore for DirCache {
    fn get(&self, key: CacheKey) -> LocalBoxFuture<'_, Result<Option<CachedReply>, CacheError>> {
        let r = self.get_sync(&key);
        Box::pin(async move { r })
    }

    fn put(&self, key: CacheKey, reply: CachedReply) -> LocalBoxFuture<'_, Result<(), CacheError>> {
        let r = self.put_sync(&key, &reply);
        Box::pin(async move { r })
    }
}
