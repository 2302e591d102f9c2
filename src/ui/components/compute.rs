//! "Compute locally": pick a GGUF model (read in the worker from the file itself, never
//! uploaded), see what it is and what WebGPU offers, compute passage utilities for a loaded UDCG
//! JSON file with progress, pause and cancel, and download them.

use crate::protocol::compute::{ComputeRequest, GpuInfo, ModelInfo};
use crate::protocol::FileId;
use crate::ui::compute_state::ComputeState;
use crate::ui::download::save_text;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: ComputeState,
    /// Loaded UDCG JSON files, (id, name).
    pub udcg_files: Vec<(FileId, String)>,
    pub on_request: Callback<ComputeRequest>,
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn clock(seconds: f64) -> String {
    let s = seconds.round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

fn model_view(m: &ModelInfo) -> Html {
    html! {
        <div class="compute-model" id="compute-model">
            <p>
                <strong>{ &m.name }</strong>
                { format!(" — {} · {} · {:.0} M parameters · {} layers · d {} · vocabulary {} · context {} · loaded in {:.1} s",
                    m.architecture, mib(m.file_bytes), m.parameters as f64 / 1e6, m.layers,
                    m.embedding, m.vocabulary, m.context_length, m.load_seconds) }
            </p>
            <table class="quant-mix" aria-label="Tensor types">
                <thead><tr><th>{ "type" }</th><th>{ "tensors" }</th><th>{ "size" }</th></tr></thead>
                <tbody>
                    { for m.quant_mix.iter().map(|(t, n, b)| html! {
                        <tr data-type={t.clone()}><td>{ t }</td><td>{ n }</td><td>{ mib(*b) }</td></tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}

fn gpu_view(g: Option<&GpuInfo>) -> Html {
    let status = match g {
        None => html! { <span>{ "checking WebGPU…" }</span> },
        Some(g) if g.available => html! {
            <span>
                { format!("WebGPU adapter: {} · shader-f16: {}", g.adapter, if g.shader_f16 { "yes" } else { "no" }) }
                <ul class="gpu-limits">
                    { for g.limits.iter().map(|(k, v)| html! { <li>{ format!("{k}: {v}") }</li> }) }
                </ul>
            </span>
        },
        Some(g) => html! { <span>{ format!("WebGPU unavailable: {}", g.reason) }</span> },
    };
    html! {
        <div class="compute-gpu" id="compute-gpu" data-webgpu={g.map(|g| g.available.to_string()).unwrap_or_default()}>
            { status }
            <p class="note">
                { "WebGPU backend: not yet in this build (the GPU kernels are being added); utilities are computed on the CPU in the worker, single-threaded." }
            </p>
        </div>
    }
}

#[function_component(ComputePanel)]
pub fn compute_panel(props: &Props) -> Html {
    let chosen = use_state(|| None::<FileId>);
    {
        let on_request = props.on_request.clone();
        use_effect_with((), move |_| on_request.emit(ComputeRequest::ProbeGpu));
    }
    let source = chosen
        .filter(|id| props.udcg_files.iter().any(|(f, _)| f == id))
        .or_else(|| props.udcg_files.first().map(|(id, _)| *id));
    let s = &props.state;

    let on_pick = {
        let on_request = props.on_request.clone();
        Callback::from(move |e: Event| {
            let Some(input) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            else {
                return;
            };
            let Some(file) = input.files().and_then(|l| l.get(0)) else {
                return;
            };
            // An object URL: the worker reads the file through it, slice by slice.
            if let Ok(url) = web_sys::Url::create_object_url_with_blob(&file) {
                on_request.emit(ComputeRequest::OpenModel {
                    url,
                    name: file.name(),
                });
            }
        })
    };
    let on_source = {
        let chosen = chosen.clone();
        Callback::from(move |e: Event| {
            if let Some(sel) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            {
                chosen.set(sel.value().parse().ok());
            }
        })
    };
    let send = |r: ComputeRequest| {
        let on_request = props.on_request.clone();
        Callback::from(move |_: MouseEvent| on_request.emit(r.clone()))
    };
    let can_start = s.model.is_some() && source.is_some() && s.running.is_none();

    let progress = s.running.map(|p| {
        let eta = p.eta_seconds().map(clock).unwrap_or_else(|| "—".into());
        html! {
            <div class="compute-progress" id="compute-progress" data-done={p.done.to_string()} data-total={p.total.to_string()}>
                <progress max={p.total.max(1).to_string()} value={p.done.to_string()} />
                <span>{ format!("{} / {} passages · {:.0} tokens/s · ETA {}{}", p.done, p.total,
                    p.tokens_per_s(), eta, if p.paused { " · paused" } else { "" }) }</span>
                if p.paused {
                    <button id="compute-resume" onclick={send(ComputeRequest::Resume)}>{ "Resume" }</button>
                } else {
                    <button id="compute-pause" onclick={send(ComputeRequest::Pause)}>{ "Pause" }</button>
                }
                <button id="compute-cancel" class="danger" onclick={send(ComputeRequest::Cancel)}>{ "Cancel" }</button>
            </div>
        }
    });
    let finished = s.finished.as_ref().map(|(name, tsv, n, secs)| {
        let (name_c, tsv_c) = (name.clone(), tsv.clone());
        html! {
            <p class="compute-done" id="compute-done" data-file={name.clone()}>
                { format!("{n} passages computed in {secs:.1} s; loaded as {name} (see the RAG tab). ") }
                <button id="compute-download"
                    onclick={Callback::from(move |_| save_text(&name_c, "text/tab-separated-values", &tsv_c))}>
                    { "Download utilities (TSV)" }
                </button>
            </p>
        }
    });

    html! {
        <details class="compute" id="compute" open={s.model.is_some() || s.opening.is_some()}>
            <summary>{ "Compute utilities locally (GGUF model)" }</summary>
            <p class="note">
                { "Pick a GGUF model (llama, qwen2, smollm or mistral architecture; F32, F16, BF16, Q4_0…Q8_0, Q4_K, Q5_K, Q6_K). \
                   The file is read by this page's worker, slice by slice: it is never uploaded. The utilities \
                   u = R·(1 − p(NO-RESPONSE)) use the paper's prompt through the model's own chat template." }
            </p>
            <label>
                { "Model file: " }
                <input type="file" id="model-file" accept=".gguf" onchange={on_pick} />
            </label>
            if let Some(name) = &s.opening {
                <p class="compute-opening">{ format!("Opening {name}…") }</p>
            }
            if let Some(m) = &s.model { { model_view(m) } }
            { gpu_view(s.gpu.as_ref()) }
            <div class="compute-start">
                <label>
                    { "Passages from: " }
                    <select id="compute-source" onchange={on_source} disabled={props.udcg_files.is_empty()}>
                        { for props.udcg_files.iter().map(|(id, name)| html! {
                            <option value={id.to_string()} selected={Some(*id) == source}>{ name }</option>
                        }) }
                    </select>
                </label>
                if props.udcg_files.is_empty() {
                    <span class="note">{ " load a UDCG JSON file (examples with question and passages); run + passages files: not yet in the app (use `ragscope utility`)" }</span>
                }
                <button id="compute-start" disabled={!can_start}
                    onclick={{
                        let on_request = props.on_request.clone();
                        Callback::from(move |_: MouseEvent| {
                            if let Some(source) = source {
                                on_request.emit(ComputeRequest::Start { source, result: 0 });
                            }
                        })
                    }}>
                    { "Compute utilities" }
                </button>
            </div>
            { for progress }
            { for finished }
        </details>
    }
}
