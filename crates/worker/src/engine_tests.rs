//! The worker's logic on the anchors' own files, natively, fed in slices as the page feeds it.

use super::engine::Workspace;
use ragscope_protocol::{EvalRequest, FileKind, Report, Request, Response, SigTest};
use ragscope_web::export::{self, TableFormat};

fn shared(path: &str) -> Vec<u8> {
    let root = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/../shared/data/"
    );
    std::fs::read(format!("{root}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn data(name: &str) -> Vec<u8> {
    shared(&format!("trec_eval/{name}"))
}

fn summary(name: &str) -> Vec<(String, String)> {
    String::from_utf8(data(name))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 3 && f[1] == "all").then(|| (f[0].trim().to_string(), f[2].to_string()))
        })
        .collect()
}

/// Sends a file in `slice`-byte pieces, checking each acknowledgement; returns the last answer.
fn load(ws: &mut Workspace, id: u32, name: &str, bytes: &[u8], slice: usize) -> Response {
    ws.handle(Request::LoadStart {
        id,
        name: name.into(),
        size: bytes.len() as u64,
    });
    let mut sent = 0;
    for chunk in bytes.chunks(slice) {
        sent += chunk.len() as u64;
        let r = ws.handle(Request::LoadChunk {
            id,
            bytes: chunk.to_vec(),
        });
        match r.as_slice() {
            [Response::Progress { bytes, .. }] => assert_eq!(*bytes, sent),
            other => return other[0].clone(),
        }
    }
    ws.handle(Request::LoadEnd { id }).remove(0)
}

const MEASURES: [&str; 7] = ["MAP", "MRR", "nDCG@10", "P@10", "R@100", "bpref", "Rprec"];

fn evaluate(ws: &mut Workspace, test: SigTest) -> Report {
    let out = ws.handle(Request::Evaluate(EvalRequest {
        measures: MEASURES.iter().map(|s| s.to_string()).collect(),
        baseline: None,
        test,
        generation: 7,
    }));
    match out.last() {
        Some(Response::Report(r)) => (**r).clone(),
        other => panic!("no report: {other:?}"),
    }
}

#[test]
fn files_fed_in_odd_slices_give_what_trec_eval_prints() {
    let mut ws = Workspace::default();
    for (id, f) in ["qrels.test", "results.test"].into_iter().enumerate() {
        // 70,001-byte slices: boundaries fall inside lines and after detection's 64 KiB.
        let r = load(&mut ws, id as u32, f, &data(f), 70_001);
        assert!(matches!(r, Response::Loaded { .. }), "{r:?}");
    }
    let report = evaluate(&mut ws, SigTest::PairedT);
    assert_eq!(report.generation, 7);
    let expected = summary("out.test");
    let run = &report.runs[0];
    let mut compared = 0;
    for (m, info) in report.measures.iter().enumerate() {
        let Some(trec) = &info.trec_name else {
            continue;
        };
        if let Some((_, want)) = expected.iter().find(|(n, _)| n == trec) {
            assert_eq!(&export::fmt_value(run.means[m]), want, "{}", info.name);
            compared += 1;
        }
    }
    assert!(compared >= 5, "compared only {compared}");
    let num_q = expected.iter().find(|(n, _)| n == "num_q").unwrap();
    assert_eq!(run.num_queries.to_string(), num_q.1);
    assert_eq!(report.topics.len(), run.num_queries);
    assert!(report.runs[0].significance.iter().all(Option::is_none));
}

#[test]
fn the_csv_export_carries_trec_evals_numbers() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    let report = evaluate(&mut ws, SigTest::PairedT);
    let csv = export::table(&report, TableFormat::Csv);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let expected = summary("out.test");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let want = |trec: &str| expected.iter().find(|(n, _)| n == trec).unwrap().1.clone();
    assert_eq!(row[col("MAP")], want("map"));
    assert_eq!(row[col("MRR")], want("recip_rank"));
    assert_eq!(row[col("P@10")], want("P_10"));
    assert_eq!(row[col("bpref")], want("bpref"));
    assert_eq!(row[col("num_q")], want("num_q"));
    let md = export::table(&report, TableFormat::Markdown);
    assert!(md.contains(&format!("**{}**", want("map"))), "{md}");
    let tex = export::table(&report, TableFormat::Latex);
    assert!(tex.contains("\\begin{tabular}{lrrrrrrr}"), "{tex}");
    let json: serde_json::Value =
        serde_json::from_str(&export::table(&report, TableFormat::Json)).unwrap();
    assert_eq!(
        format!("{:.4}", json["runs"][0]["means"]["MAP"].as_f64().unwrap()),
        want("map")
    );
}

