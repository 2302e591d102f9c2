//! The browser side of "compute locally", in the worker: the picked file as a Blob (offered by
//! the page on a channel; its bytes are read slice by slice, never uploaded), WebGPU's adapter
//! as the worker sees it, and the compute loop that reads pause/cancel between steps and runs
//! each step on WebGPU (gpu.rs) or on the CPU.

use super::gpu::{self, Outcome};
use super::job_messages::{read_messages, Next, RunningJob};
use super::{open_model, CPU_LABEL};
use crate::blob_source::BlobSource;
use crate::engine::Workspace;
use futures::SinkExt;
use js_sys::{Function, Promise, Reflect};
use ragscope_protocol::compute::{
    BackendChoice, BackendInfo, ComputeEvent, ComputeRequest, GpuInfo, MemoryReport,
};
use ragscope_protocol::{Request, Response};
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

pub(super) fn now_seconds() -> f64 {
    let perf = get(&js_sys::global(), "performance");
    get(&perf, "now")
        .dyn_into::<Function>()
        .ok()
        .and_then(|f| f.call0(&perf).ok())
        .and_then(|v| v.as_f64())
        .unwrap_or_else(js_sys::Date::now)
        / 1000.0
}

/// The Blob the page offers on a channel (`channel:NAME`, crates/platform/src/blob_channel.rs:
/// nothing is copied), or the one behind an object URL made by the page (same origin; Chromium
/// copies the whole file into a new Blob to answer the fetch).
pub(crate) async fn blob_from_url(url: &str) -> Result<web_sys::Blob, String> {
    Ok(blob_from_url_noting(url).await?.0)
}

/// [`blob_from_url`], and how the Blob came (for a load's timings): posted at once or asked
/// for on a channel (crates/platform/src/blob_channel.rs), or an object URL.
pub(crate) async fn blob_from_url_noting(
    url: &str,
) -> Result<(web_sys::Blob, &'static str), String> {
    if let Some(channel) = url.strip_prefix(ragscope_platform::blob_channel::PREFIX) {
        return ragscope_platform::blob_channel::receive(channel).await;
    }
    let global: JsValue = js_sys::global().into();
    let response = call_await(&global, "fetch", &[url.into()]).await?;
    let blob = call_await(&response, "blob", &[])
        .await?
        .dyn_into()
        .map_err(|_| "the picked file did not come back as a Blob".to_string())?;
    Ok((blob, "an object URL"))
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

pub(super) async fn send(scope: &mut Scope, r: Response) -> bool {
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
        ComputeRequest::Start {
            source,
            result,
            backend,
            cpu_fallback,
        } => {
            if let Err(e) = ws.start_compute(&source, result, cpu_fallback) {
                return send(scope, Response::Compute(ComputeEvent::Failed(e))).await;
            }
            let info = choose_backend(ws, backend).await;
            if let Some(job) = ws.job() {
                job.use_backend(&info.label, info.gpu);
            }
            if !send(scope, Response::Compute(ComputeEvent::Backend(info))).await {
                return false;
            }
            run_job(scope, ws).await
        }
        ComputeRequest::Answer(start) => super::answering_web::drive(scope, ws, start).await,
        ComputeRequest::LoseGpu => {
            if let Some(local) = &ws.local {
                gpu::lose_device(local);
            }
            true
        }
        // Outside a running job there is nothing to pause or cancel.
        ComputeRequest::Pause | ComputeRequest::Resume | ComputeRequest::Cancel => true,
    }
}

