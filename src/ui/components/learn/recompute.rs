//! "Recompute with your model": a GGUF picked from disk is opened in the worker (never uploaded)
//! and p(NO-RESPONSE | question, passage) of the current question's passages is computed by the
//! same engine as the Evaluate page's "Compute locally" panel (crates/worker/src/engine/inference*:
//! the paper's prompt through the model's chat template, as `ragscope utility`); the cards' u
//! values are replaced and labelled with the model's name.

use super::state::{BuilderAction, BuilderState};
use crate::ui::components::form_inputs::{on_model_file, on_select};
use crate::ui::compute_state::ComputeState;
use ragscope_protocol::compute::{BackendChoice, ComputeRequest, ComputeSource, PassageToScore};
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: Rc<BuilderState>,
    pub dispatch: Callback<BuilderAction>,
    pub compute: ComputeState,
    pub on_compute: Callback<ComputeRequest>,
}

/// The text `ragscope utility` scores for a passage of the bundled subset (learn-data writes
/// the passages file the same way): the lost-in-the-middle document line without its number.
pub fn document(title: &str, text: &str) -> String {
    format!("(Title: {title}) {text}")
}

/// The request's passages: the cards that carry a real passage's text (made-up cards have none).
fn passages(s: &BuilderState) -> Vec<(u32, PassageToScore)> {
    let qid = s.source.clone().unwrap_or_else(|| "learn".into());
    s.passages
        .iter()
        .filter(|p| !p.text.is_empty())
        .map(|p| {
            (
                p.id,
                PassageToScore {
                    qid: qid.clone(),
                    docno: p.docno(),
                    relevant: p.relevant,
                    question: s.question.clone(),
                    text: document(&p.title, &p.text),
                },
            )
        })
        .collect()
}

/// A request sent and not yet answered: its name and the cards it scores, in order.
#[derive(Clone, PartialEq)]
struct Pending {
    name: String,
    cards: Vec<u32>,
}

