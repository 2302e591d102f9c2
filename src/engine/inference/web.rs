//! The browser side of "compute locally", in the worker: the picked file as a Blob (from the
//! object URL the page made; its bytes are read slice by slice, never uploaded), WebGPU's adapter
//! as the worker sees it, and the compute loop that reads pause/cancel between passages.

use super::open_model;
use crate::blob_source::BlobSource;
use crate::engine::Workspace;
use crate::protocol::compute::{ComputeEvent, ComputeRequest, GpuInfo};
use crate::protocol::{Request, Response};
use futures::{FutureExt, SinkExt, StreamExt};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use yew_agent::reactor::ReactorScope;

type Scope = ReactorScope<Request, Response>;

fn text(v: &JsValue) -> String {
    v.as_string()
        .or_else(|| {
            Reflect::get(v, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Calls `target.method(args…)` and awaits the promise it returns.
async fn call_await(target: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, String> {
    let f: Function = get(target, method)
        .dyn_into()
        .map_err(|_| format!("{method} is not a function here"))?;
    let array = js_sys::Array::new();
    for a in args {
        array.push(a);
    }
    let promise: Promise = f
        .apply(target, &array)
        .map_err(|e| text(&e))?
        .dyn_into()
        .map_err(|_| format!("{method} did not return a promise"))?;
    JsFuture::from(promise).await.map_err(|e| text(&e))
}

fn now_seconds() -> f64 {
    let perf = get(&js_sys::global(), "performance");
    get(&perf, "now")
        .dyn_into::<Function>()
        .ok()
        .and_then(|f| f.call0(&perf).ok())
        .and_then(|v| v.as_f64())
        .unwrap_or_else(js_sys::Date::now)
        / 1000.0
}

/// The Blob behind an object URL made by the page (same origin; no bytes are copied here).
async fn blob_from_url(url: &str) -> Result<web_sys::Blob, String> {
    let global: JsValue = js_sys::global().into();
    let response = call_await(&global, "fetch", &[url.into()]).await?;
    call_await(&response, "blob", &[])
        .await?
        .dyn_into()
        .map_err(|_| "the picked file did not come back as a Blob".to_string())
}

/// WebGPU as this worker sees it: adapter info, limits, shader-f16.
pub async fn probe_gpu() -> GpuInfo {
    let navigator = get(&js_sys::global(), "navigator");
    let gpu = get(&navigator, "gpu");
    if gpu.is_undefined() || gpu.is_null() {
        return GpuInfo {
            reason: "this browser exposes no WebGPU to workers (navigator.gpu is missing)".into(),
            ..Default::default()
        };
    }
    let adapter = match call_await(&gpu, "requestAdapter", &[]).await {
        Ok(a) if !a.is_null() && !a.is_undefined() => a,
        Ok(_) => {
            return GpuInfo {
                reason: "WebGPU exists but offers no adapter (no usable GPU or driver)".into(),
                ..Default::default()
            }
        }
        Err(e) => {
            return GpuInfo {
                reason: format!("requestAdapter failed: {e}"),
                ..Default::default()
            }
        }
    };
    let info = get(&adapter, "info");
    let adapter_text = ["vendor", "architecture", "device", "description"]
        .iter()
        .filter_map(|k| get(&info, k).as_string().filter(|s| !s.is_empty()))
        .collect::<Vec<_>>()
        .join(" / ");
    let features = get(&adapter, "features");
    let shader_f16 = get(&features, "has")
        .dyn_into::<Function>()
        .ok()
        .and_then(|f| f.call1(&features, &"shader-f16".into()).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let limits_js = get(&adapter, "limits");
    let limits = [
        "maxBufferSize",
        "maxStorageBufferBindingSize",
        "maxComputeWorkgroupStorageSize",
        "maxComputeInvocationsPerWorkgroup",
        "maxComputeWorkgroupSizeX",
        "maxStorageBuffersPerShaderStage",
    ]
    .iter()
    .filter_map(|k| get(&limits_js, k).as_f64().map(|v| (k.to_string(), v)))
    .collect();
    GpuInfo {
        available: true,
        reason: String::new(),
        adapter: if adapter_text.is_empty() {
            "(the adapter reports no names)".into()
        } else {
            adapter_text
        },
        shader_f16,
        limits,
    }
}

async fn send(scope: &mut Scope, r: Response) -> bool {
    scope.send(r).await.is_ok()
}

/// Handles one compute request; false when the page has gone (the reactor then stops).
pub async fn drive(scope: &mut Scope, ws: &mut Workspace, request: ComputeRequest) -> bool {
    match request {
        ComputeRequest::OpenModel { url, name } => {
            let start = now_seconds();
            let opened = match blob_from_url(&url).await {
                Ok(blob) => BlobSource::new(blob).and_then(|src| open_model(&src, &name)),
                Err(e) => Err(format!("{name}: cannot read the picked file: {e}")),
            };
            let response = match opened {
                Ok(mut m) => {
                    m.info.load_seconds = now_seconds() - start;
                    ws.set_model(m)
                }
                Err(e) => Response::Compute(ComputeEvent::ModelFailed(e)),
            };
            send(scope, response).await
        }
        ComputeRequest::ProbeGpu => {
            let info = probe_gpu().await;
            send(scope, Response::Compute(ComputeEvent::Gpu(info))).await
        }
        ComputeRequest::Start { source, result } => {
            if let Err(e) = ws.start_compute(source, result) {
                return send(scope, Response::Compute(ComputeEvent::Failed(e))).await;
            }
            run_job(scope, ws).await
        }
        // Outside a running job there is nothing to pause or cancel.
        ComputeRequest::Pause | ComputeRequest::Resume | ComputeRequest::Cancel => true,
    }
}

enum Next {
    Go,
    Stop,
    Gone,
}

/// Progress messages at most this often: each one re-renders the page.
const PROGRESS_EVERY_S: f64 = 0.1;

async fn run_job(scope: &mut Scope, ws: &mut Workspace) -> bool {
    let mut last_progress = f64::NEG_INFINITY;
    loop {
        // Let the worker's event loop deliver queued messages (and post ours), then read them.
        gloo::timers::future::TimeoutFuture::new(0).await;
        loop {
            let paused = ws.job().is_some_and(|j| j.paused);
            let message = if paused {
                Some(scope.next().await)
            } else {
                scope.next().now_or_never()
            };
            let Some(message) = message else { break };
            match on_message(scope, ws, message).await {
                Next::Go => {}
                Next::Stop => return true,
                Next::Gone => return false,
            }
        }
        let Some(job) = ws.job() else { return true };
        if job.is_done() {
            for r in ws.finish_compute() {
                if !send(scope, r).await {
                    return false;
                }
            }
            return true;
        }
        let start = now_seconds();
        let step = ws.compute_step();
        let Some(job) = ws.job() else { return true };
        job.add_seconds(now_seconds() - start);
        let progress = job.progress();
        if let Err(e) = step {
            let _ = ws.cancel_compute();
            return send(scope, Response::Compute(ComputeEvent::Failed(e))).await;
        }
        let now = now_seconds();
        if now - last_progress >= PROGRESS_EVERY_S {
            last_progress = now;
            if !send(scope, Response::Compute(ComputeEvent::Progress(progress))).await {
                return false;
            }
        }
    }
}

async fn on_message(scope: &mut Scope, ws: &mut Workspace, message: Option<Request>) -> Next {
    let Some(request) = message else {
        return Next::Gone;
    };
    let responses = match request {
        Request::Compute(ComputeRequest::Pause | ComputeRequest::Resume) => {
            let pause = matches!(request, Request::Compute(ComputeRequest::Pause));
            match ws.job() {
                Some(job) => {
                    job.paused = pause;
                    vec![Response::Compute(ComputeEvent::Progress(job.progress()))]
                }
                None => vec![],
            }
        }
        Request::Compute(ComputeRequest::Cancel) => {
            let out: Vec<Response> = ws.cancel_compute().into_iter().collect();
            for r in out {
                if !send(scope, r).await {
                    return Next::Gone;
                }
            }
            return Next::Stop;
        }
        Request::Compute(ComputeRequest::ProbeGpu) => {
            vec![Response::Compute(ComputeEvent::Gpu(probe_gpu().await))]
        }
        Request::Compute(ComputeRequest::OpenModel { name, .. }) => {
            vec![Response::Compute(ComputeEvent::ModelFailed(format!(
                "{name}: utilities are being computed; cancel first to open another model"
            )))]
        }
        Request::Compute(ComputeRequest::Start { .. }) => vec![Response::Compute(
            ComputeEvent::Failed("utilities are already being computed".into()),
        )],
        // Files keep loading and evaluations keep running between passages.
        other => ws.handle(other),
    };
    for r in responses {
        if !send(scope, r).await {
            return Next::Gone;
        }
    }
    Next::Go
}
