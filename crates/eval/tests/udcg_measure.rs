//! UDCG as a registered measure: names, and `evaluate` on a run + qrels + utilities built from
//! the authors' reference JSON (GiovanniTRA/UDCG data/dataset_with_udcg.json in
//! ../shared/data/udcg), checked against the values stored there by their code.

use std::collections::HashMap;
use std::sync::Arc;

use ragscope_eval::measures::MeasureKind;
use ragscope_eval::rag::utilities_tsv;
use ragscope_eval::rag::{Judgment, UdcgSpec};
use ragscope_eval::{
    evaluate, evaluate_with, parse_qrels, parse_run, try_evaluate, EvalError, EvalOptions, Measure,
};

const MODEL: &str = "meta-llama/Llama-3.2-3B-Instruct";

struct Example {
    qid: String,
    /// (docno, is_relevant, no_res_prob) in list order.
    passages: Vec<(String, bool, f64)>,
    stored: f64,
}

fn examples() -> Vec<Example> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/udcg/dataset_with_udcg.json"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("anchor data missing: {path}: {e}"));
    let json: serde_json::Value = serde_json::from_str(&text).expect("reference JSON");
    json.as_array()
        .expect("list")
        .iter()
        .map(|e| Example {
            qid: e["example_id"].as_str().expect("id").to_string(),
            passages: e["passages"]
                .as_array()
                .expect("passages")
                .iter()
                .map(|p| {
                    (
                        p["doc_id"].as_str().expect("doc_id").to_string(),
                        p["is_relevant"].as_bool().expect("is_relevant"),
                        p["models_info"][MODEL]["no_res_prob"]
                            .as_f64()
                            .expect("no_res_prob"),
                    )
                })
                .collect(),
            stored: e["udcg"][MODEL].as_f64().expect("stored udcg"),
        })
        .collect()
}

/// The passages as a TREC run in their list order (descending scores), `is_relevant` as qrels,
/// `no_res_prob` as a utilities TSV; `skip` drops one utility row (qid, docno).
fn files(examples: &[Example], skip: Option<(&str, &str)>) -> (String, String, String) {
    let (mut run, mut qrels) = (String::new(), String::new());
    let mut tsv = String::from("qid\tdocno\trelevant\tno_res_prob\n");
    for e in examples {
        let n = e.passages.len();
        for (i, (docno, rel, p)) in e.passages.iter().enumerate() {
            run += &format!("{} Q0 {docno} {} {} ref\n", e.qid, i + 1, n - i);
            qrels += &format!("{} 0 {docno} {}\n", e.qid, u8::from(*rel));
            if skip != Some((e.qid.as_str(), docno.as_str())) {
                tsv += &format!("{}\t{docno}\t{}\t{p}\n", e.qid, u8::from(*rel));
            }
        }
    }
    (run, qrels, tsv)
}

fn options(tsv: &str) -> EvalOptions {
    EvalOptions {
        utilities: Some(Arc::new(
            utilities_tsv::parse("u.tsv", tsv).expect("utilities"),
        )),
        ..EvalOptions::default()
    }
}

