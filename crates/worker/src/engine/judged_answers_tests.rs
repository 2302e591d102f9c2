//! The Answers view's citation scores and pointwise grades, from files loaded by hand (detected
//! from content): citation scores equal `ragscope citations`' on the same judgments (the CLI's
//! output committed beside them, with the commands that made it), grade means by hand.

use crate::engine::Workspace;
use ragscope_protocol::answer_files::{AnswerFile, AnswersReport};
use ragscope_protocol::{EvalRequest, FileKind, Request, Response, SigTest};

fn fixture(name: &str) -> Vec<u8> {
    let root = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/eval/tests/fixtures/answers/"
    );
    std::fs::read(format!("{root}{name}")).unwrap()
}

fn load(ws: &mut Workspace, id: u32, name: &str, bytes: &[u8]) -> Response {
    ws.load_whole(id, name, bytes).remove(0)
}

fn report(ws: &mut Workspace) -> Option<AnswersReport> {
    let out = ws.handle(Request::Evaluate(EvalRequest {
        measures: vec!["MAP".into()],
        baseline: None,
        test: SigTest::PairedT,
        generation: 1,
    }));
    match out.last() {
        Some(Response::Report(r)) => r.answers.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn citation_scores_equal_the_cli() {
    let mut ws = Workspace::default();
    match load(
        &mut ws,
        1,
        "judgments.jsonl",
        &fixture("judge-citations/judgments.jsonl"),
    ) {
        Response::Loaded { kind, .. } => {
            assert_eq!(kind, FileKind::Answers(AnswerFile::CitationJudgments))
        }
        other => panic!("{other:?}"),
    }
    let a = report(&mut ws).expect("answers report");
    let cli: serde_json::Value =
        serde_json::from_slice(&fixture("judge-citations/expected.json")).unwrap();
    let runs = cli["runs"].as_array().unwrap();
    assert_eq!(a.citations.len(), runs.len());
    for (got, want) in a.citations.iter().zip(runs) {
        assert_eq!(got.run, want["run_id"].as_str().unwrap());
        assert_eq!(got.precision, want["precision"].as_f64().unwrap());
        assert_eq!(got.recall, want["recall"].as_f64().unwrap());
        assert_eq!(got.f1, want["f1"].as_f64().unwrap());
        assert_eq!(got.scored as u64, want["answers_scored"].as_u64().unwrap());
        let answers = want["answers"].as_object().unwrap();
        assert_eq!(got.topics.len(), answers.len());
        for (qid, p, r, f) in &got.topics {
            let w = &answers[qid];
            assert_eq!(
                (*p, *r, *f),
                (
                    w["precision"].as_f64().unwrap(),
                    w["recall"].as_f64().unwrap(),
                    w["f1"].as_f64().unwrap()
                ),
                "{} {qid}",
                got.run
            );
        }
    }
    // By hand (see the fixture's README): alpha 0.75 / 0.8125.
    assert_eq!(
        (a.citations[0].precision, a.citations[0].recall),
        (0.75, 0.8125)
    );
    assert!(a.modes.iter().all(|m| m.runs.is_empty()));
    // A broken file fails alone, with its place; removing the file removes the view's data.
    match load(
        &mut ws,
        2,
        "bad.jsonl",
        b"{\"run_id\":\"r\",\"qid\":\"q\",\"sentence\":0,\"docid\":\"d\",\"support\":\"maybe\"}\n",
    ) {
        Response::LoadFailed { error, .. } => assert!(error.contains("bad.jsonl:1"), "{error}"),
        other => panic!("{other:?}"),
    }
    ws.handle(Request::Remove { id: 1 });
    assert!(report(&mut ws).is_none());
}

#[test]
fn pointwise_means_by_hand_failed_never_scored() {
    let mut ws = Workspace::default();
    match load(&mut ws, 1, "grades.csv", &fixture("pointwise-grades.csv")) {
        Response::Loaded { kind, .. } => {
            assert_eq!(kind, FileKind::Answers(AnswerFile::PointwiseGrades))
        }
        other => panic!("{other:?}"),
    }
    let a = report(&mut ws).expect("answers report");
    // agent_a: (2 + 1 + 0) / 3 = 1; agent_b: (0 + 2) / 2 = 1, its query 2 failed (not a 0).
    let got: Vec<(&str, Option<f64>, usize, usize)> = a
        .grades
        .iter()
        .map(|g| (g.agent.as_str(), g.mean, g.graded, g.failed))
        .collect();
    assert_eq!(
        got,
        [("agent_a", Some(1.0), 3, 0), ("agent_b", Some(1.0), 2, 1)]
    );
    assert_eq!(
        a.grades[1].queries,
        [
            ("1".to_string(), Some(0.0)),
            ("2".to_string(), None),
            ("3".to_string(), Some(2.0))
        ]
    );
}