#[test]
fn a_bad_slice_names_file_line_and_text_and_keeps_the_rest() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    let bad = b"301 Q0 doc-a 1 0.5 tag\n301 Q0 doc-b 2 not-a-number tag\n";
    let Response::LoadFailed { error, .. } = load(&mut ws, 2, "broken.run", bad, 5) else {
        panic!("accepted a bad run")
    };
    assert!(error.contains("broken.run:2:"), "{error}");
    assert!(error.contains("not-a-number"), "{error}");
    assert_eq!(evaluate(&mut ws, SigTest::PairedT).runs.len(), 1);
    let Response::LoadFailed { error, .. } = load(
        &mut ws,
        3,
        "pool.jsonl",
        &shared("nuggetizer/pool.jsonl"),
        100,
    ) else {
        panic!("accepted a retrieval pool")
    };
    assert!(error.contains("not support yet"), "{error}");
}

#[test]
fn cancel_drops_a_half_loaded_file() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    let run = data("results.test");
    ws.handle(Request::LoadStart {
        id: 1,
        name: "results.test".into(),
        size: run.len() as u64,
    });
    ws.handle(Request::LoadChunk {
        id: 1,
        bytes: run[..40_000].to_vec(),
    });
    ws.handle(Request::Cancel { id: 1 });
    assert!(ws.handle(Request::LoadEnd { id: 1 }).is_empty());
    assert!(evaluate(&mut ws, SigTest::PairedT).runs.is_empty());
}

#[test]
fn a_file_by_url_outside_the_workers_main_loop_fails_and_keeps_the_rest() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    let before = evaluate(&mut ws, SigTest::PairedT);
    let out = ws.handle(Request::LoadBlob {
        id: 2,
        name: "late.run".into(),
        url: "blob:x".into(),
    });
    let [Response::LoadFailed { id: 2, error, .. }] = &out[..] else {
        panic!("{out:?}")
    };
    assert!(error.starts_with("late.run: "), "{error}");
    let after = evaluate(&mut ws, SigTest::PairedT);
    assert_eq!(after.runs.len(), 1);
    assert_eq!(after.runs[0].means, before.runs[0].means);
}

#[test]
fn two_runs_get_holm_corrected_tests_against_the_baseline() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    load(&mut ws, 2, "results.trunc", &data("results.trunc"), 1 << 22);
    for test in [SigTest::PairedT, SigTest::Randomization] {
        let report = evaluate(&mut ws, test);
        assert_eq!(report.baseline, 0);
        assert!(report.runs[0].significance.iter().all(Option::is_none));
        let s = report.runs[1].significance[0].expect("MAP tested");
        // With one comparison per measure Holm leaves p unchanged.
        assert_eq!(s.p_holm, s.p_value);
        // Paired over the topics both runs were scored on.
        let pairs: Vec<f64> = report.runs[1].per_query[0]
            .iter()
            .zip(&report.runs[0].per_query[0])
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|(a, b)| a - b)
            .collect();
        let diff = pairs.iter().sum::<f64>() / pairs.len() as f64;
        assert!((s.mean_difference - diff).abs() < 1e-12);
    }
}

#[test]
fn udcg_reference_json_points_reproduce_the_stored_scores() {
    let mut ws = Workspace::default();
    let bytes = shared("udcg/dataset_with_udcg.json");
    let r = load(&mut ws, 0, "dataset_with_udcg.json", &bytes, 1000);
    assert!(
        matches!(
            r,
            Response::Loaded {
                kind: FileKind::UdcgJson,
                ..
            }
        ),
        "{r:?}"
    );
    let report = evaluate(&mut ws, SigTest::PairedT);
    let stored: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let series = &report.udcg[0];
    assert_eq!(series.points.len(), stored.as_array().unwrap().len());
    for (p, ex) in series.points.iter().zip(stored.as_array().unwrap()) {
        let want = ex["udcg"]["meta-llama/Llama-3.2-3B-Instruct"]
            .as_f64()
            .unwrap();
        assert!(
            (p.udcg - want).abs() < 1e-12,
            "{}: {} vs {want}",
            p.qid,
            p.udcg
        );
    }
}

#[test]
fn the_topic_view_ranks_like_trec_eval_and_shows_relevance() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    let report = evaluate(&mut ws, SigTest::PairedT);
    let qid = report.topics[0].clone();
    let answer: [Response; 1] = ws
        .handle(Request::Topic {
            run: 1,
            qid: qid.clone(),
        })
        .try_into()
        .unwrap();
    let [Response::Topic(view)] = answer else {
        panic!("no topic view")
    };
    assert_eq!(view.qid, qid);
    assert!(view.docs.windows(2).all(|w| w[0].score >= w[1].score));
    // relstring over the shown rows agrees with P@10 for the topic.
    let rel_in_top10 = view
        .docs
        .iter()
        .take(10)
        .filter(|d| d.rel.unwrap_or(0) >= 1)
        .count();
    let p10 = report
        .measures
        .iter()
        .position(|m| m.name == "P@10")
        .unwrap();
    assert_eq!(rel_in_top10 as f64 / 10.0, report.runs[0].per_query[p10][0]);
}

