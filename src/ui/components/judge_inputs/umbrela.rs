//! UMBRELA's inputs: topics, passages, a run and its top k.

use super::{input_value, select_value, Props};
use crate::ui::judges_state::JudgeAction;
use yew::prelude::*;

#[function_component(UmbrelaInputs)]
pub fn umbrela_inputs(props: &Props) -> Html {
    let (inputs, form) = (&props.inputs, &props.form);
    let on_run = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            d.dispatch(JudgeAction::SetRun(select_value(&e).parse().ok()))
        })
    };
    let on_k = {
        let d = props.dispatch.clone();
        Callback::from(move |e: InputEvent| d.dispatch(JudgeAction::SetK(input_value(&e))))
    };
    html! {
        <>
            <p class="judge-inputs" id="judge-inputs">
                { "Topics: " }<strong>{ inputs.topics.as_ref().map_or("— load a topics TSV", |t| t.1.as_str()) }</strong>
                { " · Passages: " }<strong>{ inputs.passages.as_ref().map_or("— load a passages JSONL", |t| t.1.as_str()) }</strong>
            </p>
            <label class="control">
                <span>{ "Run" }</span>
                <select id="judge-run" onchange={on_run} disabled={inputs.runs.is_empty()}>
                    { for inputs.runs.iter().enumerate().map(|(i, (id, name))| html! {
                        <option value={id.to_string()}
                            selected={form.run == Some(*id) || (form.run.is_none() && i == 0)}>{ name }</option>
                    }) }
                </select>
            </label>
            <label class="control narrow">
                <span>{ "Top k" }</span>
                <input id="judge-k" type="number" min="1" value={form.k.clone()} oninput={on_k} />
            </label>
        </>
    }
}
