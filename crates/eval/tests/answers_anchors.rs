//! Answer-side formats and scores against the anchors' own data (../shared/data): nuggetizer's
//! expected metrics, Open RAG Eval's test oracles and CSVs, UMBRELA's sample qrels and run, and
//! the TREC 2024 RAG answer example.

use std::path::PathBuf;

use ragscope_eval::answers::graded::{self, GradedCompat};
use ragscope_eval::answers::nugget_scores::{self, Compat};
use ragscope_eval::answers::nuggetizer::{self, Assignment, Importance};
use ragscope_eval::answers::{citations, open_rag_eval, trec_rag, umbrela_qrels};
use serde_json::Value;

fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(path)
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(shared(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn nuggetizer_expected_metrics_from_its_assignments() {
    let answers =
        nuggetizer::parse_assignments("assignments.jsonl", &read("nuggetizer/assignments.jsonl"))
            .unwrap();
    let runs = nuggetizer::group_runs("assignments.jsonl", "assignments", answers).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run_id, "demo-run");
    let expected: Vec<Value> = String::from_utf8(read("nuggetizer/expected_metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for compat in [Compat::Nuggetizer, Compat::Paper] {
        let scores = nugget_scores::score_run(&runs[0], compat);
        for want in &expected {
            let got = if want["qid"] == "all" {
                scores.mean
            } else {
                scores
                    .topics
                    .iter()
                    .find(|t| t.qid == want["qid"])
                    .unwrap()
                    .scores
            };
            assert_eq!(got.v_strict, want["strict_vital_score"].as_f64().unwrap());
            assert_eq!(got.a_strict, want["strict_all_score"].as_f64().unwrap());
            assert_eq!(got.v, want["vital_score"].as_f64().unwrap());
            assert_eq!(got.a, want["all_score"].as_f64().unwrap());
        }
        // L: response_length 8 in nuggetizer mode; 9 whitespace words in the paper's.
        let want_l = if compat == Compat::Nuggetizer {
            8.0
        } else {
            9.0
        };
        assert_eq!(scores.mean.l, want_l);
    }
    // The scores file itself parses, "all" line included.
    let lines = nuggetizer::parse_scores(
        "expected_metrics.jsonl",
        &read("nuggetizer/expected_metrics.jsonl"),
    )
    .unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].qid, "all");
    let nuggets =
        nuggetizer::parse_nuggets("nuggets.jsonl", &read("nuggetizer/nuggets.jsonl")).unwrap();
    assert_eq!(nuggets[0].nuggets[1].importance, Importance::Okay);
}

#[test]
fn open_rag_eval_autonugget_oracle() {
    let oracle: Value =
        serde_json::from_slice(&read("open-rag-eval/oracle_from_tests.json")).unwrap();
    let case = &oracle["autonugget_evaluate_answer"];
    let labels: Vec<Importance> = case["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| match l.as_str().unwrap() {
            "vital" => Importance::Vital,
            _ => Importance::Okay,
        })
        .collect();
    let assignments: Vec<Assignment> = case["assignments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| match a.as_str().unwrap() {
            "support" => Assignment::Support,
            _ => Assignment::PartialSupport,
        })
        .collect();
    let s = nugget_scores::score_nuggets(labels.iter().zip(&assignments), Compat::OpenRagEval);
    let want = &case["expected"];
    // The test file states values rounded to 6 places (assertAlmostEqual).
    for (got, key) in [
        (s.a, "All"),
        (s.a_strict, "All Strict"),
        (s.v, "Vital"),
        (s.v_strict, "Vital Strict"),
        (s.w, "Weighted"),
        (s.w_strict, "Weighted Strict"),
    ] {
        assert!(
            (got - want[key].as_f64().unwrap()).abs() < 1e-6,
            "{key}: {got}"
        );
    }
    // The W clamp the reference describes: two supported vital nuggets, no okay → 0.8 (paper: 1).
    let two = [
        (Importance::Vital, Assignment::Support),
        (Importance::Vital, Assignment::Support),
    ];
    let it = || two.iter().map(|(i, a)| (i, a));
    assert_eq!(
        nugget_scores::score_nuggets(it(), Compat::OpenRagEval).w,
        0.8
    );
    assert_eq!(nugget_scores::score_nuggets(it(), Compat::Paper).w, 1.0);
}

