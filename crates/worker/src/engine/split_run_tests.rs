//! A run read in two places (crates/worker/src/engine/split_run.rs), on trec_eval's own test files:
//! the page must see exactly what one parse of the whole file gives, before and after the tail is
//! parsed, and every case the cut cannot serve must start the load over.

use super::split_run::{PartScorer, PartScores, SplitOutcome, SplitPlan, SPLIT_MIN_BYTES};
use super::Workspace;
use crate::detect::DETECT_BYTES;
use ragscope_eval::formats::{parse_qrels, parse_run, topic_boundary};
use ragscope_protocol::{EvalRequest, FileId, Request, Response, SigTest};

/// trec_eval's test file `name`, its topics four times over (301, …, 303, 301.1, …, 303.3):
/// the first part is then longer than the format's detection, as the app's parts always are.
fn data(name: &str) -> Vec<u8> {
    let path = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/../shared/data/trec_eval/"
    );
    let bytes = std::fs::read(format!("{path}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = String::from_utf8(bytes).expect("text");
    let mut out = text.clone();
    for copy in 1..4 {
        for line in text.lines() {
            let qid_end = line.find(char::is_whitespace).expect("fields");
            out.push_str(&format!(
                "{}.{copy}{}\n",
                &line[..qid_end],
                &line[qid_end..]
            ));
        }
    }
    out.into_bytes()
}

const QRELS: u32 = 1;
const RUN: u32 = 2;

fn evaluate(ws: &mut Workspace, measures: &[&str]) -> (String, Vec<Response>) {
    let request = Request::Evaluate(EvalRequest {
        measures: measures.iter().map(|s| s.to_string()).collect(),
        baseline: None,
        test: SigTest::PairedT,
        generation: 3,
    });
    let out = ws.handle(request);
    match out.last() {
        Some(Response::Report(r)) => (format!("{:?}", r.runs), out),
        other => panic!("no report: {other:?}"),
    }
}

fn evaluate_request(measures: &[&str]) -> Request {
    Request::Evaluate(EvalRequest {
        measures: measures.iter().map(|s| s.to_string()).collect(),
        baseline: None,
        test: SigTest::PairedT,
        generation: 3,
    })
}

/// A workspace with the qrels loaded and evaluated once (as the page does) with `measures`.
fn with_qrels(measures: &[&str]) -> Workspace {
    let mut ws = Workspace::default();
    let answer = ws.load_whole(QRELS, "qrels.test", &data("qrels.test"));
    assert!(
        matches!(answer.last(), Some(Response::Loaded { .. })),
        "{answer:?}"
    );
    evaluate(&mut ws, measures);
    ws
}

/// What the helper does with the part from `cut` on (crates/worker/src/engine/shard.rs).
fn helper(run: &[u8], cut: usize, measures: &[String]) -> Result<PartScores, String> {
    let qrels = parse_qrels("qrels.test", &data("qrels.test")).map_err(|e| e.to_string())?;
    let later = parse_run("results.test", &run[cut..]).map_err(|e| e.to_string())?;
    let measures: Vec<ragscope_eval::Measure> =
        measures.iter().map(|m| m.parse().unwrap()).collect();
    let results = ragscope_eval::evaluate(&qrels, &later, &measures);
    Ok(PartScores::of(&later, results))
}

/// The run's first part fed to `ws` and the helper's answer for the rest: what the load says.
/// The first part scored as it is parsed, as the app's worker does it.
fn load_split(ws: &mut Workspace, run: &[u8], cut: usize) -> SplitOutcome {
    load_split_scoring(ws, run, cut, true)
}

/// [`load_split`], the first part scored as it is parsed or once it is all parsed.
fn load_split_scoring(ws: &mut Workspace, run: &[u8], cut: usize, as_parsed: bool) -> SplitOutcome {
    let plan = ws
        .split_plan(SPLIT_MIN_BYTES, head(run), Some(QRELS))
        .expect("a run to read in two places");
    ws.handle(Request::LoadStart {
        id: RUN,
        name: "results.test".into(),
        size: run.len() as u64,
    });
    if as_parsed {
        ws.score_while_loading(RUN, &plan);
    }
    // a part read to be scored grows no heap for the run (crates/worker/src/engine/blob_load.rs)
    assert_eq!(ws.keeps_what_it_reads(RUN), !as_parsed);
    for chunk in run[..cut].chunks(4096) {
        let answer = ws.handle(Request::LoadChunk {
            id: RUN,
            bytes: chunk.to_vec(),
        });
        assert!(
            matches!(answer[..], [Response::Progress { .. }]),
            "{answer:?}"
        );
    }
    let later = helper(run, cut, &plan.measures);
    finish_split(ws, RUN, &plan, later).expect("the load was under way")
}

/// This worker's part scored and joined with the helper's answer, as `blob_load::load` does.
fn finish_split(
    ws: &mut Workspace,
    id: FileId,
    plan: &SplitPlan,
    later: Result<PartScores, String>,
) -> Option<SplitOutcome> {
    Some(match ws.score_first_part(id, plan)? {
        Ok(first) => ws.join_parts(id, plan, first, later),
        Err(again) => again,
    })
}

/// One parse of the whole file: the report rows and the load's answer.
fn whole(run: &[u8], measures: &[&str]) -> (Workspace, Response, String) {
    let mut ws = with_qrels(measures);
    let loaded = ws.load_whole(RUN, "results.test", run).remove(0);
    let (rows, _) = evaluate(&mut ws, measures);
    (ws, loaded, rows)
}

/// A load started over: the whole file through the ordinary path gives one parse's answer
/// and numbers.
fn read_again_whole(ws: &mut Workspace, run: &[u8]) {
    for chunk in run.chunks(8192) {
        ws.handle(Request::LoadChunk {
            id: RUN,
            bytes: chunk.to_vec(),
        });
    }
    let loaded = ws.handle(Request::LoadEnd { id: RUN }).remove(0);
    let (_, expected_loaded, expected_rows) = whole(run, &MEASURES);
    assert_eq!(loaded, expected_loaded);
    assert_eq!(evaluate(ws, &MEASURES).0, expected_rows);
}

fn head(file: &[u8]) -> &[u8] {
    &file[..file.len().min(DETECT_BYTES)]
}

const MEASURES: [&str; 5] = ["nDCG@10", "MAP", "MRR", "P@10", "R@100"];

#[test]
fn the_page_sees_the_whole_runs_numbers_before_and_after_the_tail() {
    for as_parsed in [true, false] {
        the_page_sees_the_whole_runs_numbers(as_parsed);
    }
}

/// The first part scored as it is parsed (the app's way), or once it is all parsed (a part
/// shorter than the format's detection).
fn the_page_sees_the_whole_runs_numbers(as_parsed: bool) {
    let run = data("results.test");
    let cut = run.len() / 2 + topic_boundary(&run[run.len() / 2..]).expect("a later topic");
    assert!(
        cut > DETECT_BYTES,
        "the first part is detected before it ends"
    );
    let (mut expected_ws, expected_loaded, expected_rows) = whole(&run, &MEASURES);

    let mut ws = with_qrels(&MEASURES);
    let SplitOutcome::Kept(loaded) = load_split_scoring(&mut ws, &run, cut, as_parsed) else {
        panic!("the cut serves a run written topic by topic")
    };
    assert_eq!(loaded, expected_loaded, "the summary counts both parts");
    let tail = ws.tail().expect("the run is left to parse whole").clone();
    assert_eq!(tail.id, RUN);
    // the page's evaluation after `Loaded` is answered from the kept scores
    assert!(ws.answers_without_tail(&evaluate_request(&MEASURES)));
    assert!(!ws.answers_without_tail(&evaluate_request(&["MAP"])));
    // forgetting the run needs no tail; forgetting the qrels needs the whole run kept
    assert!(ws.answers_without_tail(&Request::Remove { id: RUN }));
    assert!(ws.answers_without_tail(&Request::Clear));
    assert!(!ws.answers_without_tail(&Request::Remove { id: QRELS }));
    assert!(!ws.answers_without_tail(&Request::Topic {
        run: RUN,
        qid: "303".into()
    }));
    let (rows, out) = evaluate(&mut ws, &MEASURES);
    assert_eq!(rows, expected_rows);
    assert!(out.len() >= 2, "progress, then the report");

    let parsed = parse_run("results.test", &run).map_err(|e| e.to_string());
    assert_eq!(ws.complete_tail(parsed), None);
    assert!(ws.tail().is_none());
    // the run itself as one parse gives it: docnos, scores, line numbers, the last tag
    assert!(ws.runs == expected_ws.runs, "not the run one parse gives");
    // now every request sees the whole run: other measures, and the last topic's ranking
    let others = ["bpref", "Rprec", "P@5"];
    assert_eq!(
        evaluate(&mut ws, &others).0,
        evaluate(&mut expected_ws, &others).0
    );
    for qid in ["301", "302", "303"] {
        assert_eq!(
            format!("{:?}", ws.topic(RUN, qid)),
            format!("{:?}", expected_ws.topic(RUN, qid))
        );
    }
}

#[test]
fn a_topic_on_both_sides_starts_the_load_over() {
    // topic 301's first line moved to the end: it is on both sides of any cut
    let text = String::from_utf8(data("results.test")).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let run = format!("{rest}{first}\n").into_bytes();
    let cut = run.len() / 2 + topic_boundary(&run[run.len() / 2..]).expect("a later topic");
    let mut ws = with_qrels(&MEASURES);
    match load_split(&mut ws, &run, cut) {
        SplitOutcome::Again(why) => assert!(why.contains("both sides"), "{why}"),
        SplitOutcome::Kept(r) => panic!("kept: {r:?}"),
    }
    assert!(ws.tail().is_none());
    assert!(
        ws.keeps_what_it_reads(RUN),
        "the load begun again keeps the run"
    );
    read_again_whole(&mut ws, &run);
}

/// A topic that comes back within the first part cannot be scored as it is parsed: the load
/// starts over, and the whole file read the ordinary way gives one parse's numbers.
#[test]
fn a_topic_that_comes_back_in_the_first_part_starts_the_load_over() {
    // topic 301's first line moved after topic 302.1's lines: both before the cut, at 303.1
    let text = String::from_utf8(data("results.test")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let topic = |q: &str| {
        lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(q))
            .unwrap()
    };
    let mut moved = lines.clone();
    let line = moved.remove(topic("301"));
    moved.insert(topic("303.1") - 1, line);
    let run = format!("{}\n", moved.join("\n")).into_bytes();
    // where 303.1 starts (the boundary after the middle is the moved line's)
    let cut = moved[..topic("303.1")]
        .iter()
        .map(|l| l.len() + 1)
        .sum::<usize>();
    assert!(run[cut..].starts_with(b"303.1") && run[cut - 1] == b'\n');
    assert!(cut > DETECT_BYTES, "scored as it is parsed");
    let mut ws = with_qrels(&MEASURES);
    match load_split(&mut ws, &run, cut) {
        SplitOutcome::Again(why) => assert!(why.contains("comes back"), "{why}"),
        SplitOutcome::Kept(r) => panic!("kept: {r:?}"),
    }
    assert!(ws.tail().is_none() && ws.scores.is_empty());
    read_again_whole(&mut ws, &run);
}

#[test]
fn a_bad_later_part_or_a_failed_helper_starts_the_load_over() {
    let mut run = data("results.test");
    let mid = run.len() / 2;
    let cut = mid + topic_boundary(&run[mid..]).expect("a later topic");
    let at = cut + 40;
    run.splice(at..at, b"\n303 Q0 doc 1 high STANDARD\n".iter().copied());
    let mut ws = with_qrels(&MEASURES);
    let SplitOutcome::Again(why) = load_split(&mut ws, &run, cut) else {
        panic!("kept a run whose later part does not parse")
    };
    assert!(why.contains("the helper"), "{why}");
    // the whole file's error, as one parse reports it
    let mut answers = Vec::new();
    for chunk in run.chunks(8192) {
        answers.extend(ws.handle(Request::LoadChunk {
            id: RUN,
            bytes: chunk.to_vec(),
        }));
    }
    answers.extend(ws.handle(Request::LoadEnd { id: RUN }));
    let expected = parse_run("results.test", &run).unwrap_err().to_string();
    match answers.last() {
        Some(Response::LoadFailed { error, .. }) => assert_eq!(error, &expected),
        other => panic!("{other:?}"),
    }

    // a helper that could not read its part: the load starts over too
    let mut ws = with_qrels(&MEASURES);
    let run = data("results.test");
    let plan = ws
        .split_plan(SPLIT_MIN_BYTES, head(&run), Some(QRELS))
        .unwrap();
    ws.handle(Request::LoadStart {
        id: RUN,
        name: "results.test".into(),
        size: run.len() as u64,
    });
    ws.handle(Request::LoadChunk {
        id: RUN,
        bytes: run[..cut].to_vec(),
    });
    let outcome = finish_split(&mut ws, RUN, &plan, Err("no qrels 1".into()));
    assert!(
        matches!(outcome, Some(SplitOutcome::Again(_))),
        "{outcome:?}"
    );
    assert!(ws.tail().is_none() && ws.scores.is_empty());
}

#[test]
fn a_run_that_no_longer_reads_drops_it_and_keeps_the_rest() {
    let run = data("results.test");
    let cut = run.len() / 2 + topic_boundary(&run[run.len() / 2..]).expect("a later topic");
    let qrels_only = evaluate(&mut with_qrels(&MEASURES), &MEASURES).0;
    // the run read again whole is unreadable (the file changed on disk: Chromium refuses to
    // read a picked file whose modification time moved), or no longer parses
    let changed = parse_run("results.test", b"301 Q0 doc 1 high STANDARD\n");
    let changed = changed.map_err(|e| e.to_string());
    let bad_score = changed.clone().expect_err("a bad score");
    for (tail, why) in [
        (Err("NotReadableError".to_string()), "NotReadableError"),
        (changed, bad_score.as_str()),
    ] {
        let mut ws = with_qrels(&MEASURES);
        let SplitOutcome::Kept(_) = load_split(&mut ws, &run, cut) else {
            panic!("the cut serves a run written topic by topic")
        };
        match ws.complete_tail(tail) {
            Some(Response::LoadFailed { id, name, error }) => {
                assert_eq!((id, name.as_str()), (RUN, "results.test"));
                assert!(error.contains("changed while it was read"), "{error}");
                assert!(error.contains(why), "{error}");
            }
            other => panic!("{other:?}"),
        }
        assert!(ws.tail().is_none() && !ws.scores.contains_key(&RUN));
        assert!(ws.runs.iter().all(|(id, _, _)| *id != RUN));
        // what is left is what was loaded before the run: the qrels' report, no kept scores
        assert_eq!(evaluate(&mut ws, &MEASURES).0, qrels_only);
    }
}

#[test]
fn the_helper_scoring_topic_by_topic_answers_what_a_whole_parse_does() {
    let qrels = parse_qrels("qrels.test", &data("qrels.test")).unwrap();
    let measures: Vec<ragscope_eval::Measure> = ["nDCG@10", "MAP", "bpref", "P@5", "NumRelRet"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    let opts = ragscope_eval::EvalOptions::default();
    let run = data("results.test");
    let cut = run.len() / 2 + topic_boundary(&run[run.len() / 2..]).expect("a later topic");
    // topics out of qid order: 303's lines first
    let text = String::from_utf8(run.clone()).unwrap();
    let (early, late): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| !l.starts_with("303"));
    let reordered = format!("{}\n{}\n", late.join("\n"), early.join("\n")).into_bytes();
    // the later part, and whole files (no last newline; topics out of order)
    for (part, slice) in [
        (&run[cut..], 700),
        (&run[..], 4096),
        (run.trim_ascii_end(), 1),
        (&reordered[..], 1000),
    ] {
        let whole = parse_run("run", part).unwrap();
        let expected = PartScores::of(&whole, ragscope_eval::evaluate(&qrels, &whole, &measures));
        let mut scorer = PartScorer::new("run", &qrels, &measures, &opts);
        for bytes in part.chunks(slice) {
            assert_eq!(scorer.feed(&qrels, bytes), Ok(true));
        }
        assert_eq!(scorer.finish(&qrels), Ok(expected), "slices of {slice}");
    }
    // a topic that comes back after it was scored: parsed whole instead
    let text = String::from_utf8(run.clone()).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let comeback = format!("{rest}{first}\n");
    let mut scorer = PartScorer::new("run", &qrels, &measures, &opts);
    let fed: Vec<bool> = comeback
        .as_bytes()
        .chunks(512)
        .map(|b| scorer.feed(&qrels, b).unwrap())
        .collect();
    assert!(fed.contains(&false), "the comeback is seen");
    assert!(!fed.ends_with(&[false, true]), "nothing is read after it");
    let refused = scorer
        .finish(&qrels)
        .expect_err("a part whose topic came back");
    assert!(refused.contains("comes back"), "{refused}");
    // a bad line: the parser's own error, with its line in the part
    let mut scorer = PartScorer::new("run", &qrels, &measures, &opts);
    let bad = format!("{first}\n303 Q0 doc 1 high STANDARD\n");
    let expected = parse_run("run", bad.as_bytes()).unwrap_err().to_string();
    assert_eq!(
        scorer
            .feed(&qrels, bad.as_bytes())
            .and_then(|_| scorer.finish(&qrels).map(|_| true)),
        Err(expected)
    );
}

#[test]
fn no_split_without_qrels_shared_or_with_utilities_or_for_small_files() {
    let run = data("results.test");
    let head = head(&run);
    let ws = with_qrels(&MEASURES);
    assert!(ws.split_plan(SPLIT_MIN_BYTES, head, Some(QRELS)).is_some());
    assert!(ws
        .split_plan(SPLIT_MIN_BYTES - 1, head, Some(QRELS))
        .is_none());
    assert!(ws.split_plan(SPLIT_MIN_BYTES, head, None).is_none());
    assert!(ws
        .split_plan(SPLIT_MIN_BYTES, head, Some(QRELS + 9))
        .is_none());
    let qrels = data("qrels.test");
    assert!(ws
        .split_plan(
            SPLIT_MIN_BYTES,
            super::split_run_tests::head(&qrels),
            Some(QRELS)
        )
        .is_none());
    let mut fresh = Workspace::default();
    assert!(fresh
        .split_plan(SPLIT_MIN_BYTES, head, Some(QRELS))
        .is_none());
    fresh.load_whole(QRELS, "qrels.test", &data("qrels.test"));
    assert!(
        fresh
            .split_plan(SPLIT_MIN_BYTES, head, Some(QRELS))
            .is_none(),
        "no evaluation asked yet: no measures"
    );
}

/// A part scored as it is parsed is not kept, so a load of one that ends the ordinary way
/// (`LoadEnd`: nothing in the app does this, but nothing stops it) fails with a clear reason
/// and keeps no run.
#[test]
fn a_scored_part_ended_the_ordinary_way_fails_clearly() {
    let run = data("results.test");
    let mut ws = with_qrels(&MEASURES);
    let plan = ws
        .split_plan(SPLIT_MIN_BYTES, head(&run), Some(QRELS))
        .expect("a run to read in two places");
    ws.handle(Request::LoadStart {
        id: RUN,
        name: "results.test".into(),
        size: run.len() as u64,
    });
    ws.score_while_loading(RUN, &plan);
    for chunk in run.chunks(4096) {
        ws.handle(Request::LoadChunk {
            id: RUN,
            bytes: chunk.to_vec(),
        });
    }
    match ws.handle(Request::LoadEnd { id: RUN }).remove(0) {
        Response::LoadFailed { id, error, .. } => {
            assert_eq!(id, RUN);
            assert!(error.contains("a part read to be scored"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(ws.runs.iter().all(|(id, _, _)| *id != RUN) && ws.tail().is_none());
}
