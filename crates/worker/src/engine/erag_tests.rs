//! eRAG measures in the app's worker: a context-set file written by `ragscope answer --erag`
//! makes the eRAG measures computable (and says so in its summary, which makes the picker offer
//! them); the values equal the Python oracle of the CLI test (crates/cli/tests/fixtures/erag,
//! tests/oracle/rouge/generate_erag.py); without the file the measure is a clear error.

use crate::engine::Workspace;
use ragscope_protocol::{EvalRequest, FileKind, Request, Response, SigTest, ERAG_LOADED};

fn fixture(name: &str) -> Vec<u8> {
    let root = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/cli/tests/fixtures/erag/"
    );
    std::fs::read(format!("{root}{name}")).unwrap()
}

fn load(ws: &mut Workspace, id: u32, name: &str, bytes: &[u8]) -> Response {
    ws.load_whole(id, name, bytes).remove(0)
}

fn evaluate(ws: &mut Workspace, measures: &[&str], generation: u32) -> Vec<Response> {
    ws.handle(Request::Evaluate(EvalRequest {
        measures: measures.iter().map(|m| m.to_string()).collect(),
        baseline: None,
        test: SigTest::PairedT,
        generation,
    }))
}

#[test]
fn erag_measures_follow_the_outcomes_file() {
    let mut ws = Workspace::default();
    load(&mut ws, 1, "qrels.txt", &fixture("qrels.txt"));
    load(&mut ws, 2, "run_a.txt", &fixture("run_a.txt"));
    load(&mut ws, 3, "run_b.txt", &fixture("run_b.txt"));
    let measures = ["eRAG-P@2", "eRAG-success(metric=rouge_l)@4"];
    // Before the outcomes are loaded: an error naming the measure.
    let out = evaluate(&mut ws, &measures, 1);
    let text = format!("{out:?}");
    assert!(text.contains("eRAG-P@2 needs eRAG outcomes"), "{text}");
    match load(&mut ws, 4, "answers.jsonl", &fixture("outcomes.jsonl")) {
        Response::Loaded { kind, summary, .. } => {
            assert_eq!(kind, FileKind::ContextSets);
            assert!(summary.contains(ERAG_LOADED), "{summary}");
        }
        other => panic!("{other:?}"),
    }
    let out = evaluate(&mut ws, &measures, 2);
    let Some(Response::Report(report)) = out.last() else {
        panic!("{out:?}")
    };
    let expected: serde_json::Value = serde_json::from_slice(&fixture("expected.json")).unwrap();
    let mut checked = 0;
    for row in &report.runs {
        let want = &expected["runs"][row.name.trim_end_matches(".txt")]["per_topic"];
        for (m, name) in measures.iter().enumerate() {
            for (t, qid) in report.topics.iter().enumerate() {
                if let Some(w) = want[qid][name].as_f64() {
                    let got = row.per_query[m][t];
                    assert!(
                        (got - w).abs() < 1e-12,
                        "{} {qid} {name}: {got} vs {w}",
                        row.name
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * (4 + 3));
    // Removing the file takes the measures away again.
    ws.handle(Request::Remove { id: 4 });
    assert!(format!("{:?}", evaluate(&mut ws, &measures, 3)).contains("needs eRAG outcomes"));
}
