//! The bundled demos, one click each: the RAG demo (the app's default: the NQ subset with
//! SmolLM2 utilities) and trec_eval's own three-topic test files.

use yew::prelude::*;

/// The RAG demo's context sets with SmolLM2's outcomes (`cargo xtask learn-data`): the RAG
/// tab's correlation study at first load.
pub const RAG_CONTEXTS: &str = "contexts.smollm2.jsonl";

/// What the RAG demo's outcomes are, said wherever they are shown.
pub const RAG_CONTEXTS_NOTE: &str = "The demo's outcomes: for each of its NQ-open questions, 6 contexts of 5 passages (3 with the gold passage at positions 1, 3 and 5, 3 without it; distractors drawn from the question's top 10), answered greedily by SmolLM2-135M-Instruct (Q4_1) with ragscope's own engine (`ragscope answer`) and scored by the lost-in-the-middle substring match; a question whose contexts all share one outcome is left out (the caption counts the questions used). A 135M model is a weak reader and most distractors are easier substitutes (only 3 of the subset's 60 questions keep the paper's Contriever distractors), so these correlations illustrate the study; they are not the paper's Table 3.";

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
                "demo/nq/contexts.smollm2.jsonl",
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
                title="20 NQ-open questions, 20 passages each in the lost-in-the-middle order, utilities of the top 10 from SmolLM2-135M-Instruct, and 6 contexts of 5 passages per question answered by it (the correlation study)">
                { "RAG demo: NQ subset + SmolLM2 utilities" }</button>
            { " " }
            <button class="ghost small" id="demo-trec" onclick={pick(Demo::TrecEval)}>{ "trec_eval's test files" }</button>
        </p>
    }
}

#[cfg(test)]
mod tests {
    use ragscope_eval::rag::contexts;
    use ragscope_eval::rag::correlation::{study, StudyConfig};
    use ragscope_eval::rag::utilities_tsv;

    /// The committed outputs of `cargo xtask learn-data` agree: every passage of the demo's
    /// context sets carries the relevance and p(NO-RESPONSE) the demo's utilities TSV holds for
    /// it, every context has 5 passages and an outcome, and the study has questions to use.
    #[test]
    fn committed_demo_contexts_match_the_demo_utilities() {
        let tsv = include_str!("../../../www/demo/nq/utilities.smollm2.tsv");
        let utilities = utilities_tsv::parse("utilities", tsv).unwrap();
        let text = include_str!("../../../www/demo/nq/contexts.smollm2.jsonl");
        let sets = contexts::parse(super::RAG_CONTEXTS, text, None).unwrap();
        assert!(sets.len() >= 2);
        for set in &sets {
            let judged = utilities.question("", &set.qid).unwrap();
            for p in &set.pool {
                let info = judged.get(&p.id).unwrap();
                assert_eq!(info.judgment.relevant, p.info.judgment.relevant, "{}", p.id);
                // The JSON holds the TSV's value exactly; serde_json's fast float parsing (no
                // `float_roundtrip` feature) may read it one ulp off.
                let (a, b) = (info.judgment.p_no_response, p.info.judgment.p_no_response);
                assert!(
                    (a - b).abs() <= 4.0 * f64::EPSILON * a.abs(),
                    "{}: {a} vs {b}",
                    p.id
                );
            }
            assert!(set.contexts.iter().all(|c| c.passages.len() == 5));
            assert!(set.model.contains("SmolLM2-135M-Instruct"));
        }
        let result = study(&sets, &StudyConfig::default()).unwrap();
        assert!(result.groups[0].questions >= 2);
    }
}