/// The backend a run starts on, and why: WebGPU when the worker gets a device and the model's
/// weights fit it (uploaded once per model, reused by later runs), else the CPU.
pub(super) async fn choose_backend(ws: &mut Workspace, choice: BackendChoice) -> BackendInfo {
    let cpu = |reason: String| BackendInfo {
        gpu: false,
        label: CPU_LABEL.into(),
        reason,
    };
    if choice == BackendChoice::Cpu {
        return cpu("the CPU was chosen in the panel".into());
    }
    let Some(local) = ws.local.as_mut() else {
        return cpu("no model".into());
    };
    let reused = matches!(local.gpu, gpu::GpuSlot::Ready(_));
    if choice == BackendChoice::Auto {
        // Probe before uploading anything: a software adapter is passed by.
        match ragscope_infer::gpu::GpuContext::probe().await {
            Ok(s) if s.is_cpu() => {
                return cpu(
                    "the worker's only WebGPU adapter is a CPU emulation of a GPU (software), slower than the CPU engine; choose \"WebGPU (any adapter)\" to use it anyway".into(),
                )
            }
            Ok(_) => {}
            Err(e) => return cpu(format!("WebGPU cannot be used: {}", gpu::reason(&e))),
        }
    }
    match gpu::ensure(local).await {
        Ok(label) => BackendInfo {
            gpu: true,
            label,
            reason: format!(
                "WebGPU is available in this worker; the model's weights {} on the GPU ({:.1} MiB, quantized as in the file)",
                if reused { "are still" } else { "were uploaded once" },
                gpu::weight_bytes(local) as f64 / (1024.0 * 1024.0)
            ),
        },
        Err(why) => cpu(format!("WebGPU cannot be used: {why}")),
    }
}

/// The worker's wasm memory in bytes: it only grows, so this is the peak so far.
fn wasm_memory_bytes() -> u64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0, |b| b.byte_length() as u64)
}

fn memory(ws: &Workspace) -> MemoryReport {
    MemoryReport {
        wasm_bytes: wasm_memory_bytes(),
        gpu_bytes: ws.local.as_ref().map_or(0, gpu::device_bytes),
    }
}

/// One step on the job's backend: Ok(true) to go on, Ok(false) when the page has gone, Err
/// when the run failed (already reported).
async fn step(scope: &mut Scope, ws: &mut Workspace) -> Result<bool, String> {
    if !ws.job.as_ref().is_some_and(|j| j.on_gpu) {
        return ws.compute_step().map(|_| true);
    }
    let info = match gpu::step_with_recovery(ws).await {
        Outcome::Done(_) => return Ok(true),
        Outcome::Failed(e) => return Err(e),
        Outcome::Recovered(_, info) | Outcome::ToCpu(info) | Outcome::Paused(info) => info,
    };
    Ok(send(scope, Response::Compute(ComputeEvent::Backend(info))).await)
}

/// Progress messages at most this often: each one re-renders the page.
const PROGRESS_EVERY_S: f64 = 0.1;

/// The utilities job, as the messages between its steps see it.
struct Utilities;

impl RunningJob for Utilities {
    const WHAT: &'static str = "utilities";

    fn paused(ws: &mut Workspace) -> bool {
        ws.job().is_some_and(|j| j.paused)
    }

    fn set_paused(ws: &mut Workspace, pause: bool) -> Option<Response> {
        let job = ws.job()?;
        job.paused = pause;
        Some(Response::Compute(ComputeEvent::Progress(job.progress())))
    }

    fn cancel(ws: &mut Workspace) -> Option<Response> {
        ws.cancel_compute()
    }

    fn refuse(_: &ComputeRequest) -> Response {
        Response::Compute(ComputeEvent::Failed(
            "utilities are already being computed".into(),
        ))
    }
}

async fn run_job(scope: &mut Scope, ws: &mut Workspace) -> bool {
    let mut last_progress = f64::NEG_INFINITY;
    loop {
        // Let the worker's event loop deliver queued messages (and post ours), then read them.
        gloo::timers::future::TimeoutFuture::new(0).await;
        match read_messages::<Utilities>(scope, ws).await {
            Next::Go => {}
            Next::Stop => return true,
            Next::Gone => return false,
        }
        let Some(job) = ws.job() else { return true };
        if job.is_done() {
            let memory = memory(ws);
            for r in ws.finish_compute(memory) {
                if !send(scope, r).await {
                    return false;
                }
            }
            return true;
        }
        let start = now_seconds();
        let stepped = step(scope, ws).await;
        let Some(job) = ws.job() else { return true };
        job.add_seconds(now_seconds() - start);
        let progress = job.progress();
        match stepped {
            Ok(true) => {}
            Ok(false) => return false,
            Err(e) => {
                let _ = ws.cancel_compute();
                return send(scope, Response::Compute(ComputeEvent::Failed(e))).await;
            }
        }
        let now = now_seconds();
        // A pause (asked for, or after a GPU failure) is shown at once.
        if progress.paused || now - last_progress >= PROGRESS_EVERY_S {
            last_progress = now;
            if !send(scope, Response::Compute(ComputeEvent::Progress(progress))).await {
                return false;
            }
        }
    }
}