#[function_component(Recompute)]
pub fn recompute(props: &Props) -> Html {
    let pending = use_state(|| None::<Pending>);
    let counter = use_mut_ref(|| 0u32);
    let done = use_state(|| None::<String>);
    let backend = use_state(BackendChoice::default);
    let c = &props.compute;

    // The worker's answer to our request replaces the cards' utilities.
    {
        let (pending, done, dispatch) = (pending.clone(), done.clone(), props.dispatch.clone());
        use_effect_with(c.scored.clone(), move |scored| {
            if let (Some(s), Some(p)) = (scored, (*pending).clone()) {
                if s.name == p.name && s.p_no_response.len() == p.cards.len() {
                    dispatch.emit(BuilderAction::SetUtilities {
                        values: p
                            .cards
                            .iter()
                            .copied()
                            .zip(s.p_no_response.clone())
                            .collect(),
                        model: s.model.clone(),
                    });
                    done.set(Some(format!(
                        "{} passages scored by {} in {:.1} s on {}.",
                        s.p_no_response.len(),
                        s.model,
                        s.seconds,
                        s.backend
                    )));
                    pending.set(None);
                }
            }
        });
    }

    let on_pick = on_model_file(props.on_compute.clone());
    let on_backend = {
        let backend = backend.clone();
        on_select(move |v| {
            backend.set(if v == "cpu" {
                BackendChoice::Cpu
            } else {
                BackendChoice::Auto
            })
        })
    };
    let todo = passages(&props.state);
    let running = c.running.is_some();
    let on_start = {
        let (on_compute, pending, done, counter, backend) = (
            props.on_compute.clone(),
            pending.clone(),
            done.clone(),
            counter.clone(),
            *backend,
        );
        let todo = todo.clone();
        Callback::from(move |_| {
            let name = {
                let mut n = counter.borrow_mut();
                *n += 1;
                format!("learn-page-{}", *n)
            };
            pending.set(Some(Pending {
                name: name.clone(),
                cards: todo.iter().map(|(id, _)| *id).collect(),
            }));
            done.set(None);
            on_compute.emit(ComputeRequest::Start {
                source: ComputeSource::Passages {
                    name,
                    passages: todo.iter().map(|(_, p)| p.clone()).collect(),
                },
                result: 0,
                backend,
                cpu_fallback: true,
            });
        })
    };
    let on_cancel = {
        let (on_compute, pending) = (props.on_compute.clone(), pending.clone());
        Callback::from(move |_| {
            pending.set(None);
            on_compute.emit(ComputeRequest::Cancel);
        })
    };
    let ours = pending.is_some() && running;
    let skipped = props.state.passages.len() - todo.len();
    html! {
        <section class="recompute" aria-labelledby="recompute-title">
            <h3 id="recompute-title">{ "Recompute with your model" }</h3>
            <p class="hint">{ "Pick a GGUF model file: this tab's worker reads it from your disk (nothing is uploaded) and computes p(NO-RESPONSE) of the current question's passages with ragscope's own engine — the paper's prompt through the model's chat template, as `ragscope utility` does. The cards' utilities are then replaced and labelled with the model's name; the metrics follow." }</p>
            <p class="recompute-row">
                <label for="recompute-model">{ "GGUF model " }</label>
                <input type="file" id="recompute-model" accept=".gguf" onchange={on_pick} disabled={running} />
                <label for="recompute-backend">{ " on " }</label>
                <select id="recompute-backend" onchange={on_backend} disabled={running}>
                    <option value="auto" selected={*backend == BackendChoice::Auto}>{ "WebGPU on a GPU, else the CPU" }</option>
                    <option value="cpu" selected={*backend == BackendChoice::Cpu}>{ "the CPU" }</option>
                </select>
            </p>
            <p class="hint" id="recompute-status" aria-live="polite">{
                if let Some(name) = &c.opening { format!("Opening {name}…") }
                else if let Some(m) = &c.model { format!("Model: {} ({}, {:.1} M parameters).", m.name, m.file_name, m.parameters as f64 / 1e6) }
                else { "No model yet.".to_string() }
            }</p>
            <p>
                <button id="recompute-start"
                    disabled={running || c.model.is_none() || c.opening.is_some() || todo.is_empty()}
                    onclick={on_start}>
                    { format!("Recompute u of {} passage{}", todo.len(), if todo.len() == 1 { "" } else { "s" }) }
                </button>
                if ours {
                    { " " }
                    <button class="ghost" id="recompute-cancel" onclick={on_cancel}>{ "Cancel" }</button>
                }
            </p>
            if todo.is_empty() {
                <p class="hint">{ "The cards have no passage text to give a model: pick a real question below (the guided steps' passages are made up)." }</p>
            } else if skipped > 0 {
                <p class="hint">{ format!("{skipped} made-up card(s) without text keep their utility.") }</p>
            }
            if ours {
                if let Some(p) = &c.running {
                    <p id="recompute-progress-line">
                        <progress id="recompute-progress" max={p.total.max(1).to_string()} value={p.done.to_string()}
                            aria-label="Passages scored" />
                        { format!(" {} / {} passages", p.done, p.total) }
                        if let Some(b) = &c.backend { { format!(" · on {}", b.label) } }
                    </p>
                }
            }
            if let Some(d) = &*done {
                <p id="recompute-done" class="note">{ d }</p>
            }
            if let (Some(e), true) = (&c.error, pending.is_some() && !running) {
                <p class="error" id="recompute-error" role="alert">{ e }</p>
            }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cards_with_text_are_sent_as_learn_data_wrote_them() {
        let s = BuilderState::new(
            "who?".into(),
            5,
            vec![
                (true, 0.1, "Title A".into(), "Text A".into()),
                (false, 0.9, "made up".into(), String::new()),
            ],
        );
        let p = passages(&s);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].1.text, "(Title: Title A) Text A");
        assert_eq!(p[0].1.question, "who?");
        assert!(p[0].1.relevant);
    }
}
