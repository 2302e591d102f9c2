//! crates/judge's [`Transport`] and [`Runtime`] in the browser worker: `fetch` from the worker's
//! global scope (never the window: calls do not run on the UI thread) and timers.

use futures::future::{self, Either, LocalBoxFuture};
use ragscope_judge::{HttpRequest, HttpResponse, Runtime, Transport, TransportError};
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReferrerPolicy, Request, RequestCache, RequestCredentials,
    RequestInit, RequestMode, WorkerGlobalScope,
};

/// Sends each request with the worker's `fetch`: CORS mode, no cookies, no referrer, no HTTP
/// cache (replies are cached by the judge layer, keyed without the API key).
#[derive(Debug, Default, Clone, Copy)]
pub struct FetchTransport;

fn js_text(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into())
}

fn other(e: JsValue) -> TransportError {
    TransportError::Other(js_text(&e))
}

async fn exchange(
    request: &HttpRequest,
    controller: &AbortController,
) -> Result<HttpResponse, TransportError> {
    let init = RequestInit::new();
    init.set_method(&request.method);
    init.set_mode(RequestMode::Cors);
    init.set_credentials(RequestCredentials::Omit);
    init.set_cache(RequestCache::NoStore);
    init.set_referrer_policy(ReferrerPolicy::NoReferrer);
    init.set_signal(Some(&controller.signal()));
    let headers = Headers::new().map_err(other)?;
    for (name, value) in &request.headers {
        headers.set(name, value).map_err(other)?;
    }
    init.set_headers(&headers);
    if !request.body.is_empty() {
        init.set_body(&JsValue::from_str(&request.body));
    }
    let req = Request::new_with_str_and_init(&request.url, &init).map_err(other)?;
    let scope: WorkerGlobalScope = js_sys::global()
        .dyn_into()
        .map_err(|_| TransportError::Other("judges run only in the worker".into()))?;
    let response: web_sys::Response = JsFuture::from(scope.fetch_with_request(&req))
        .await
        // A rejected fetch is a network failure (refused, reset, DNS) or a CORS/CSP refusal;
        // the browser does not say which. Treated as a connection error (retried, bounded);
        // the Judges panel checks the page's CSP before starting, so a refusal is unlikely.
        .map_err(|e| TransportError::Connection(js_text(&e)))?
        .dyn_into()
        .map_err(|_| TransportError::Other("fetch returned no Response".into()))?;
    let mut out_headers = Vec::new();
    if let Ok(Some(iter)) = js_sys::try_iter(&response.headers()) {
        for entry in iter.flatten() {
            let pair = js_sys::Array::from(&entry);
            if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                out_headers.push((k.to_ascii_lowercase(), v));
            }
        }
    }
    let body = JsFuture::from(response.text().map_err(other)?)
        .await
        .map_err(|e| TransportError::Connection(format!("reading the reply: {}", js_text(&e))))?
        .as_string()
        .unwrap_or_default();
    Ok(HttpResponse {
        status: response.status(),
        headers: out_headers,
        body,
    })
}

impl Transport for FetchTransport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            let controller = AbortController::new().map_err(other)?;
            let work = Box::pin(exchange(&request, &controller));
            match request.timeout {
                None => work.await,
                Some(limit) => {
                    let ms = limit.as_millis().min(u32::MAX as u128) as u32;
                    let timer = gloo::timers::future::TimeoutFuture::new(ms);
                    match future::select(work, timer).await {
                        Either::Left((result, _)) => result,
                        Either::Right(_) => {
                            // Frees the connection; the pending exchange is dropped with it.
                            controller.abort();
                            Err(TransportError::Timeout(limit))
                        }
                    }
                }
            }
        })
    }
}

/// Sleeps with the worker's `setTimeout`; the wall clock is `Date.now()`.
#[derive(Debug, Default, Clone, Copy)]
pub struct WorkerRuntime;

impl Runtime for WorkerRuntime {
    fn sleep(&self, duration: Duration) -> LocalBoxFuture<'static, ()> {
        let ms = duration.as_millis().min(u32::MAX as u128) as u32;
        Box::pin(gloo::timers::future::TimeoutFuture::new(ms))
    }

    fn now_ms(&self) -> u64 {
        js_sys::Date::now() as u64
    }
}
