//! What to compute: measures (searchable, each explained), the baseline and the test.

use ragscope_eval::Measure;
use ragscope_protocol::{FileId, SigTest};
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Measures offered in the picker; any other name the registry parses can be typed in.
pub const CATALOG: &[&str] = &[
    "MAP",
    "MAP@10",
    "MAP@100",
    "MAP@1000",
    "MRR",
    "RR@10",
    "nDCG",
    "nDCG@5",
    "nDCG@10",
    "nDCG@20",
    "nDCG@100",
    "nDCG(gain=exp)@10",
    "P@1",
    "P@5",
    "P@10",
    "P@20",
    "P@100",
    "R@10",
    "R@100",
    "R@1000",
    "Success@1",
    "Success@5",
    "Success@10",
    "Rprec",
    "bpref",
    "infAP",
    "Judged@10",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "SetP",
    "SetR",
    "SetF",
];

/// Offered besides [`CATALOG`] when a loaded file holds eRAG outcomes.
pub const ERAG_CATALOG: &[&str] = &[
    "eRAG-P@5",
    "eRAG-success@5",
    "eRAG-P(metric=em)@5",
    "eRAG-P(metric=rouge_l)@5",
];

#[derive(Properties, PartialEq)]
pub struct Props {
    pub measures: Vec<String>,
    /// A loaded file holds eRAG outcomes: offer [`ERAG_CATALOG`] too.
    #[prop_or_default]
    pub erag: bool,
    pub runs: Vec<(FileId, String)>,
    pub baseline: Option<FileId>,
    pub test: SigTest,
    pub on_measures: Callback<Vec<String>>,
    pub on_baseline: Callback<Option<FileId>>,
    pub on_test: Callback<SigTest>,
}

fn explain(name: &str) -> String {
    match name.parse::<Measure>() {
        Ok(m) => m.explanation().to_string(),
        Err(e) => e.to_string(),
    }
}

#[function_component(Controls)]
pub fn controls(props: &Props) -> Html {
    let query = use_state(String::new);
    let open = use_state(|| false);
    let on_search = {
        let query = query.clone();
        let open = open.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            {
                query.set(i.value());
                open.set(true);
            }
        })
    };
    let toggle = |name: String| {
        let measures = props.measures.clone();
        let on_measures = props.on_measures.clone();
        Callback::from(move |_: ()| {
            let mut m = measures.clone();
            if let Some(i) = m.iter().position(|x| *x == name) {
                if m.len() > 1 {
                    m.remove(i);
                }
            } else {
                m.push(name.clone());
            }
            on_measures.emit(m);
        })
    };
    let q = query.to_lowercase();
    let extra: &[&str] = if props.erag { ERAG_CATALOG } else { &[] };
    let mut shown: Vec<String> = CATALOG
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .filter(|s| {
            q.is_empty() || s.to_lowercase().contains(&q) || explain(s).to_lowercase().contains(&q)
        })
        .collect();
    // A typed name the registry understands can be added even if it is not in the catalog.
    let typed = query.trim().to_string();
    let custom = !typed.is_empty()
        && typed.parse::<Measure>().is_ok()
        && !shown.iter().any(|s| s.eq_ignore_ascii_case(&typed));
    if custom {
        shown.insert(0, typed.clone());
    }
    let on_key = {
        let on_measures = props.on_measures.clone();
        let measures = props.measures.clone();
        let query = query.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                let t = query.trim().to_string();
                if t.parse::<Measure>().is_ok() && !measures.contains(&t) {
                    let mut m = measures.clone();
                    m.push(t);
                    on_measures.emit(m);
                    query.set(String::new());
                }
            }
        })
    };
    let on_baseline = {
        let cb = props.on_baseline.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            {
                cb.emit(s.value().parse().ok());
            }
        })
    };
    let on_test = {
        let cb = props.on_test.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            {
                cb.emit(if s.value() == "randomization" {
                    SigTest::Randomization
                } else {
                    SigTest::PairedT
                });
            }
        })
    };
    let toggle_open = {
        let open = open.clone();
        Callback::from(move |_| open.set(!*open))
    };
    html! {
        <section class="controls" aria-label="Evaluation settings">
            <div class="control measures-control">
                <span class="control-label" id="measures-label">{ "Measures" }</span>
                <div class="chips" aria-labelledby="measures-label">
                    { for props.measures.iter().map(|m| html! {
                        <button class="chip selected" title={explain(m)} onclick={toggle(m.clone()).reform(|_: MouseEvent| ())}
                            aria-label={format!("Remove measure {m}")}>{ m }<span aria-hidden="true">{ " ×" }</span></button>
                    }) }
                    <button class="chip add" onclick={toggle_open} aria-expanded={open.to_string()}
                        aria-controls="measure-picker">{ if *open { "Done" } else { "+ Add" } }</button>
                </div>
                if *open {
                    <div class="picker" id="measure-picker">
                        <input type="search" id="measure-search" placeholder="Search measures, e.g. ndcg, recall, judged…"
                            aria-label="Search measures (Enter adds a typed measure such as nDCG@15)"
                            value={(*query).clone()} oninput={on_search} onkeydown={on_key} />
                        <ul class="picker-list" role="listbox" aria-multiselectable="true" aria-label="Measures">
                            { for shown.iter().map(|m| {
                                let selected = props.measures.contains(m);
                                html! {
                                    <li role="option" aria-selected={selected.to_string()}>
                                        <label title={explain(m)}>
                                            <input type="checkbox" checked={selected} onchange={toggle(m.clone()).reform(|_: Event| ())} data-measure={m.clone()} />
                                            <span class="picker-name">{ m }</span>
                                            <span class="picker-explain">{ explain(m) }</span>
                                        </label>
                                    </li>
                                }
                            }) }
                        </ul>
                    </div>
                }
            </div>
            <div class="control-row">
                <label class="control">
                    <span class="control-label">{ "Baseline" }</span>
                    <select id="baseline" onchange={on_baseline} disabled={props.runs.len() < 2}>
                        { for props.runs.iter().enumerate().map(|(i, (id, name))| html! {
                            <option value={id.to_string()}
                                selected={props.baseline == Some(*id) || (props.baseline.is_none() && i == 0)}>{ name }</option>
                        }) }
                    </select>
                </label>
                <label class="control">
                    <span class="control-label">{ "Significance" }</span>
                    <select id="sig-test" onchange={on_test}>
                        <option value="t" selected={props.test == SigTest::PairedT}>{ "Paired t-test" }</option>
                        <option value="randomization" selected={props.test == SigTest::Randomization}>{ "Randomization (10k)" }</option>
                    </select>
                </label>
                <span class="hint">{ "Holm-corrected over runs; ▲▼ at α = 0.05" }</span>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_measure_offered_in_the_picker_parses_and_is_explained() {
        for name in CATALOG {
            let m: ragscope_eval::Measure = name.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(m.explanation().len() > 10, "{name} has no explanation");
        }
    }
}
