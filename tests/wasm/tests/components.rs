//! The web app's components rendered by yew in headless Chromium: what a person (or a screen
//! reader) finds in the DOM for a given report.
#![cfg(target_arch = "wasm32")]

use ragscope_protocol::{MeasureInfo, Report, RunRow, SigTest, Significance};
use ragscope_web::ui::components::charts::{BoxProps, BoxViolin, DiffBars, DiffProps};
use ragscope_web::ui::components::results_table::{Props as TableProps, ResultsTable};
use std::rc::Rc;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn mount() -> web_sys::Element {
    let document = gloo::utils::document();
    let div = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&div).unwrap();
    div
}

async fn settle() {
    gloo::timers::future::TimeoutFuture::new(30).await;
}

fn report() -> Report {
    let measure = |name: &str| MeasureInfo {
        name: name.into(),
        trec_name: None,
        explanation: format!("{name} explained"),
    };
    let run = |id: u32, name: &str, means: [f64; 2], sig: Option<Significance>| RunRow {
        id,
        name: name.into(),
        num_queries: 3,
        means: means.to_vec(),
        per_query: vec![vec![means[0]; 3], vec![means[1]; 3]],
        significance: vec![sig, None],
    };
    Report {
        generation: 1,
        qrels: "qrels.txt".into(),
        measures: vec![measure("MAP"), measure("P@10")],
        runs: vec![
            run(0, "base", [0.2, 0.5], None),
            run(
                1,
                "better",
                [0.3, 0.4],
                Some(Significance {
                    mean_difference: 0.1,
                    p_value: 0.01,
                    p_holm: 0.02,
                }),
            ),
        ],
        topics: vec!["1".into(), "2".into(), "3".into()],
        baseline: 0,
        test: SigTest::PairedT,
        ..Report::default()
    }
}

#[wasm_bindgen_test]
async fn the_table_marks_significance_best_values_and_explains_measures() {
    let root = mount();
    yew::Renderer::<ResultsTable>::with_root_and_props(
        root.clone(),
        TableProps {
            report: Rc::new(report()),
        },
    )
    .render();
    settle().await;
    let rows = root.query_selector_all("#results tbody tr").unwrap();
    assert_eq!(rows.length(), 2);
    let up = root
        .query_selector("tr[data-run=better] .sig.up")
        .unwrap()
        .unwrap();
    assert_eq!(
        up.get_attribute("aria-label").as_deref(),
        Some("significantly better than the baseline")
    );
    // Best per column: MAP from "better", P@10 from "base".
    let best: Vec<String> = (0..root.query_selector_all("td.best").unwrap().length())
        .map(|i| {
            let td = root.query_selector_all("td.best").unwrap().get(i).unwrap();
            td.text_content().unwrap()
        })
        .collect();
    // Rows sorted by name: base (P@10 best) before better (MAP best, significant).
    assert_eq!(best, vec!["0.5000".to_string(), "0.3000▲".to_string()]);
    let th = root.query_selector("th[title='MAP explained']").unwrap();
    assert!(
        th.is_some(),
        "the measure's explanation is its header's tooltip"
    );
    assert!(root.inner_html().contains("baseline"));
}

#[wasm_bindgen_test]
async fn charts_are_labelled_svg() {
    let root = mount();
    yew::Renderer::<DiffBars>::with_root_and_props(
        root.clone(),
        DiffProps {
            id: "d".into(),
            label: "MAP: a − b".into(),
            items: vec![("1".into(), 0.2), ("2".into(), 0.0), ("3".into(), -0.1)],
        },
    )
    .render();
    let root2 = mount();
    yew::Renderer::<BoxViolin>::with_root_and_props(
        root2.clone(),
        BoxProps {
            id: "b".into(),
            label: "MAP over queries".into(),
            series: vec![("a".into(), vec![0.1, 0.2, 0.4, 0.9])],
        },
    )
    .render();
    settle().await;
    let svg = root.query_selector("svg#d").unwrap().unwrap();
    assert_eq!(svg.get_attribute("role").as_deref(), Some("img"));
    assert_eq!(
        svg.get_attribute("aria-label").as_deref(),
        Some("MAP: a − b")
    );
    assert_eq!(root.query_selector_all("svg#d rect").unwrap().length(), 3);
    let desc = root.query_selector("svg#d desc").unwrap().unwrap();
    assert_eq!(
        desc.text_content().as_deref(),
        Some("3 queries: 1 better, 1 worse, 1 tied.")
    );
    assert!(root2.query_selector("svg#b path").unwrap().is_some());
    let tip = root2.query_selector("svg#b g > title").unwrap().unwrap();
    assert!(tip.text_content().unwrap().contains("median 0.3000"));
}