fn measures(names: &[&str]) -> Vec<Measure> {
    names
        .iter()
        .map(|n| n.parse().unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect()
}

#[test]
fn names_parse_and_print_back() {
    for (text, shown) in [
        ("UDCG", "UDCG"),
        ("UDCG@5", "UDCG@5"),
        ("udcg@5", "UDCG@5"),
        ("UDCG(gamma=0)@5", "UDCG(gamma=0)@5"),
        ("UDCG(gamma=1/3)@5", "UDCG@5"),
        ("UDCG(gamma=0.333)@5", "UDCG(gamma=0.333)@5"),
        ("UDCG(gamma=0.50)@5", "UDCG(gamma=0.5)@5"),
        ("UDCG(gamma=2/7)", "UDCG(gamma=2/7)"),
        ("UDCG(gain=binary)@5", "UDCG(gain=binary)@5"),
        ("UDCG(gain=utility)@5", "UDCG@5"),
        ("UDCG(compat=udcg-ref)@5", "UDCG(compat=udcg-ref)@5"),
        ("UDCG(compat=udcg-ref,gamma=0.333)", "UDCG(compat=udcg-ref)"),
        (
            "UDCG(compat=udcg-ref,gamma=1/3)",
            "UDCG(gamma=1/3,compat=udcg-ref)",
        ),
        (
            "UDCG(gamma=0, gain=binary)@10",
            "UDCG(gamma=0,gain=binary)@10",
        ),
    ] {
        let m: Measure = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(matches!(m.kind, MeasureKind::UDCG(_)), "{text}");
        assert_eq!(m.to_string(), shown, "{text}");
        assert_eq!(shown.parse::<Measure>().as_ref(), Ok(&m), "{shown}");
        assert!(m.needs_utilities() && m.trec_eval_equivalent().is_none());
    }
    let paper: Measure = "UDCG@5".parse().unwrap();
    let reference: Measure = "UDCG(gamma=0.333)@5".parse().unwrap();
    assert_ne!(paper, reference, "1/3 and 0.333 are different measures");
    for bad in [
        "UDCG@0",
        "UDCG(gamma=2)@5",
        "UDCG(gamma=-0.1)",
        "UDCG(gamma=1e-3)",
        "UDCG(rel=2)@5",
        "UDCG(gain=exp)@5",
        "UDCG(compat=trec)",
        "UDCG(gamma)@5",
    ] {
        assert!(bad.parse::<Measure>().is_err(), "{bad} should not parse");
    }
}

#[test]
fn registry_entry_documents_the_paper_equation() {
    let m: Measure = "UDCG@5".parse().unwrap();
    let f = m.family().expect("UDCG has a registry entry");
    assert_eq!(f.name, "UDCG");
    assert!(f
        .source
        .contains("Redefining Retrieval Evaluation in the Era of LLMs"));
    assert!(f.source.contains("Eq. 4"));
    assert!(f.formula.contains("γ") && !f.explanation.is_empty());
    assert!(ragscope_eval::rag::registry()
        .iter()
        .any(|g| std::ptr::eq(*g, f)));
    // trec_eval's table is unchanged: UDCG is not a trec_eval measure.
    assert!(ragscope_eval::registry().iter().all(|g| g.name != "UDCG"));
    let ndcg: Measure = "nDCG@10".parse().unwrap();
    assert_eq!(ndcg.family().map(|f| f.name), Some("ndcg_cut"));
}

#[test]
fn compat_mode_through_evaluate_reproduces_the_stored_values() {
    let ex = examples();
    assert_eq!(ex.len(), 3);
    let (run, qrels, tsv) = files(&ex, None);
    let run = parse_run("run", run.as_bytes()).unwrap();
    let qrels = parse_qrels("qrels", qrels.as_bytes()).unwrap();
    let ms = measures(&["UDCG(compat=udcg-ref)", "UDCG(compat=udcg-ref)@5", "nDCG@5"]);
    let results = try_evaluate(&qrels, &run, &ms, &options(&tsv)).unwrap();
    assert_eq!(results.topics, ["example_1", "example_2", "example_3"]);
    for m in &ms[..2] {
        for ((qid, got), e) in results.per_query(m).zip(&ex) {
            assert_eq!(qid, e.qid);
            assert!(
                (got - e.stored).abs() <= 1e-9,
                "{m} {qid}: {got} vs stored {}",
                e.stored
            );
        }
        assert_eq!(results.unjudged(m), Some(0));
    }
}

#[test]
fn paper_mode_equals_the_rag_kernel() {
    let ex = examples();
    let (run, qrels, tsv) = files(&ex, None);
    let run = parse_run("run", run.as_bytes()).unwrap();
    let qrels = parse_qrels("qrels", qrels.as_bytes()).unwrap();
    let names = [
        "UDCG",
        "UDCG@5",
        "UDCG@3",
        "UDCG@10",
        "UDCG(gamma=0)@5",
        "UDCG(gain=binary)@5",
        "UDCG(gamma=0.333,compat=udcg-ref)@2",
    ];
    let ms = measures(&names);
    let results = try_evaluate(&qrels, &run, &ms, &options(&tsv)).unwrap();
    for (name, m) in names.iter().zip(&ms) {
        let spec: UdcgSpec = name.parse().expect("kernel spec");
        for ((_, got), e) in results.per_query(m).zip(&ex) {
            let docnos: Vec<&str> = e.passages.iter().map(|p| p.0.as_str()).collect();
            let judgments: HashMap<String, Judgment> = e
                .passages
                .iter()
                .map(|(d, relevant, p)| {
                    (
                        d.clone(),
                        Judgment {
                            relevant: *relevant,
                            p_no_response: *p,
                        },
                    )
                })
                .collect();
            let want = spec.score_ranking(&docnos, &judgments).value;
            assert_eq!(got, want, "{name} {}", e.qid);
        }
    }
    // The paper's γ = 1/3 is not the reference's 0.333 (REFERENCE §3: ~4e-5 apart).
    let paper = results.mean(&ms[1]).unwrap();
    let stored = ex.iter().map(|e| e.stored).sum::<f64>() / 3.0;
    assert!((paper - stored).abs() > 1e-6 && (paper - stored).abs() < 1e-4);
}

#[test]
fn unjudged_passages_are_counted_and_utilities_are_required() {
    let ex = examples();
    let (run, qrels, tsv) = files(&ex, Some(("example_2", "doc_8")));
    let run = parse_run("run", run.as_bytes()).unwrap();
    let qrels = parse_qrels("qrels", qrels.as_bytes()).unwrap();
    let ms = measures(&["UDCG@5", "UDCG@2", "MAP"]);
    let results = try_evaluate(&qrels, &run, &ms, &options(&tsv)).unwrap();
    assert_eq!(results.unjudged(&ms[0]), Some(1));
    assert_eq!(results.unjudged(&ms[1]), Some(0), "doc_8 is ranked third");
    assert_eq!(results.unjudged(&ms[2]), Some(0));
    // Paper convention: the missing passage contributes utility 0 over a denominator of 5.
    let e = &ex[1];
    let (mut pos, mut neg) = (0.0, 0.0);
    for (d, rel, p) in &e.passages {
        if d == "doc_8" {
            continue;
        }
        if *rel {
            pos += 1.0 - p;
        } else {
            neg -= 1.0 - p;
        }
    }
    let want = 1.0 / (1.0 + (-(pos + neg / 3.0) / 5.0f64).exp());
    let got = results.per_query(&ms[0]).nth(1).unwrap().1;
    assert!((got - want).abs() < 1e-15, "{got} vs {want}");

    let err = try_evaluate(&qrels, &run, &ms, &EvalOptions::default()).unwrap_err();
    assert_eq!(err, EvalError::MissingUtilities("UDCG@5".into()));
    assert!(err.to_string().contains("UDCG@5 needs passage utilities"));
    let silent = evaluate(&qrels, &run, &ms);
    assert!(
        silent.mean(&ms[0]).unwrap().is_nan(),
        "no utilities: NaN, never 0"
    );
}

#[test]
fn missing_topics_and_cutoffs_follow_the_ranking() {
    let ex = examples();
    let (run, qrels, tsv) = files(&ex, None);
    // Drop example_3 from the run and reverse example_1's scores.
    let run: String = run
        .lines()
        .filter(|l| !l.starts_with("example_3"))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            if f[0] == "example_1" {
                let score: i32 = f[4].parse().unwrap();
                format!("{} Q0 {} {} {} ref\n", f[0], f[2], f[3], -score)
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let run = parse_run("run", run.as_bytes()).unwrap();
    let qrels = parse_qrels("qrels", qrels.as_bytes()).unwrap();
    let ms = measures(&["UDCG@2", "UDCG(compat=udcg-ref)@2"]);
    let opts = EvalOptions {
        complete: true,
        ..options(&tsv)
    };
    let r = evaluate_with(&qrels, &run, &ms, &opts);
    assert_eq!(r.topics.len(), 3);
    // example_1 reversed: its top 2 are doc_5 (p 0.0208) and doc_4 (p 0.1813), both irrelevant.
    let p = &ex[0].passages;
    let want = 1.0 / (1.0 + (((1.0 - p[4].2) + (1.0 - p[3].2)) / 3.0 / 2.0f64).exp());
    assert!((r.values[0][0] - want).abs() < 1e-15);
    // A topic missing from the run under -c is an empty context: σ(0) in the paper, 0 in the
    // reference code.
    assert_eq!(r.values[0][2], 0.5);
    assert_eq!(r.values[1][2], 0.0);
    // The max_docs cut (-M) applies before the UDCG cutoff.
    let opts = EvalOptions {
        max_docs: 1,
        ..opts
    };
    let r = evaluate_with(&qrels, &run, &ms[..1], &opts);
    let want = 1.0 / (1.0 + (((1.0 - p[4].2) / 3.0) / 2.0f64).exp());
    assert!((r.values[0][0] - want).abs() < 1e-15);
}

mod round_trip {
    use proptest::prelude::*;
    use ragscope_eval::measures::MeasureKind;
    use ragscope_eval::rag::{Convention, Gain, Gamma, UdcgVariant};
    use ragscope_eval::Measure;

    fn any_udcg() -> impl Strategy<Value = Measure> {
        (
            1u32..2000,
            0u32..=1000,
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(1u32..100),
        )
            .prop_map(|(den, num, binary, reference, cutoff)| {
                let mut m = Measure::new(MeasureKind::UDCG(UdcgVariant {
                    gamma: Gamma::new(num.min(den), den).expect("num ≤ den"),
                    gain: if binary { Gain::Binary } else { Gain::Utility },
                    convention: if reference {
                        Convention::Reference
                    } else {
                        Convention::Paper
                    },
                }));
                m.cutoff = cutoff;
                m
            })
    }

    proptest! {
        #[test]
        fn display_parses_back_to_the_same_measure(m in any_udcg()) {
            let text = m.to_string();
            let back: Measure = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert_eq!(back, m);
            prop_assert_eq!(back.udcg().map(|v| v.gamma.value()), m.udcg().map(|v| v.gamma.value()));
        }
    }
}
