//! The Judges panel's "Task and inputs": the task selector and, per task, a panel (one file
//! each in `judge_inputs/`) that picks the loaded files the task reads and says what is missing.
//! A new task adds a [`JudgeTaskChoice`] variant, its panel here, and its builder in
//! crates/worker/src/engine/judges/tasks.rs.

mod citations;
mod nuggets;
mod ragelo;
mod umbrela;
mod utility;

use crate::ui::judges_state::{JudgeAction, JudgeForm, JudgeInputs, JudgeState};
use ragscope_protocol::judges::{JudgeRequest, JudgeTaskChoice};
use ragscope_protocol::FileId;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub inputs: JudgeInputs,
    pub form: JudgeForm,
    pub dispatch: UseReducerDispatcher<JudgeState>,
    /// Sends a request to the worker (the utility task's GGUF is read there).
    #[prop_or_default]
    pub on_request: Callback<JudgeRequest>,
    /// The next request id (unique for the page's lifetime).
    #[prop_or_default]
    pub next_id: Option<Callback<(), u32>>,
}

pub(crate) fn select_value(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
        .map(|s| s.value())
        .unwrap_or_default()
}

pub(crate) fn input_value(e: &InputEvent) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default()
}

/// A `<select>` of loaded files for one input of a task. `none`: the label of a "no file"
/// choice for an optional input (value `none`). Empty: a hint says what to load.
pub(crate) fn file_select(
    id: &'static str,
    label: &'static str,
    files: &[(FileId, String)],
    selected: Option<FileId>,
    none: Option<&'static str>,
    missing: &'static str,
    on_change: Callback<Option<FileId>>,
) -> Html {
    if files.is_empty() {
        return html! {
            <p class="judge-input-missing hint" data-input={id}>
                <strong>{ label }{ ": " }</strong>{ missing }
            </p>
        };
    }
    let onchange = Callback::from(move |e: Event| on_change.emit(select_value(&e).parse().ok()));
    html! {
        <label class="control wide">
            <span>{ label }</span>
            <select id={id} onchange={onchange}>
                if let Some(none) = none {
                    <option value="none" selected={selected.is_none()}>{ none }</option>
                }
                { for files.iter().map(|(fid, name)| html! {
                    <option value={fid.to_string()} selected={selected == Some(*fid)}>{ name }</option>
                }) }
            </select>
        </label>
    }
}

#[function_component(TaskInputsPanel)]
pub fn task_inputs_panel(props: &Props) -> Html {
    let on_task = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            if let Some(t) = JudgeTaskChoice::from_slug(&select_value(&e)) {
                d.dispatch(JudgeAction::SetTask(t));
            }
        })
    };
    let p = Props {
        inputs: props.inputs.clone(),
        form: props.form.clone(),
        dispatch: props.dispatch.clone(),
        on_request: props.on_request.clone(),
        next_id: props.next_id.clone(),
    };
    let panel = match props.form.task {
        JudgeTaskChoice::Umbrela => html! { <umbrela::UmbrelaInputs ..p /> },
        JudgeTaskChoice::NuggetsCreate
        | JudgeTaskChoice::NuggetsScore
        | JudgeTaskChoice::NuggetsAssign => html! { <nuggets::NuggetsInputs ..p /> },
        JudgeTaskChoice::Pairwise | JudgeTaskChoice::Pointwise => {
            html! { <ragelo::RageloInputs ..p /> }
        }
        JudgeTaskChoice::Citations => html! { <citations::CitationsInputs ..p /> },
        JudgeTaskChoice::Utility => html! { <utility::UtilityInputs ..p /> },
    };
    html! {
        <>
            <label class="control wide">
                <span>{ "Task" }</span>
                <select id="judge-task" onchange={on_task}>
                    { for JudgeTaskChoice::ALL.iter().map(|t| html! {
                        <option value={t.slug()} selected={*t == props.form.task}>{ t.label() }</option>
                    }) }
                </select>
            </label>
            <div class="judge-task-inputs" id="judge-task-inputs" data-task={props.form.task.slug()}>
                { panel }
            </div>
        </>
    }
}