/// The UDCG reference file turned into the app's inputs (a utilities TSV, a run listing each
/// example's passages in order, qrels): the app's UDCG measure in the reference convention
/// reproduces the reference implementation's stored scores, with and without a model column.
#[test]
fn udcg_measure_from_a_utilities_file_reproduces_the_stored_scores() {
    let bytes = shared("udcg/dataset_with_udcg.json");
    let examples: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let model = "meta-llama/Llama-3.2-3B-Instruct";
    for with_model in [false, true] {
        let (mut tsv, mut run, mut qrels) = (String::new(), String::new(), String::new());
        for ex in examples.as_array().unwrap() {
            let qid = ex["example_id"].as_str().unwrap();
            for (i, p) in ex["passages"].as_array().unwrap().iter().enumerate() {
                let doc = p["doc_id"].as_str().unwrap();
                let rel = u8::from(p["is_relevant"].as_bool().unwrap());
                let prob = p["models_info"][model]["no_res_prob"].as_f64().unwrap();
                let suffix = if with_model {
                    format!(" {model}")
                } else {
                    String::new()
                };
                tsv += &format!("{qid} {doc} {rel} {prob:e}{suffix}\n");
                run += &format!("{qid} Q0 {doc} {} {} tag\n", i + 1, 10 - i);
                qrels += &format!("{qid} 0 {doc} {rel}\n");
            }
        }
        let mut ws = Workspace::default();
        for (id, (name, text)) in [("q.qrels", &qrels), ("u.tsv", &tsv), ("r.run", &run)]
            .into_iter()
            .enumerate()
        {
            let r = load(&mut ws, id as u32, name, text.as_bytes(), 1 << 20);
            assert!(matches!(r, Response::Loaded { .. }), "{r:?}");
        }
        let out = ws.handle(Request::Evaluate(EvalRequest {
            measures: vec!["UDCG(compat=udcg-ref)@5".into()],
            baseline: None,
            test: SigTest::PairedT,
            generation: 1,
        }));
        let Some(Response::Report(report)) = out.last() else {
            panic!("{out:?}")
        };
        for (t, qid) in report.topics.iter().enumerate() {
            let ex = examples
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["example_id"] == qid.as_str())
                .unwrap();
            let want = ex["udcg"][model].as_f64().unwrap();
            let got = report.runs[0].per_query[0][t];
            assert!((got - want).abs() < 1e-12, "{qid}: {got} vs {want}");
        }
        assert_eq!(report.topics.len(), 3);
        // The RAG view's series uses the paper's UDCG@10 on the same files.
        assert_eq!(report.udcg[0].points.len(), 3);
    }
}

#[test]
fn udcg_without_utilities_is_refused_with_a_reason() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    let out = ws.handle(Request::Evaluate(EvalRequest {
        measures: vec!["UDCG@10".into()],
        baseline: None,
        test: SigTest::PairedT,
        generation: 3,
    }));
    let Some(Response::EvalFailed { error, generation }) = out.last() else {
        panic!("{out:?}")
    };
    assert_eq!(*generation, 3);
    assert!(error.contains("utilities"), "{error}");
}

#[test]
fn ties_at_the_shown_precision_are_all_best() {
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &data("qrels.test"), 1 << 22);
    load(&mut ws, 1, "results.test", &data("results.test"), 1 << 22);
    load(&mut ws, 2, "results.trunc", &data("results.trunc"), 1 << 22);
    let report = evaluate(&mut ws, SigTest::PairedT);
    let p10 = report
        .measures
        .iter()
        .position(|m| m.name == "P@10")
        .unwrap();
    let shown: Vec<String> = report
        .runs
        .iter()
        .map(|r| export::fmt_value(r.means[p10]))
        .collect();
    assert_eq!(shown[0], shown[1], "the fixture's P@10 tie");
    assert!(export::is_best(&report, 0, p10) && export::is_best(&report, 1, p10));
}

/// The runs' rows of a report, every number as written by `{:?}` (exact, NaN included).
fn rows(report: &Report) -> String {
    format!("{:?}", report.runs)
}

/// Evaluates as the worker does (step by step); returns the report and the runs whose scores
/// were kept from the evaluation before.
fn evaluate_counting(ws: &mut Workspace, measures: &[&str]) -> (Report, usize) {
    let mut ev = ws
        .start_evaluation(EvalRequest {
            measures: measures.iter().map(|s| s.to_string()).collect(),
            baseline: None,
            test: SigTest::PairedT,
            generation: 1,
        })
        .unwrap();
    while ev.step(ws).is_some() {}
    let reused = ev.reused();
    (ev.finish(ws), reused)
}

