//! RAGElo's inputs for pairwise battles and pointwise grades: queries.csv, answers.csv and,
//! optionally, documents.csv (shown to the judge with each query).

use super::{file_select, Props};
use crate::ui::judges_state::{JudgeAction, RageloRole};
use ragscope_protocol::judges::JudgeTaskChoice;
use ragscope_protocol::FileId;
use yew::prelude::*;

#[function_component(RageloInputs)]
pub fn ragelo_inputs(props: &Props) -> Html {
    let (inputs, form) = (&props.inputs, &props.form);
    let tables: Vec<(FileId, String)> = inputs
        .ragelo
        .iter()
        .map(|(id, name, _)| (*id, name.clone()))
        .collect();
    let d = props.dispatch.clone();
    let on = move |make: fn(Option<FileId>) -> JudgeAction| {
        let d = d.clone();
        Callback::from(move |id| d.dispatch(make(id)))
    };
    let on_docs = {
        let d = props.dispatch.clone();
        Callback::from(move |id: Option<FileId>| d.dispatch(JudgeAction::SetDocuments(Some(id))))
    };
    let note = match form.task {
        JudgeTaskChoice::Pairwise => "Every pair of agents per query, judged in both orders: agreeing verdicts give the winner, disagreeing ones a tie. The games are loaded for the Tournament view (Elo, Bradley–Terry).",
        _ => "A grade 0–2 with reasoning for each answer. The grades are loaded for the Answers view (mean grade per agent, failed judgments shown as failed).",
    };
    html! {
        <>
            { file_select("judge-queries", "Queries", &tables,
                inputs.pick_ragelo(form.queries, RageloRole::Queries), None,
                "load RAGElo's queries.csv (qid, query).", on(JudgeAction::SetQueries)) }
            { file_select("judge-answers", "Answers", &tables,
                inputs.pick_ragelo(form.ragelo_answers, RageloRole::Answers), None,
                "load RAGElo's answers.csv (qid, agent, answer).", on(JudgeAction::SetRageloAnswers)) }
            if !tables.is_empty() {
                { file_select("judge-documents", "Documents (optional)", &tables,
                    inputs.documents(form.documents), Some("none"), "", on_docs) }
            }
            <p class="hint">{ note }</p>
        </>
    }
}