#[test]
fn open_rag_eval_sort_keeps_vital_first_and_twenty() {
    // oracle: nugget1 vital, nugget2 okay, nugget3 vital → 1, 3, 2. Scoring only sees the
    // order through truncation, so check with 25 nuggets: 5 okay first then 20 vital
    // supported; sorted, the 20 kept are all vital → V_strict 1, and no okay is left (W clamp).
    let mut items = vec![(Importance::Okay, Assignment::Support); 5];
    items.extend(vec![(Importance::Vital, Assignment::Support); 20]);
    let s = nugget_scores::score_nuggets(items.iter().map(|(i, a)| (i, a)), Compat::OpenRagEval);
    assert_eq!(s.v_strict, 1.0);
    assert_eq!(s.a, 1.0);
    assert_eq!(s.w, 20.0 / 20.5);
    let p = nugget_scores::score_nuggets(items.iter().map(|(i, a)| (i, a)), Compat::Paper);
    assert_eq!(p.w, 1.0);
}

#[test]
fn open_rag_eval_umbrela_retrieval_oracle() {
    let oracle: Value =
        serde_json::from_slice(&read("open-rag-eval/oracle_from_tests.json")).unwrap();
    for case in oracle["umbrela_retrieval_metrics"].as_array().unwrap() {
        if let Some(scores) = case.get("umbrela_scores") {
            let grades: Vec<Option<i32>> = ["1", "2", "3"]
                .iter()
                .map(|k| Some(scores[*k].as_i64().unwrap() as i32))
                .collect();
            let k = case["k"].as_u64().unwrap() as usize;
            let s = graded::score_list(&grades, k, 0, GradedCompat::OpenRagEval);
            assert!((s.precision.unwrap() - case["precision@3"].as_f64().unwrap()).abs() < 1e-6);
            assert!((s.average_precision.unwrap() - case["AP@3"].as_f64().unwrap()).abs() < 1e-6);
            assert!((s.reciprocal_rank - case["MRR"].as_f64().unwrap()).abs() < 1e-6);
            // k beyond the list: skipped in open-rag-eval mode.
            assert_eq!(
                graded::score_list(&grades, 4, 0, GradedCompat::OpenRagEval).precision,
                None
            );
        } else {
            let grades: Vec<Option<i32>> = case["binary_relevance"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| Some(2 * b.as_i64().unwrap() as i32))
                .collect();
            let s = graded::score_list(&grades, grades.len(), 0, GradedCompat::OpenRagEval);
            assert!((s.average_precision.unwrap() - case["AP"].as_f64().unwrap()).abs() < 1e-6);
        }
    }
}