#[test]
fn loading_another_run_scores_only_that_one_with_the_same_numbers() {
    let (qrels, a, b) = (
        data("qrels.test"),
        data("results.test"),
        data("results.trunc"),
    );
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &qrels, 1 << 22);
    load(&mut ws, 1, "results.test", &a, 1 << 22);
    assert_eq!(evaluate_counting(&mut ws, &MEASURES).1, 0);
    load(&mut ws, 2, "results.trunc", &b, 1 << 22);
    let (report, reused) = evaluate_counting(&mut ws, &MEASURES);
    assert_eq!(reused, 1, "the first run's scores were kept");
    let mut fresh = Workspace::default();
    load(&mut fresh, 0, "qrels.test", &qrels, 1 << 22);
    load(&mut fresh, 1, "results.test", &a, 1 << 22);
    load(&mut fresh, 2, "results.trunc", &b, 1 << 22);
    let (expected, none) = evaluate_counting(&mut fresh, &MEASURES);
    assert_eq!(none, 0);
    assert_eq!(rows(&report), rows(&expected));
    // nothing changed: both kept, same numbers
    let (again, reused) = evaluate_counting(&mut ws, &MEASURES);
    assert_eq!((reused, rows(&again)), (2, rows(&expected)));
}

#[test]
fn kept_scores_are_not_used_with_other_qrels_measures_or_a_reloaded_run() {
    let (qrels, run) = (data("qrels.test"), data("results.test"));
    // every other judgment: other scores
    let fewer: Vec<u8> = String::from_utf8(qrels.clone())
        .unwrap()
        .lines()
        .step_by(2)
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    let mut ws = Workspace::default();
    load(&mut ws, 0, "qrels.test", &qrels, 1 << 22);
    load(&mut ws, 1, "results.test", &run, 1 << 22);
    let (first, _) = evaluate_counting(&mut ws, &MEASURES);

    // another qrels file replaces the first
    load(&mut ws, 2, "fewer.qrels", &fewer, 1 << 22);
    let (report, reused) = evaluate_counting(&mut ws, &MEASURES);
    let mut fresh = Workspace::default();
    load(&mut fresh, 2, "fewer.qrels", &fewer, 1 << 22);
    load(&mut fresh, 1, "results.test", &run, 1 << 22);
    let (expected, _) = evaluate_counting(&mut fresh, &MEASURES);
    assert_eq!(reused, 0);
    assert_ne!(rows(&report), rows(&first));
    assert_eq!(rows(&report), rows(&expected));

    // other measures
    let (report, reused) = evaluate_counting(&mut ws, &["P@5", "MAP"]);
    let (expected, _) = evaluate_counting(&mut fresh, &["P@5", "MAP"]);
    assert_eq!((reused, rows(&report)), (0, rows(&expected)));

    // the run removed: its scores go with it
    ws.handle(Request::Remove { id: 1 });
    let (report, reused) = evaluate_counting(&mut ws, &["P@5", "MAP"]);
    assert_eq!((reused, report.runs.len()), (0, 0));
}

#[test]
fn an_evaluation_ahead_of_the_request_is_the_one_the_page_then_asks_for() {
    let mut ws = Workspace::default();
    for (id, f) in ["qrels.test", "results.test"].into_iter().enumerate() {
        load(&mut ws, id as u32, f, &data(f), 70_001);
    }
    // nothing asked for yet: nothing to repeat
    assert!(ws.evaluation_ahead().is_none());
    evaluate(&mut ws, SigTest::PairedT);
    let r = load(&mut ws, 2, "again.test", &data("results.test"), 50_000);
    assert!(matches!(r, Response::Loaded { .. }), "{r:?}");
    let (mut ahead, of) = ws.evaluation_ahead().expect("qrels and runs only");
    assert_eq!(of.files, [0, 1, 2]);
    assert_eq!(of.measures, MEASURES);
    assert_eq!((of.baseline, of.test), (None, SigTest::PairedT));
    assert_eq!(ahead.generation(), 8);
    while ahead.step(&ws).is_some() {}
    let report = ahead.finish(&mut ws);
    assert_eq!(report.runs.len(), 2);
    // what the page's request then gets (`evaluate` asks as generation 7)
    let asked = evaluate(&mut ws, SigTest::PairedT);
    assert_eq!(
        Report {
            generation: 7,
            ..report
        },
        asked
    );
    // a second qrels (the agreement table) is more than the files say: none ahead
    load(&mut ws, 3, "qrels2.test", &data("qrels.test"), 70_001);
    assert!(ws.evaluation_ahead().is_none());
}
