//! "Compute locally": pick a GGUF model (read in the worker from the file itself, never
//! uploaded), see what it is and what WebGPU offers, compute passage utilities for a loaded UDCG
//! JSON file or a loaded run's top k (with topics, passages and qrels) on WebGPU or the CPU,
//! with progress, pause and cancel, see which backend ran and why, and download them.

use crate::ui::components::form_inputs::{on_checked, on_count, on_model_file, on_select};
use crate::ui::compute_state::{ComputeState, Finished};
use crate::ui::download::save_text;
use ragscope_protocol::compute::{
    BackendChoice, BackendInfo, ComputeRequest, ComputeSource, GpuInfo, ModelInfo,
};
use ragscope_protocol::FileId;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: ComputeState,
    /// Loaded UDCG JSON files, (id, name).
    pub udcg_files: Vec<(FileId, String)>,
    /// Loaded runs, (id, name): their top k with the loaded topics, passages and qrels.
    #[prop_or_default]
    pub runs: Vec<(FileId, String)>,
    /// Loaded context-set files, (id, name): contexts to answer.
    #[prop_or_default]
    pub contexts_files: Vec<(FileId, String)>,
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
        Some(g) => {
            html! { <span>{ format!("WebGPU unavailable: {} — utilities and answers are computed on the CPU in the worker.", g.reason) }</span> }
        }
    };
    html! {
        <div class="compute-gpu" id="compute-gpu" data-webgpu={g.map(|g| g.available.to_string()).unwrap_or_default()}>
            { status }
        </div>
    }
}

fn backend_view(b: &BackendInfo) -> Html {
    html! {
        <p class="compute-backend" id="compute-backend" data-backend={if b.gpu { "gpu" } else { "cpu" }}>
            <strong>{ format!("Computing on {}", b.label) }</strong>
            { format!(" — {}", b.reason) }
        </p>
    }
}

fn finished_view(f: &Finished) -> Html {
    let (name_c, tsv_c) = (f.name.clone(), f.tsv.clone());
    html! {
        <div class="compute-done" id="compute-done" data-file={f.name.clone()}>
            <p>
                { format!("{} passages computed in {:.1} s on {}; loaded as {} (see the RAG tab). ",
                    f.passages, f.seconds, f.backend, f.name) }
                <button id="compute-download"
                    onclick={Callback::from(move |_| save_text(&name_c, "text/tab-separated-values", &tsv_c))}>
                    { "Download utilities (TSV)" }
                </button>
            </p>
            <p class="note" id="compute-memory" data-wasm-bytes={f.memory.wasm_bytes.to_string()}
                data-gpu-bytes={f.memory.gpu_bytes.to_string()}>
                { format!("Peak memory: worker wasm memory {}; GPU buffers {}.", mib(f.memory.wasm_bytes),
                    if f.memory.gpu_bytes > 0 { format!("{} (weights, quantized, + batch workspace)", mib(f.memory.gpu_bytes)) }
                    else { "none (CPU)".to_string() }) }
            </p>
        </div>
    }
}

/// The value of a source option: "udcg:<id>" or "run:<id>".
fn parse_source(value: &str, k: usize) -> Option<ComputeSource> {
    let (kind, id) = value.split_once(':')?;
    let id: FileId = id.parse().ok()?;
    match kind {
        "udcg" => Some(ComputeSource::Udcg(id)),
        "run" => Some(ComputeSource::Run { run: id, k }),
        _ => None,
    }
}

