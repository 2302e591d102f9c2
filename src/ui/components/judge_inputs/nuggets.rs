//! AutoNuggetizer's inputs: create reads topics, passages and qrels (each topic's relevant
//! passages, nuggetizer's pool); score reads a nuggets file; assign a nuggets file and the
//! loaded TREC RAG answer files.

use super::{file_select, input_value, Props};
use crate::ui::judges_state::{JudgeAction, JudgeInputs};
use ragscope_protocol::judges::JudgeTaskChoice;
use yew::prelude::*;

#[function_component(NuggetsInputs)]
pub fn nuggets_inputs(props: &Props) -> Html {
    let (inputs, form) = (&props.inputs, &props.form);
    let on_nuggets = {
        let d = props.dispatch.clone();
        Callback::from(move |id| d.dispatch(JudgeAction::SetNuggets(id)))
    };
    let on_min_grade = {
        let d = props.dispatch.clone();
        Callback::from(move |e: InputEvent| d.dispatch(JudgeAction::SetMinGrade(input_value(&e))))
    };
    let nuggets = file_select(
        "judge-nuggets",
        "Nuggets",
        &inputs.nuggets,
        JudgeInputs::pick(&inputs.nuggets, form.nuggets),
        None,
        "load a nuggetizer nuggets JSONL (or create nuggets first: the result is loaded here).",
        on_nuggets,
    );
    let names = |v: &[(u32, String)]| {
        v.iter()
            .map(|(_, n)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match form.task {
        JudgeTaskChoice::NuggetsCreate => html! {
            <>
                <p class="judge-inputs" id="judge-inputs">
                    { "Topics: " }<strong>{ inputs.topics.as_ref().map_or("— load a topics TSV", |t| t.1.as_str()) }</strong>
                    { " · Passages: " }<strong>{ inputs.passages.as_ref().map_or("— load a passages JSONL", |t| t.1.as_str()) }</strong>
                    { " · Qrels: " }<strong>{ inputs.qrels.as_ref().map_or("— load qrels (the relevant passages)", |t| t.1.as_str()) }</strong>
                </p>
                <label class="control narrow">
                    <span>{ "Min. grade" }</span>
                    <input id="judge-min-grade" type="number" value={form.min_grade.clone()} oninput={on_min_grade} />
                </label>
                <p class="hint">{ "Windows of 10 relevant passages per topic, one round per window; at most 30 nuggets of 1–12 words." }</p>
            </>
        },
        JudgeTaskChoice::NuggetsScore => html! {
            <>
                { nuggets }
                <p class="hint">{ "vital/okay for each nugget (batches of 10); vital first, at most 20 kept. The scored nuggets are loaded for the Answers view." }</p>
            </>
        },
        _ => html! {
            <>
                { nuggets }
                <p class="judge-inputs" id="judge-inputs">
                    { "Answers (every TREC RAG answer file loaded): " }
                    <strong>{ if inputs.rag_answers.is_empty() { "— load a TREC RAG answer JSONL".to_string() } else { names(&inputs.rag_answers) } }</strong>
                </p>
                <p class="hint">{ "support / partial_support / not_support of each answer for its topic's nuggets (batches of 10). The assignments are loaded and scored in the Answers view." }</p>
            </>
        },
    }
}
