//! Nugget scores against the packages' own scoring code, run by the committed generator
//! tests/oracle/answers/generate.py (nuggetizer 0.0.5, open-rag-eval 0.3.0, and the paper's
//! definitions written out in Python) on generated assignment files; plus property tests.

use std::path::PathBuf;

use proptest::prelude::*;
use ragscope_eval::answers::nugget_scores::{self, Compat, NuggetScores, SCORE_NAMES};
use ragscope_eval::answers::nuggetizer::{self, Assignment, Importance};
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/answers")
}

fn check(want: &Value, got: &NuggetScores, what: &str) {
    for name in SCORE_NAMES {
        let w = want[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: no {name}"));
        let g = got.get(name).unwrap();
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what} {name}: got {g}, oracle {w}"
        );
    }
}

#[test]
fn every_mode_equals_its_oracle_bit_for_bit() {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("expected.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (mode, compat) in [
        ("paper", Compat::Paper),
        ("nuggetizer", Compat::Nuggetizer),
        ("open-rag-eval", Compat::OpenRagEval),
    ] {
        for (file, want_run) in expected["files"]
            .as_array()
            .unwrap()
            .iter()
            .zip(expected["modes"][mode].as_array().unwrap())
        {
            let file = file.as_str().unwrap();
            let bytes = std::fs::read(fixtures().join(file)).unwrap();
            let answers = nuggetizer::parse_assignments(file, &bytes).unwrap();
            let runs = nuggetizer::group_runs(file, nuggetizer::file_stem(file), answers).unwrap();
            assert_eq!(runs.len(), 1);
            let run = nugget_scores::score_run(&runs[0], compat);
            assert_eq!(run.run_id, want_run["run_id"].as_str().unwrap());
            check(&want_run["mean"], &run.mean, &format!("{mode} {file} mean"));
            let topics = want_run["topics"].as_object().unwrap();
            assert_eq!(topics.len(), run.topics.len());
            for t in &run.topics {
                check(
                    &topics[&t.qid],
                    &t.scores,
                    &format!("{mode} {file} {}", t.qid),
                );
                checked += 1;
            }
            if let Some(all) = want_run.get("nuggetizer_all") {
                assert_eq!(
                    run.mean.v_strict,
                    all["strict_vital_score"].as_f64().unwrap()
                );
                assert_eq!(run.mean.a_strict, all["strict_all_score"].as_f64().unwrap());
                assert_eq!(run.mean.v, all["vital_score"].as_f64().unwrap());
                assert_eq!(run.mean.a, all["all_score"].as_f64().unwrap());
            }
        }
    }
    assert!(checked >= 3 * 3 * 20, "{checked}");
}

fn importance() -> impl Strategy<Value = Importance> {
    prop_oneof![
        Just(Importance::Vital),
        Just(Importance::Okay),
        Just(Importance::Other("failed".into()))
    ]
}

fn assignment() -> impl Strategy<Value = Assignment> {
    prop_oneof![
        Just(Assignment::Support),
        Just(Assignment::PartialSupport),
        Just(Assignment::NotSupport),
        Just(Assignment::Failed)
    ]
}

proptest! {
    #[test]
    fn nugget_scores_lie_in_unit_interval(
        nuggets in prop::collection::vec((importance(), assignment()), 0..40),
    ) {
        for compat in [Compat::Paper, Compat::Nuggetizer, Compat::OpenRagEval] {
            let s = nugget_scores::score_nuggets(nuggets.iter().map(|(i, a)| (i, a)), compat);
            for v in [s.a, s.a_strict, s.v, s.v_strict, s.w, s.w_strict] {
                prop_assert!((0.0..=1.0).contains(&v), "{compat:?} {s:?}");
            }
            prop_assert!(s.a_strict <= s.a && s.v_strict <= s.v && s.w_strict <= s.w);
        }
    }
}

/// open-rag-eval's CitationMetric.compute and AutoNuggetMetric._evaluate_answer, run by the
/// generator on stub judgments, written as a results CSV (TRECEvaluator.to_csv's columns).
#[test]
fn open_rag_eval_results_csv_citations_and_nuggets() {
    use ragscope_eval::answers::citations::{self, PartJudgments};
    use ragscope_eval::answers::open_rag_eval;
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("expected.json")).unwrap()).unwrap();
    let file = std::fs::File::open(fixtures().join("ore_results.csv")).unwrap();
    let scored = open_rag_eval::read_results("ore_results.csv", file).unwrap();
    let want = expected["ore_results"].as_array().unwrap();
    assert_eq!(scored.len(), want.len());
    let mut nuggets_checked = 0;
    for (s, w) in scored.iter().zip(want) {
        assert_eq!(s.query_id, w["query_id"].as_str().unwrap());
        assert_eq!(u64::from(s.run), w["run"].as_u64().unwrap());
        let bits = |v: f64| v.to_bits();
        // From the raw judgments (the kernel) and from the stored averages: both equal the
        // package's weighted_precision / weighted_recall / f1.
        let parts: Vec<PartJudgments> = w["judgments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| PartJudgments {
                citations: p
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| {
                        let score = c[1].as_str().and_then(citations::support_score);
                        (c[0].as_str().unwrap().to_string(), score)
                    })
                    .collect(),
            })
            .collect();
        let (c, p) = s.citation_averages.as_ref().unwrap();
        for got in [
            citations::score_answer(&parts),
            citations::from_averages(c, p),
        ] {
            assert_eq!(
                bits(got.precision),
                bits(w["precision"].as_f64().unwrap()),
                "{w}"
            );
            assert_eq!(bits(got.recall), bits(w["recall"].as_f64().unwrap()), "{w}");
            assert_eq!(bits(got.f1), bits(w["f1"].as_f64().unwrap()), "{w}");
        }
        assert_eq!(s.answered, Some(w["answered"] == "yes"));
        if let Some(ns) = w["nuggetizer_scores"].as_object() {
            let a = s.assigned().unwrap();
            let got = nugget_scores::score_answer(&a, Compat::OpenRagEval).scores;
            for (k, v) in [
                ("All", got.a),
                ("All Strict", got.a_strict),
                ("Vital", got.v),
                ("Vital Strict", got.v_strict),
                ("Weighted", got.w),
                ("Weighted Strict", got.w_strict),
            ] {
                assert_eq!(bits(v), bits(ns[k].as_f64().unwrap()), "{k} {w}");
            }
            nuggets_checked += 1;
        } else {
            assert!(s.assigned().is_none());
        }
    }
    assert!(nuggets_checked > 4);
}