#[function_component(ComputePanel)]
pub fn compute_panel(props: &Props) -> Html {
    let chosen = use_state(|| None::<String>);
    let k = use_state(|| 5usize);
    let backend = use_state(BackendChoice::default);
    let cpu_fallback = use_state(|| true);
    {
        let on_request = props.on_request.clone();
        use_effect_with((), move |_| on_request.emit(ComputeRequest::ProbeGpu));
    }
    let options: Vec<(String, String)> = props
        .udcg_files
        .iter()
        .map(|(id, name)| (format!("udcg:{id}"), format!("{name} (UDCG JSON)")))
        .chain(props.runs.iter().map(|(id, name)| {
            (
                format!("run:{id}"),
                format!("{name} (run: top k with topics, passages, qrels)"),
            )
        }))
        .collect();
    let value = (*chosen)
        .clone()
        .filter(|v| options.iter().any(|(o, _)| o == v))
        .or_else(|| options.first().map(|(v, _)| v.clone()));
    let source = value.as_deref().and_then(|v| parse_source(v, *k));
    let is_run = matches!(source, Some(ComputeSource::Run { .. }));
    let s = &props.state;

    let on_pick = on_model_file(props.on_request.clone());
    let on_source = {
        let chosen = chosen.clone();
        on_select(move |v| chosen.set(Some(v)))
    };
    let on_k = {
        let k = k.clone();
        on_count(move |v| k.set(v))
    };
    let on_backend = {
        let backend = backend.clone();
        on_select(move |v| {
            backend.set(match v.as_str() {
                "gpu" => BackendChoice::Gpu,
                "cpu" => BackendChoice::Cpu,
                _ => BackendChoice::Auto,
            })
        })
    };
    let on_fallback = {
        let cpu_fallback = cpu_fallback.clone();
        on_checked(move |on| cpu_fallback.set(on))
    };
    let send = |r: ComputeRequest| {
        let on_request = props.on_request.clone();
        Callback::from(move |_: MouseEvent| on_request.emit(r.clone()))
    };
    let can_start =
        s.model.is_some() && source.is_some() && s.running.is_none() && s.answers.running.is_none();

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

    html! {
        <details class="compute" id="compute" open={s.model.is_some() || s.opening.is_some()}>
            <summary>{ "Compute locally with a GGUF model: utilities and answers" }</summary>
            <p class="note">
                { "Pick a GGUF model (llama, qwen2, smollm or mistral architecture; F32, F16, BF16, Q4_0…Q8_0, Q4_K, Q5_K, Q6_K). \
                   The file is read by this page's worker, slice by slice: it is never uploaded. The utilities \
                   u = R·(1 − p(NO-RESPONSE)) use the paper's prompt through the model's own chat template. \
                   They are computed with WebGPU when the worker gets an adapter (weights uploaded once, quantized), \
                   else on the CPU in the worker." }
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
                    <select id="compute-source" onchange={on_source} disabled={options.is_empty()}>
                        { for options.iter().map(|(v, label)| html! {
                            <option value={v.clone()} selected={Some(v) == value.as_ref()}>{ label }</option>
                        }) }
                    </select>
                </label>
                if is_run {
                    <label>
                        { " top k: " }
                        <input type="number" id="compute-k" min="1" value={k.to_string()} onchange={on_k} />
                    </label>
                }
                <label>
                    { " on: " }
                    <select id="compute-backend-choice" onchange={on_backend}>
                        <option value="auto" selected={*backend == BackendChoice::Auto}>{ "WebGPU on a GPU, else CPU" }</option>
                        <option value="gpu" selected={*backend == BackendChoice::Gpu}>{ "WebGPU (any adapter, also a software one)" }</option>
                        <option value="cpu" selected={*backend == BackendChoice::Cpu}>{ "CPU" }</option>
                    </select>
                </label>
                <label>
                    <input type="checkbox" id="compute-cpu-fallback" checked={*cpu_fallback} onchange={on_fallback} />
                    { " if the GPU fails mid-run, continue on the CPU" }
                </label>
                if options.is_empty() {
                    <span class="note">{ " load a UDCG JSON file (examples with question and passages), or a TREC run with the queries' texts (`qid<TAB>question`), the passages' texts ({\"docno\", \"text\"} JSON Lines) and qrels — the inputs of `ragscope utility`" }</span>
                }
                <button id="compute-start" disabled={!can_start}
                    onclick={{
                        let on_request = props.on_request.clone();
                        let (source, backend, cpu_fallback) = (source.clone(), *backend, *cpu_fallback);
                        Callback::from(move |_: MouseEvent| {
                            if let Some(source) = source.clone() {
                                on_request.emit(ComputeRequest::Start {
                                    source,
                                    result: 0,
                                    backend,
                                    cpu_fallback,
                                });
                            }
                        })
                    }}>
                    { "Compute utilities" }
                </button>
            </div>
            if let Some(b) = &s.backend { { backend_view(b) } }
            { for progress }
            if let Some(f) = &s.finished { { finished_view(f) } }
            <super::answering::AnswerPanel state={s.answers.clone()} has_model={s.model.is_some()}
                busy={s.running.is_some()} backend={*backend} contexts_files={props.contexts_files.clone()}
                udcg_files={props.udcg_files.clone()} on_request={props.on_request.clone()} />
        </details>
    }
}