#[test]
fn open_rag_eval_loader_cases_and_counts() {
    let oracle: Value =
        serde_json::from_slice(&read("open-rag-eval/oracle_from_tests.json")).unwrap();
    for case in oracle["loader_parse_cases"].as_array().unwrap() {
        let parts =
            open_rag_eval::parse_generated_answer(case["generated_answer"].as_str().unwrap());
        let want = case["expected"].as_array().unwrap();
        assert_eq!(parts.len(), want.len(), "{case}");
        for (p, w) in parts.iter().zip(want) {
            assert_eq!(p.text, w["text"].as_str().unwrap());
            let cites: Vec<&str> = w["citations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            assert_eq!(p.citations, cites);
        }
    }
    // "[1, 2, 3, 4, 5]" expands to five markers.
    let five = open_rag_eval::parse_generated_answer("Training helps. [1, 2, 3, 4, 5]");
    assert_eq!(five[0].citations, ["[1]", "[2]", "[3]", "[4]", "[5]"]);

    for file in [
        "open-rag-eval/csv_results.csv",
        "open-rag-eval/test_csv_connector.csv",
    ] {
        let answers = open_rag_eval::read_answers(file, &read(file)[..]).unwrap();
        let mut ids: Vec<&str> = answers.iter().map(|a| a.query_id.as_str()).collect();
        ids.dedup();
        assert_eq!(
            ids.len(),
            oracle["loader_counts"]["n_query_ids"].as_u64().unwrap() as usize
        );
        let q6 = answers.iter().filter(|a| a.query_id == "query_6").count();
        assert_eq!(
            q6,
            oracle["loader_counts"]["query_6_runs"].as_u64().unwrap() as usize
        );
        assert_eq!(
            answers[0].query_id, "query_1",
            "BOM stripped from the first header"
        );
        assert_eq!(answers[0].passages.len(), 3);
        let q4 = answers.iter().find(|a| a.query_id == "query_4").unwrap();
        assert!(
            q4.answer.contains("\n\nNo other information"),
            "multi-line quoted field"
        );
    }
}

#[test]
fn umbrela_sample_qrels_and_run() {
    let qrels = umbrela_qrels::parse("sample.qrels", &read("umbrela/sample.qrels")).unwrap();
    assert!(umbrela_qrels::is_umbrela_graded(&qrels));
    let run = ragscope_eval::parse_run("sample.run", &read("umbrela/sample.run")).unwrap();
    // Ranked d3 (3), d2 (2), d1 (1), d0 (0): relevant (grade ≥ 2) at ranks 1 and 2 of 4.
    let s = graded::score_run(&run, &qrels, 2, GradedCompat::TrecEval);
    assert_eq!(s.mean.precision, Some(1.0));
    assert_eq!(s.mean.average_precision, Some(1.0));
    assert_eq!(s.mean.reciprocal_rank, 1.0);
    let s = graded::score_run(&run, &qrels, 10, GradedCompat::TrecEval);
    assert_eq!(s.mean.precision, Some(0.2));
    let s = graded::score_run(&run, &qrels, 10, GradedCompat::OpenRagEval);
    assert_eq!(s.mean.precision, None);
    // A grade outside 0–3 is refused with its place.
    let e = umbrela_qrels::parse("bad.qrels", b"1 0 d0 2\n1 0 d1 5\n").unwrap_err();
    assert_eq!((e.line, e.column, e.text.as_str()), (2, 8, "5"));
    assert!(e.to_string().starts_with("bad.qrels:2:8: grade '5'"), "{e}");
}

#[test]
fn trec_rag_answers_readme_example_and_demo_run() {
    let answers = trec_rag::parse(
        "readme.json",
        &read("nuggetizer/readme_trec2024_rag_answer_example.json"),
    )
    .unwrap();
    assert_eq!(answers.len(), 1);
    let a = &answers[0];
    assert_eq!(
        (a.run_id.as_str(), a.topic_id.as_str()),
        ("ragnarok", "2027497")
    );
    assert_eq!(a.references.len(), 20);
    assert_eq!(a.answer.len(), 10);
    assert_eq!(a.response_length, Some(192.0));
    assert_eq!(
        a.cited(&a.answer[0])[4],
        "msmarco_v2.1_doc_10_672519892#5_1260010758"
    );
    let demo = trec_rag::parse("demo-run.jsonl", &read("nuggetizer/demo-run.jsonl")).unwrap();
    assert_eq!(
        demo[0].text(),
        "Python is used for web development and data analysis."
    );
}

#[test]
fn positioned_errors() {
    // Citation out of range.
    let e = trec_rag::parse(
        "a.jsonl",
        br#"{"run_id":"r","topic_id":"1","references":["d"],"answer":[{"text":"x","citations":[0]}]}
{"run_id":"r","topic_id":"2","references":["d"],"answer":[{"text":"y","citations":[1]}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("answer[0].citations[0]"), "{e}");
    // Syntax error: line and column inside the second record, with the text at fault.
    let e = nuggetizer::parse_assignments(
        "b.jsonl",
        b"{\"qid\":\"1\",\"nuggets\":[]}\n{\"qid\":\"2\",\"nuggets\":[{\"text\":\"t\",\"assignment\":tru}]}\n",
    )
    .unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.column > 30, "{e}");
    assert!(e.to_string().contains("tru"), "{e}");
    // Missing field, and a nuggets file given as assignments.
    let e = nuggetizer::parse_assignments("c.jsonl", b"{\"nuggets\":[]}").unwrap_err();
    assert!(e.to_string().contains("qid"), "{e}");
    let e =
        nuggetizer::parse_assignments("d.jsonl", &read("nuggetizer/nuggets.jsonl")).unwrap_err();
    assert!(e.to_string().contains("no assignment"), "{e}");
    // Duplicate topic in a run.
    let two = b"{\"qid\":\"1\",\"nuggets\":[]}\n{\"qid\":\"1\",\"nuggets\":[]}\n";
    let answers = nuggetizer::parse_assignments("e.jsonl", two).unwrap();
    let e = nuggetizer::group_runs("e.jsonl", "e", answers).unwrap_err();
    assert_eq!(e.line, 2);
    // Truncated file.
    let e = nuggetizer::parse_nuggets("f.jsonl", b"{\"qid\":\"1\",\"nuggets\":[").unwrap_err();
    assert_eq!(e.line, 1);
    // Empty file.
    assert!(nuggetizer::parse_nuggets("g.jsonl", b"\n\n").is_err());
}

#[test]
fn chunked_feeding_equals_whole() {
    let bytes = read("nuggetizer/readme_trec2024_rag_answer_example.json");
    let whole = trec_rag::parse("x", &bytes).unwrap();
    for size in [1, 2, 3, 7, 64] {
        let mut p = trec_rag::RagAnswerParser::new("x");
        for chunk in bytes.chunks(size) {
            p.feed(chunk).unwrap();
        }
        assert_eq!(p.finish().unwrap(), whole, "chunk size {size}");
    }
}

#[test]
fn citation_kernel_follows_open_rag_eval() {
    use citations::PartJudgments;
    let part = |c: &[(&str, Option<f64>)]| PartJudgments {
        citations: c.iter().map(|(k, s)| (k.to_string(), *s)).collect(),
    };
    // Part 1 cites [1] (full) and [2] (partial); part 2 cites [1] (none); part 3 no citation;
    // part 4 cites a missing passage (unjudged: left out of recall).
    let s = citations::score_answer(&[
        part(&[("[1]", Some(1.0)), ("[2]", Some(0.5))]),
        part(&[("[1]", Some(0.0))]),
        part(&[]),
        part(&[("[9]", None)]),
    ]);
    // [1]: (1+0)/2 = 0.5, [2]: 0.5 → P = 0.5; parts: 0.75, 0, 0 → R = 0.25.
    assert_eq!(s.precision, 0.5);
    assert_eq!(s.recall, 0.25);
    assert_eq!(s.f1, 2.0 * 0.5 * 0.25 / 0.75);
}

#[test]
fn a_bom_split_over_chunks_is_skipped() {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(&read("nuggetizer/assignments.jsonl"));
    let whole = nuggetizer::parse_assignments("x", &bytes).unwrap();
    let mut p = nuggetizer::AssignmentsParser::new("x");
    for b in bytes.chunks(1) {
        p.feed(b).unwrap();
    }
    assert_eq!(p.finish().unwrap(), whole);
    // A lone partial BOM is junk with a position, not a panic.
    assert!(nuggetizer::parse_assignments("x", &[0xEF, 0xBB]).is_err());
}

/// The default graded scores are trec_eval's at relevance level 2: trec_eval 10.0's own
/// `-l2 -q` output on graded qrels (grades -1..4) is the oracle, per topic and averaged.
#[test]
fn graded_default_equals_trec_eval_at_level_two() {
    let qrels =
        ragscope_eval::parse_qrels("qrels.rel_level", &read("trec_eval/qrels.rel_level")).unwrap();
    let run = ragscope_eval::parse_run("results.test", &read("trec_eval/results.test")).unwrap();
    let s = graded::score_run(&run, &qrels, 10, GradedCompat::TrecEval);
    let out = String::from_utf8(read("trec_eval/out.test.aql")).unwrap();
    let mut checked = 0;
    for line in out.lines() {
        let f: Vec<&str> = line.split('\t').map(str::trim).collect();
        if f.len() != 3 {
            continue;
        }
        let scores = if f[1] == "all" {
            s.mean
        } else {
            match s.topics.iter().find(|t| t.qid == f[1]) {
                Some(t) => t.scores,
                None => continue,
            }
        };
        let got = match f[0] {
            "P_10" => scores.precision.unwrap(),
            "map_cut_10" => scores.average_precision.unwrap(),
            "recip_rank" => scores.reciprocal_rank,
            _ => continue,
        };
        assert_eq!(format!("{got:.4}"), f[2], "{line}");
        checked += 1;
    }
    assert_eq!(checked, 12, "3 measures × (3 topics + all)");
}
