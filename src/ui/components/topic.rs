//! One run's ranked list on one topic, with relevance (and utilities when loaded).

use super::per_query::select_value;
use ragscope_protocol::{FileId, Report, TopicView};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
    pub view: Option<TopicView>,
    pub on_request: Callback<(FileId, String)>,
}

#[function_component(TopicDrill)]
pub fn topic_drill(props: &Props) -> Html {
    let report = &props.report;
    let run = use_state(|| 0usize);
    let qid = use_state(|| report.topics.first().cloned().unwrap_or_default());
    {
        let on_request = props.on_request.clone();
        let id = report.runs.get(*run).map(|r| r.id);
        use_effect_with((id, (*qid).clone()), move |(id, qid)| {
            if let Some(id) = id {
                if !qid.is_empty() {
                    on_request.emit((*id, qid.clone()));
                }
            }
        });
    }
    if report.runs.is_empty() {
        return html! { <p class="placeholder">{ "The drill-down needs a run." }</p> };
    }
    let on_run = {
        let run = run.clone();
        Callback::from(move |e: Event| run.set(select_value(&e).unwrap_or(0)))
    };
    let on_qid = {
        let qid = qid.clone();
        Callback::from(move |e: Event| {
            if let Some(i) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            {
                qid.set(i.value().trim().to_string());
            }
        })
    };
    let has_utility = props
        .view
        .as_ref()
        .is_some_and(|v| v.docs.iter().any(|d| d.utility.is_some()));
    html! {
        <section class="topic">
            <div class="control-row">
                <label class="control">
                    <span class="control-label">{ "Run" }</span>
                    <select id="topic-run" onchange={on_run}>
                        { for report.runs.iter().enumerate().map(|(i, r)| html! {
                            <option value={i.to_string()} selected={i == *run}>{ &r.name }</option>
                        }) }
                    </select>
                </label>
                <label class="control">
                    <span class="control-label">{ "Topic" }</span>
                    <input id="topic-id" list="topic-ids" value={(*qid).clone()} onchange={on_qid}
                        aria-describedby="topic-hint" />
                    <datalist id="topic-ids">
                        { for report.topics.iter().map(|t| html! { <option value={t.clone()} /> }) }
                    </datalist>
                </label>
                <span class="hint" id="topic-hint">{ format!("{} topics; type or pick one", report.topics.len()) }</span>
            </div>
            { match &props.view {
                None => html! { <p class="placeholder">{ "Pick a topic." }</p> },
                Some(v) => html! {
                    <>
                    <p class="hint">{ format!("{} on topic {}: {} relevant documents in the qrels; top {} shown{}.",
                        v.run, v.qid, v.num_rel, v.docs.len(),
                        if v.more > 0 { format!(", {} more retrieved", v.more) } else { String::new() }) }</p>
                    <div class="table-wrap">
                    <table id="topic-table" class="compact">
                        <thead><tr>
                            <th scope="col" class="num">{ "rank" }</th>
                            <th scope="col">{ "docno" }</th>
                            <th scope="col" class="num">{ "score" }</th>
                            <th scope="col">{ "relevance" }</th>
                            if has_utility { <th scope="col" class="num">{ "utility" }</th> }
                        </tr></thead>
                        <tbody>
                            { for v.docs.iter().map(|d| {
                                let (class, text) = match d.rel {
                                    None => ("unjudged", "unjudged".to_string()),
                                    Some(r) if r > 0 => ("relevant", format!("relevant ({r})")),
                                    Some(r) => ("nonrel", format!("not relevant ({r})")),
                                };
                                html! {
                                    <tr class={class}>
                                        <td class="num">{ d.rank }</td>
                                        <td class="mono">{ &d.docno }</td>
                                        <td class="num">{ format!("{:.4}", d.score) }</td>
                                        <td><span class={classes!("rel", class)}>{ text }</span></td>
                                        if has_utility {
                                            <td class="num">{ d.utility.map(|u| format!("{u:+.3}")).unwrap_or_else(|| "–".into()) }</td>
                                        }
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                    </div>
                    </>
                },
            } }
        </section>
    }
}
