//! The bundled demos, one click each: the RAG demo (the app's default: the NQ subset with
//! SmolLM2 utilities) and trec_eval's own three-topic test files.

use yew::prelude::*;

/// Which bundled files to load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Demo {
    /// The NQ-open subset (lost-in-the-middle order) as qrels + run + SmolLM2 utilities.
    Rag,
    /// trec_eval 10.0's test qrels and two runs.
    TrecEval,
}

impl Demo {
    /// The files, relative to the page (so the site works from any sub-path).
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Demo::Rag => &[
                "demo/nq/qrels.txt",
                "demo/nq/litm-order.run",
                "demo/nq/utilities.smollm2.tsv",
            ],
            Demo::TrecEval => &["demo/qrels.test", "demo/results.test", "demo/results.trunc"],
        }
    }

    /// The measures shown with it: the defaults, and for the RAG demo nDCG@5 beside UDCG@5.
    pub fn measures(self) -> Vec<String> {
        let mut m: Vec<String> = ragscope_eval::DEFAULT_MEASURES
            .iter()
            .map(|s| s.to_string())
            .collect();
        if self == Demo::Rag {
            m.extend(["nDCG@5".to_string(), "UDCG@5".to_string()]);
        }
        m
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_pick: Callback<Demo>,
}

#[function_component(DemoPicker)]
pub fn demo_picker(props: &Props) -> Html {
    let pick = |d: Demo| {
        let cb = props.on_pick.clone();
        Callback::from(move |_| cb.emit(d))
    };
    html! {
        <p class="demo-picker hint">
            { "Bundled examples (replace the loaded files): " }
            <button class="ghost small" id="demo-rag" onclick={pick(Demo::Rag)}
                title="20 NQ-open questions, 20 passages each in the lost-in-the-middle order, utilities of the top 10 from SmolLM2-135M-Instruct">
                { "RAG demo: NQ subset + SmolLM2 utilities" }</button>
            { " " }
            <button class="ghost small" id="demo-trec" onclick={pick(Demo::TrecEval)}>{ "trec_eval's test files" }</button>
        </p>
    }
}
