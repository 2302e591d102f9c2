//! The two things the judge core needs from its host: a [`Transport`] that sends one HTTP request,
//! and a [`Runtime`] that sleeps and tells the time. Both return `LocalBoxFuture`s so that browser
//! implementations (not `Send`) fit; the core drives everything on one thread.

use futures::future::LocalBoxFuture;
use std::fmt;
use std::time::Duration;

/// Header names whose values are secrets: redacted by `Debug` and never stored.
pub const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];

/// One HTTP request as built by a provider. `timeout` bounds the whole exchange; a transport must
/// honour it and answer [`TransportError::Timeout`] when it runs out.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub timeout: Option<Duration>,
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let secret = SECRET_HEADERS.iter().any(|s| k.eq_ignore_ascii_case(s));
                (k.as_str(), if secret { "<redacted>" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A complete HTTP response (any status: 4xx and 5xx are responses, not transport errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A request that got no HTTP response.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// `HttpRequest::timeout` ran out (retried).
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// Connection refused, reset or closed before a complete response (retried).
    #[error("connection error: {0}")]
    Connection(String),
    /// Anything else (bad URL, TLS failure, blocked by CORS/CSP in a browser): not retried.
    #[error("{0}")]
    Other(String),
}

impl TransportError {
    /// Whether a retry may help.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            TransportError::Timeout(_) | TransportError::Connection(_)
        )
    }
}

/// Sends HTTP requests. Natively: `native::UreqTransport`; in the browser: `fetch` in the worker.
pub trait Transport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>>;
}

/// Timers for backoff and rate limits. Tests use a fake one that records sleeps and returns at
/// once, so retry delays are asserted without waiting.
pub trait Runtime {
    /// Resolves after `duration`.
    fn sleep(&self, duration: Duration) -> LocalBoxFuture<'static, ()>;
    /// Milliseconds since the Unix epoch (wall clock: `retry-after` may be an HTTP date).
    fn now_ms(&self) -> u64;
}
