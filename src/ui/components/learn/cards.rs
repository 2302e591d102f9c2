//! The context as passage cards: drag to reorder (or the ↑/↓ buttons, for the keyboard), toggle
//! relevance, set the utility with a slider, add and remove passages, set k.

use super::state::{BuilderAction, BuilderState, MAX_K};
use std::rc::Rc;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: Rc<BuilderState>,
    pub dispatch: Callback<BuilderAction>,
}

/// Characters of a passage shown on its card (the whole text is kept for the model).
const SHOWN_CHARS: usize = 320;

fn shortened(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[function_component(ContextCards)]
pub fn context_cards(props: &Props) -> Html {
    let dragging = use_state(|| None::<usize>);
    let s = &props.state;
    let n = s.passages.len();
    let act = |a: BuilderAction| {
        let d = props.dispatch.clone();
        Callback::from(move |_| d.emit(a.clone()))
    };
    let on_k = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            if let Ok(k) = input.value().parse::<usize>() {
                d.emit(BuilderAction::SetK(k));
            }
        })
    };
    html! {
        <section class="context-builder" aria-labelledby="ctx-title">
            <h3 id="ctx-title">{ "The context" }</h3>
            <p class="question"><span class="hint">{ "Question: " }</span>{ &s.question }</p>
            <div class="ctx-k">
                <label for="ctx-k">{ "Context size k " }</label>
                <input id="ctx-k" type="number" min={n.max(1).to_string()} max={MAX_K.to_string()}
                    value={s.k.to_string()} onchange={on_k} />
                <span class="hint">{ format!(" {n} passages; {} empty slot(s) count as missing passages.", s.k.saturating_sub(n)) }</span>
            </div>
            <ol class="cards" id="cards">
            { for s.passages.iter().enumerate().map(|(i, p)| {
                let pos = i + 1;
                let on_drag_start = {
                    let dragging = dragging.clone();
                    Callback::from(move |e: DragEvent| {
                        if let Some(dt) = e.data_transfer() {
                            let _ = dt.set_data("text/plain", &i.to_string());
                        }
                        dragging.set(Some(i));
                    })
                };
                let on_drop = {
                    let (dragging, d) = (dragging.clone(), props.dispatch.clone());
                    Callback::from(move |e: DragEvent| {
                        e.prevent_default();
                        if let Some(from) = *dragging {
                            d.emit(BuilderAction::Move { from, to: i });
                        }
                        dragging.set(None);
                    })
                };
                let on_slider = {
                    let d = props.dispatch.clone();
                    Callback::from(move |e: InputEvent| {
                        let input: HtmlInputElement = e.target_unchecked_into();
                        if let Ok(u) = input.value().parse::<f64>() {
                            d.emit(BuilderAction::SetMagnitude(i, u));
                        }
                    })
                };
                let kind = if p.relevant { "relevant" } else { "irrelevant" };
                let slider_label = if p.relevant {
                    format!("Utility u of passage {pos} (1 − p(NO-RESPONSE))")
                } else {
                    format!("Distracting effect of passage {pos} (1 − p(NO-RESPONSE))")
                };
                html! {
                    <li key={p.id} class={classes!("card", kind, (*dragging == Some(i)).then_some("dragging"))}
                        draggable="true" ondragstart={on_drag_start}
                        ondragover={Callback::from(|e: DragEvent| e.prevent_default())}
                        ondrop={on_drop}
                        ondragend={{ let dragging = dragging.clone(); Callback::from(move |_| dragging.set(None)) }}
                        data-relevant={p.relevant.to_string()} data-p={p.p_no_response.to_string()}
                        data-docno={p.docno()}>
                        <div class="card-head">
                            <span class="rank" aria-hidden="true">{ pos }</span>
                            <span class={classes!("badge", kind)}>{ if p.relevant { "relevant" } else { "irrelevant" } }</span>
                            <span class="card-title">{ &p.title }</span>
                        </div>
                        if !p.text.is_empty() {
                            <p class="card-text">{ shortened(&p.text) }</p>
                        }
                        <div class="card-controls">
                            <label class="slider">
                                <span>{ if p.relevant { "u = " } else { "DE = " } }
                                    <output>{ format!("{:.3}", p.magnitude()) }</output></span>
                                <input type="range" min="0" max="1" step="0.01" value={p.magnitude().to_string()}
                                    aria-label={slider_label} oninput={on_slider} class="utility" />
                            </label>
                            <span class="hint">{ format!("signed u = {:+.3}", p.utility()) }</span>
                            if let Some(model) = &p.u_from {
                                <span class="u-from" title="p(NO-RESPONSE) recomputed in this browser">{ format!("u by {model}") }</span>
                            }
                            <span class="card-buttons">
                                <button class="ghost small move-up" disabled={i == 0}
                                    aria-label={format!("Move passage {pos} up")}
                                    onclick={act(BuilderAction::Move { from: i, to: i.saturating_sub(1) })}>{ "↑" }</button>
                                <button class="ghost small move-down" disabled={i + 1 >= n}
                                    aria-label={format!("Move passage {pos} down")}
                                    onclick={act(BuilderAction::Move { from: i, to: (i + 1).min(n.saturating_sub(1)) })}>{ "↓" }</button>
                                <button class="ghost small toggle" aria-pressed={p.relevant.to_string()}
                                    aria-label={format!("Passage {pos} is relevant")}
                                    onclick={act(BuilderAction::ToggleRelevance(i))}>{ "relevant" }</button>
                                <button class="ghost small remove-passage" disabled={n <= 1}
                                    aria-label={format!("Remove passage {pos}")}
                                    onclick={act(BuilderAction::Remove(i))}>{ "✕" }</button>
                            </span>
                        </div>
                    </li>
                }
            }) }
            { for (n..s.k).map(|i| html! {
                <li class="card empty" aria-label={format!("Slot {}: no passage", i + 1)}>
                    <span class="rank" aria-hidden="true">{ i + 1 }</span>
                    <span class="hint">{ "empty slot — a missing passage (utility 0)" }</span>
                </li>
            }) }
            </ol>
            <div class="card-add">
                <button class="ghost" id="add-relevant" disabled={n >= MAX_K}
                    onclick={act(BuilderAction::Add { relevant: true })}>{ "+ relevant passage" }</button>
                <button class="ghost" id="add-irrelevant" disabled={n >= MAX_K}
                    onclick={act(BuilderAction::Add { relevant: false })}>{ "+ distractor" }</button>
            </div>
        </section>
    }
}
