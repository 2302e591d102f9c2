//! The utility task's inputs (`ragscope judge utility` in the app): the passages (a loaded UDCG
//! JSON, or a run's top k with the loaded topics, passages and qrels, as "compute locally"
//! takes them) and where the chat template comes from: the served model's GGUF (read in the
//! worker, metadata only, never uploaded), a template file, or none (the chat endpoint's top 20
//! logprobs, which only bound p when NO-RESPONSE's first token is not among them). Gemini gives
//! only the latter (`responseLogprobs`; it has no /completions to echo a prompt): no template
//! choice is shown for it.

use super::{input_value, select_value, Props};
use crate::ui::judges_state::{JudgeAction, TemplateChoice};
use ragscope_protocol::judges::{JudgeRequest, ProviderChoice};
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

fn picked_file(e: &Event) -> Option<web_sys::File> {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .and_then(|i| i.files())
        .and_then(|l| l.get(0))
}

#[function_component(UtilityInputs)]
pub fn utility_inputs(props: &Props) -> Html {
    let (inputs, form) = (&props.inputs, &props.form);
    let u = &form.utility;
    let value = form.utility_source_value(inputs);
    let is_run = value.as_deref().is_some_and(|v| v.starts_with("run:"));
    let gemini = form.provider == ProviderChoice::Gemini;
    let options: Vec<(String, String)> = inputs
        .udcg
        .iter()
        .map(|(id, name)| (format!("udcg:{id}"), format!("{name} (UDCG JSON)")))
        .chain(inputs.runs.iter().map(|(id, name)| {
            (
                format!("run:{id}"),
                format!("{name} (run: top k with topics, passages, qrels)"),
            )
        }))
        .collect();

    let on_source = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            d.dispatch(JudgeAction::SetUtilitySource(Some(select_value(&e))))
        })
    };
    let on_k = {
        let d = props.dispatch.clone();
        Callback::from(move |e: InputEvent| d.dispatch(JudgeAction::SetK(input_value(&e))))
    };
    let on_choice = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            if let Some(t) = TemplateChoice::from_slug(&select_value(&e)) {
                d.dispatch(JudgeAction::SetTemplateChoice(t));
            }
        })
    };
    let on_gguf = {
        let d = props.dispatch.clone();
        let (send, next_id) = (props.on_request.clone(), props.next_id.clone());
        Callback::from(move |e: Event| {
            let Some(file) = picked_file(&e) else {
                return;
            };
            // Offered on a channel: the worker reads the header and metadata, in slices.
            let Some(next_id) = &next_id else {
                return;
            };
            if let Ok(url) = ragscope_platform::blob_channel::offer_kept(&file) {
                let id = next_id.emit(());
                let name = file.name();
                d.dispatch(JudgeAction::GgufPicked {
                    id,
                    name: name.clone(),
                });
                send.emit(JudgeRequest::ReadGguf { id, url, name });
            }
        })
    };
    let on_template_file = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            let Some(file) = picked_file(&e) else {
                return;
            };
            let d = d.clone();
            // A template is a few kilobytes: read here.
            yew::platform::spawn_local(async move {
                let name = file.name();
                if let Ok(text) =
                    gloo::file::futures::read_as_text(&gloo::file::Blob::from(file)).await
                {
                    d.dispatch(JudgeAction::TemplateText { name, text });
                }
            });
        })
    };
    let on_template_text = {
        let d = props.dispatch.clone();
        Callback::from(move |e: InputEvent| {
            // A textarea's value (web-sys's HtmlTextAreaElement is not among the features built).
            let text = e
                .target()
                .and_then(|t| js_sys::Reflect::get(&t, &"value".into()).ok())
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            d.dispatch(JudgeAction::TemplateText {
                name: "pasted template".into(),
                text,
            })
        })
    };

    html! {
        <>
            if options.is_empty() {
                <p class="judge-input-missing hint" data-input="judge-utility-source">
                    <strong>{ "Passages: " }</strong>
                    { "Load a UDCG JSON file, or a run with its topics, passages and qrels." }
                </p>
            } else {
                <label class="control wide">
                    <span>{ "Passages" }</span>
                    <select id="judge-utility-source" onchange={on_source}>
                        { for options.iter().map(|(v, label)| html! {
                            <option value={v.clone()} selected={value.as_deref() == Some(v.as_str())}>{ label }</option>
                        }) }
                    </select>
                </label>
            }
            if is_run {
                <p class="judge-inputs" id="judge-inputs">
                    { "Topics: " }<strong>{ inputs.topics.as_ref().map_or("— load a topics TSV", |t| t.1.as_str()) }</strong>
                    { " · Passages: " }<strong>{ inputs.passages.as_ref().map_or("— load a passages JSONL", |t| t.1.as_str()) }</strong>
                    { " · Qrels: " }<strong>{ inputs.qrels.as_ref().map_or("— load qrels", |t| t.1.as_str()) }</strong>
                </p>
                <label class="control narrow">
                    <span>{ "Top k" }</span>
                    <input id="judge-k" type="number" min="1" value={form.k.clone()} oninput={on_k} />
                </label>
            }
            if gemini {
                <p class="hint" id="judge-template-gemini">
                    { "Gemini: its top 20 log-probabilities of the first answer token (responseLogprobs), for the models that serve them (others fail with the reason). Where NO-RESPONSE's first token is not among them only an upper bound is known; bounds are shown and downloaded as bounds and left out of the RAG views. Exact values by echo need an OpenAI-compatible server and the model's chat template." }
                </p>
            } else {
            <label class="control wide">
                <span>{ "Chat template" }</span>
                <select id="judge-template" onchange={on_choice}>
                    { for TemplateChoice::ALL.iter().map(|t| html! {
                        <option value={t.slug()} selected={*t == u.template}>{ t.label() }</option>
                    }) }
                </select>
            </label>
            { match u.template {
                TemplateChoice::Gguf => html! {
                    <>
                        <label class="control wide">
                            <span>{ "GGUF of the served model" }</span>
                            <input id="judge-gguf" type="file" accept=".gguf" onchange={on_gguf} />
                        </label>
                        if let Some((_, name)) = &u.gguf_reading {
                            <p class="hint" id="judge-gguf-status" data-state="reading">{ format!("Reading {name}…") }</p>
                        } else if let Some(g) = &u.gguf {
                            <p class="hint" id="judge-gguf-status" data-state="read">
                                <strong>{ &g.file_name }</strong>
                                { format!(" ({}): {}", g.model_name.as_deref().unwrap_or("no general.name"), g.summary) }
                            </p>
                        }
                        if let Some(e) = &u.gguf_error {
                            <p class="error-text" role="alert" id="judge-gguf-error">{ e }</p>
                        }
                    </>
                },
                TemplateChoice::Text => html! {
                    <>
                        <label class="control wide">
                            <span>{ "Template file" }</span>
                            <input id="judge-template-file" type="file" accept=".jinja,.j2,.txt,.tmpl" onchange={on_template_file} />
                        </label>
                        <label class="control wide">
                            <span>{ "or paste it" }</span>
                            <textarea id="judge-template-text" rows="4" spellcheck="false"
                                value={u.text.as_ref().map(|(_, t)| t.clone()).unwrap_or_default()}
                                oninput={on_template_text} />
                        </label>
                        if let Some((name, text)) = &u.text {
                            <p class="hint" id="judge-template-status">{ format!("{name}: {} characters", text.chars().count()) }</p>
                        }
                    </>
                },
                TemplateChoice::None => html! {
                    <p class="hint" id="judge-template-none">
                        { "Without a template the server's chat endpoint gives its top 20 logprobs: where NO-RESPONSE's first token is not among them only an upper bound is known. Bounds are shown and downloaded as bounds and left out of the RAG views." }
                    </p>
                },
            } }
            <p class="hint">
                { "With a template, the paper's prompt is rendered here, the first token of NO-RESPONSE appended and its logprob read from /completions with echo (exact); the server is probed first with 2 requests and refused if its echoed logprobs are misaligned." }
            </p>
            }
        </>
    }
}
