//! Citation support's inputs: TREC RAG answer files (their sentences and citations) and the
//! passages they cite.

use super::Props;
use yew::prelude::*;

#[function_component(CitationsInputs)]
pub fn citations_inputs(props: &Props) -> Html {
    let inputs = &props.inputs;
    let names = inputs
        .rag_answers
        .iter()
        .map(|(_, n)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        <>
            <p class="judge-inputs" id="judge-inputs">
                { "Answers (every TREC RAG answer file loaded): " }
                <strong>{ if names.is_empty() { "— load a TREC RAG answer JSONL" } else { names.as_str() } }</strong>
                { " · Passages: " }<strong>{ inputs.passages.as_ref().map_or("— load a passages JSONL (the cited docids)", |t| t.1.as_str()) }</strong>
            </p>
            <p class="hint">{ "full / partial / none (1 / 0.5 / 0) for each answer sentence and passage it cites (Open RAG Eval). The judgments are loaded for the Answers view (citation precision, recall and F1 per run and topic)." }</p>
        </>
    }
}
