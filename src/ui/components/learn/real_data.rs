//! Real contexts: a question of the bundled NQ subset with the utilities SmolLM2-135M-Instruct
//! gives its passages (precomputed by `cargo xtask learn-data`, fetched from the site itself).

use super::state::BuilderAction;
use serde::Deserialize;
use std::rc::Rc;
use web_sys::HtmlSelectElement;
use yew::platform::spawn_local;
use yew::prelude::*;

/// Where the precomputed utilities are, relative to the page (works from any sub-path).
pub const DATA_URL: &str = "learn/nq-smollm2.json";

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RealData {
    pub model: String,
    pub generator: String,
    pub subset: String,
    pub questions: Vec<RealQuestion>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RealQuestion {
    pub qid: String,
    pub question: String,
    pub answers: Vec<String>,
    pub gold_index: usize,
    pub distractor_source: String,
    pub passages: Vec<RealPassage>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RealPassage {
    pub index: usize,
    pub title: String,
    pub text: String,
    pub relevant: bool,
    pub p_no_response: f64,
}

impl RealQuestion {
    /// The context the page starts from: the gold passage first, then the first four
    /// distractors in retrieval order (k = 5).
    pub fn context(&self) -> Vec<(bool, f64, String, String)> {
        let gold = self.passages.iter().filter(|p| p.relevant);
        let others = self.passages.iter().filter(|p| !p.relevant).take(4);
        gold.chain(others)
            .map(|p| (p.relevant, p.p_no_response, p.title.clone(), p.text.clone()))
            .collect()
    }
}

pub fn load_question(q: &RealQuestion, model: &str) -> BuilderAction {
    BuilderAction::Load {
        question: q.question.clone(),
        k: 5,
        passages: q.context(),
        source: Some(q.qid.clone()),
        why: format!("{} ({model})", q.qid),
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub dispatch: Callback<BuilderAction>,
    /// The question a deep link names, loaded once the data arrives.
    pub wanted: Option<String>,
    /// The builder's passages as (relevant, p(NO-RESPONSE)), to find a deep link's real passages.
    pub current: Vec<(bool, f64)>,
}

/// A deep link carries numbers only: each card whose (relevance, p) is exactly one of the
/// question's passages gets that passage's title and text back.
fn relabel(q: &RealQuestion, current: &[(bool, f64)]) -> BuilderAction {
    let labels = current
        .iter()
        .map(|(r, p)| {
            q.passages
                .iter()
                .find(|x| x.relevant == *r && x.p_no_response == *p)
                .map(|x| (x.title.clone(), x.text.clone()))
        })
        .collect();
    BuilderAction::Relabel {
        question: q.question.clone(),
        labels,
    }
}

#[function_component(RealContexts)]
pub fn real_contexts(props: &Props) -> Html {
    let data = use_state(|| None::<Result<Rc<RealData>, String>>);
    {
        let data = data.clone();
        use_effect_with((), move |_| {
            spawn_local(async move {
                let got = async {
                    let r = gloo::net::http::Request::get(DATA_URL)
                        .send()
                        .await
                        .map_err(|e| e.to_string())?;
                    if !r.ok() {
                        return Err(format!("HTTP {}", r.status()));
                    }
                    r.json::<RealData>().await.map_err(|e| e.to_string())
                }
                .await;
                data.set(Some(got.map(Rc::new)));
            });
        });
    }
    let selected = use_state(|| props.wanted.clone());
    {
        let (dispatch, wanted, current) = (
            props.dispatch.clone(),
            props.wanted.clone(),
            props.current.clone(),
        );
        let loaded = matches!(*data, Some(Ok(_)));
        let data = data.clone();
        use_effect_with(loaded, move |loaded| {
            if let (true, Some(Ok(d)), Some(qid)) = (*loaded, (*data).clone(), wanted) {
                if let Some(q) = d.questions.iter().find(|q| q.qid == qid) {
                    dispatch.emit(relabel(q, &current));
                }
            }
        });
    }
    let Some(result) = (*data).clone() else {
        return html! { <section class="real" aria-busy="true"><p class="hint">{ "Loading the precomputed utilities…" }</p></section> };
    };
    let d = match result {
        Ok(d) => d,
        Err(e) => {
            return html! { <section class="real"><p class="hint">{ format!("The precomputed utilities ({DATA_URL}) could not be loaded: {e}. The builder works without them.") }</p></section> }
        }
    };
    let on_pick = {
        let (d, dispatch, selected) = (d.clone(), props.dispatch.clone(), selected.clone());
        Callback::from(move |e: Event| {
            let s: HtmlSelectElement = e.target_unchecked_into();
            if let Some(q) = d.questions.iter().find(|q| q.qid == s.value()) {
                selected.set(Some(q.qid.clone()));
                dispatch.emit(load_question(q, &d.model));
            }
        })
    };
    let current = (*selected)
        .as_ref()
        .and_then(|id| d.questions.iter().find(|q| &q.qid == id));
    let substitutes = d
        .questions
        .iter()
        .filter(|q| q.distractor_source != "original_contriever_msmarco")
        .count();
    let max_p = d
        .questions
        .iter()
        .flat_map(|q| q.passages.iter().map(|p| p.p_no_response))
        .fold(0.0f64, f64::max);
    html! {
        <section class="real" aria-labelledby="real-title">
            <h3 id="real-title">{ "Real contexts, real utilities" }</h3>
            <p>{ format!("{} questions of the bundled NQ-open subset; utilities u = R·(1 − p(NO-RESPONSE)) from {} by ragscope's own engine ({}; {}).",
                d.questions.len(), d.model, d.generator, d.subset) }</p>
            <p class="hint">{ format!(
                "Only 3 of the subset's 60 questions keep the lost-in-the-middle paper's distractors (Contriever-MSMARCO); the others ({substitutes} of the {} here) use easier BM25 substitutes from other questions' gold passages, so these are not the paper's contexts. The 135M model almost never abstains: its largest p(NO-RESPONSE) here is {max_p:.2e}, so every utility lies within that of ±1 and UDCG behaves like the paper's binary ablation — a larger reader separates passages far more.",
                d.questions.len()) }</p>
            <label for="real-question">{ "Question " }</label>
            <select id="real-question" onchange={on_pick}>
                <option value="" selected={current.is_none()} disabled=true>{ "pick a question" }</option>
                { for d.questions.iter().map(|q| html! {
                    <option value={q.qid.clone()} selected={current.is_some_and(|c| c.qid == q.qid)}>
                        { format!("{} — {}", q.qid, q.question) }
                    </option>
                }) }
            </select>
            if let Some(q) = current {
                <p class="hint">{ format!("Answers: {}. Gold passage at position {} of 20 in the subset; distractors: {}.",
                    q.answers.join(" | "), q.gold_index + 1, q.distractor_source.replace('_', " ")) }</p>
            }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed outputs of `cargo xtask learn-data` agree: the Learn page's JSON parses,
    /// each question has its gold passage, and every p(NO-RESPONSE) it shows is the one the
    /// demo's utilities TSV (read by crates/eval's parser) holds for that passage.
    #[test]
    fn committed_learn_data_matches_the_demo_utilities() {
        let data: RealData =
            serde_json::from_str(include_str!("../../../../www/learn/nq-smollm2.json")).unwrap();
        assert!(data.model.contains("SmolLM2-135M-Instruct"));
        let tsv = include_str!("../../../../www/demo/nq/utilities.smollm2.tsv");
        let utilities = ragscope_eval::rag::utilities_tsv::parse("utilities", tsv).unwrap();
        assert!(!data.questions.is_empty());
        for q in &data.questions {
            assert_eq!(
                q.passages.iter().filter(|p| p.relevant).count(),
                1,
                "{}",
                q.qid
            );
            let judged = utilities.question("", &q.qid).unwrap();
            for p in &q.passages {
                let info = judged.get(&format!("{}/p{}", q.qid, p.index)).unwrap();
                assert_eq!(info.judgment.relevant, p.relevant, "{} p{}", q.qid, p.index);
                assert_eq!(
                    info.judgment.p_no_response, p.p_no_response,
                    "{} p{}",
                    q.qid, p.index
                );
            }
            assert_eq!(q.context().len(), 5);
        }
    }
}
