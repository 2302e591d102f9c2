//! The answer-side judge tasks through the worker's glue, natively, against crates/judge's fake
//! provider: nuggetizer's example files through nuggets assign (the assignments load back as an
//! Answers file), RAGElo battles from the e2e fixtures (the CSV loads back as Tournament games;
//! agreeing, tied, flipped and failed games), nugget creation in rounds (two windows), and what
//! each task says is missing.

use super::job;
use crate::engine::Workspace;
use ragscope_judge::native::{ThreadRuntime, UreqTransport};
use ragscope_judge::{Control, Env, MemoryCache};
use ragscope_judge_fake::{markers, FakeServer};
use ragscope_protocol::answer_files::AnswerFile;
use ragscope_protocol::judges::{
    JudgeOutcome, JudgeResponse, JudgeSpec, ProviderChoice, TaskInputs,
};
use ragscope_protocol::{FileKind, Request, Response};
use std::cell::RefCell;
use std::rc::Rc;

fn load(ws: &mut Workspace, id: u32, name: &str, text: &str) -> Result<FileKind, String> {
    match ws.load_whole(id, name, text.as_bytes()).pop() {
        Some(Response::Loaded { kind, .. }) => Ok(kind),
        Some(Response::LoadFailed { error, .. }) => Err(error),
        other => panic!("{name}: {other:?}"),
    }
}

fn shared(path: &str) -> String {
    let p = format!(
        "{}/../shared/data/{path}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/browser/fixtures/judge-tasks/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn spec(server: &FakeServer, inputs: TaskInputs) -> JudgeSpec {
    JudgeSpec {
        provider: ProviderChoice::OpenAiCompatible,
        model: "fake-judge".into(),
        base_url: format!("{}/v1", server.url()),
        concurrency: 2,
        max_cost: None,
        max_tokens: None,
        inputs,
        batch: false,
        keep_replies: false,
    }
}

fn run(ws: &Workspace, spec: &JudgeSpec) -> (JudgeOutcome, Vec<JudgeResponse>) {
    let prepared = ws.prepare_judge(spec, None, false).unwrap();
    let env = Env {
        provider: prepared.env_provider(),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache: Rc::new(MemoryCache::new()),
    };
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(job::run(
        prepared,
        env,
        Control::new(),
        1,
        || 0.0,
        |r| out.borrow_mut().push(r),
    ));
    let out = out.into_inner();
    match out.last() {
        Some(JudgeResponse::Finished(o)) => (o.clone(), out),
        other => panic!("{other:?}"),
    }
}

#[test]
fn nuggets_assign_on_nuggetizers_files_loads_back_as_assignments() {
    let mut ws = Workspace::default();
    assert_eq!(
        load(
            &mut ws,
            1,
            "nuggets.jsonl",
            &shared("nuggetizer/nuggets.jsonl")
        ),
        Ok(FileKind::Answers(AnswerFile::Nuggets))
    );
    assert_eq!(
        load(
            &mut ws,
            2,
            "demo-run.jsonl",
            &shared("nuggetizer/demo-run.jsonl")
        ),
        Ok(FileKind::Answers(AnswerFile::RagAnswers))
    );
    let server = FakeServer::start(markers()).unwrap();
    let spec = spec(
        &server,
        TaskInputs::NuggetsAssign {
            nuggets: 1,
            answers: vec![2],
        },
    );
    let (outcome, _) = run(&ws, &spec);
    assert_eq!(outcome.name, "nuggets-assign-fake-judge.jsonl");
    assert_eq!((outcome.judged, outcome.failed), (1, 0));
    // nuggetizer's assignment line: the fake supports every nugget; importance kept.
    let line: serde_json::Value = serde_json::from_str(outcome.qrels.trim()).unwrap();
    assert_eq!(line["run_id"], "demo-run");
    assert_eq!(line["qid"], "q1");
    let nuggets: Vec<(&str, &str)> = line["nuggets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["importance"].as_str().unwrap(),
                n["assignment"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(nuggets, [("vital", "support"), ("okay", "support")]);
    assert_eq!(server.request_count(), 1);
    // Loaded like the page loads it: an assignments file the Answers view scores.
    assert_eq!(
        load(&mut ws, 3, &outcome.name, &outcome.qrels),
        Ok(FileKind::Answers(AnswerFile::Assignments))
    );
}

#[test]
fn pairwise_battles_write_ragelos_csv_with_ties_flips_and_failures() {
    let mut ws = Workspace::default();
    for (id, f) in [(1, "queries.csv"), (2, "answers.csv")] {
        assert_eq!(load(&mut ws, id, f, &fixture(f)), Ok(FileKind::RageloTable));
    }
    let server = FakeServer::start(markers()).unwrap();
    let spec = spec(
        &server,
        TaskInputs::Pairwise {
            queries: 1,
            answers: 2,
            documents: None,
        },
    );
    // 8 games (q1: 3, q2: 3, q3: 1, q4: 1) in both orders.
    let estimate = futures::executor::block_on(async {
        let prepared = ws.prepare_judge(&spec, None, true).unwrap();
        let env = Env {
            provider: prepared.env_provider(),
            transport: Rc::new(UreqTransport::new()),
            runtime: Rc::new(ThreadRuntime),
            cache: Rc::new(MemoryCache::new()),
        };
        job::estimate(&prepared, &env, 1).await
    });
    let JudgeResponse::Estimate(e) = estimate else {
        panic!("{estimate:?}")
    };
    assert_eq!((e.items, e.requests), (16, 16));
    assert!(e.first_prompt.contains("What is the capital of France?"));
    assert_eq!(server.request_count(), 0, "an estimate sends nothing");

    let (outcome, out) = run(&ws, &spec);
    assert_eq!(outcome.name, "pairwise-fake-judge.csv");
    assert!(outcome
        .qrels
        .starts_with("qid,agent_a,agent_b,raw_answer,answer,relevance\n"));
    // Read back with crates/eval's RAGElo reader (what `ragscope elo` reads).
    let rows =
        ragscope_eval::answers::ragelo_csv::parse_pairwise(&outcome.name, &outcome.qrels).unwrap();
    let games: Vec<(String, String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r.qid.clone(),
                r.agent_a.clone(),
                r.agent_b.clone(),
                format!("{:?}", r.verdict),
            )
        })
        .collect();
    let g = |q: &str, a: &str, b: &str, w: &str| (q.into(), a.into(), b.into(), w.into());
    assert_eq!(
        games,
        vec![
            g("q1", "alpha", "beta", "A"),
            g("q1", "alpha", "gamma", "A"),
            g("q1", "beta", "gamma", "Tie"),
            g("q2", "alpha", "beta", "B"),
            g("q2", "alpha", "gamma", "Tie"),
            g("q2", "beta", "gamma", "A"),
            g("q3", "alpha", "gamma", "Tie"),
        ]
    );
    assert_eq!(
        outcome.note.as_deref(),
        Some(
            "7 games judged in both orders; position flips (orders disagree, scored as a tie): \
             1 (14.3%)"
        )
    );
    // q4's two orders: unparseable, re-asked 3 times each, recorded with the raw reply.
    let mut failures: Vec<_> = out
        .iter()
        .filter_map(|r| match r {
            JudgeResponse::Failure { failure, .. } => Some(failure.clone()),
            _ => None,
        })
        .collect();
    // In the order they finished (two in flight).
    failures.sort_by(|a, b| a.docno.cmp(&b.docno));
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0].qid, "q4");
    assert_eq!(failures[0].docno, "agent_a=alpha agent_b=beta order=ab");
    assert_eq!(
        failures[0].raw.as_deref(),
        Some("I am not sure what you are asking.")
    );
    assert_eq!(failures[0].attempts, 4);
    assert_eq!((outcome.judged, outcome.failed), (14, 2));
    assert_eq!(server.request_count(), 14 + 2 * 4);
    // Loaded like the page loads it: games for the Tournament view.
    assert_eq!(
        load(&mut ws, 3, &outcome.name, &outcome.qrels),
        Ok(FileKind::RageloGames)
    );
}

#[test]
fn nugget_creation_runs_one_round_per_window_of_relevant_passages() {
    let mut ws = Workspace::default();
    let topics = "q1\tWhat is Python used for?\nq2\tWho wrote Hamlet?\n";
    // q1: 11 relevant passages (two windows) and one judged 0; q2: one passage.
    let mut passages = String::new();
    let mut qrels = String::new();
    for i in 0..12 {
        passages.push_str(&format!(
            "{{\"docno\":\"p{i:02}\",\"text\":\"Python fact number {i}.\"}}\n"
        ));
        qrels.push_str(&format!("q1 0 p{i:02} {}\n", if i == 11 { 0 } else { 1 }));
    }
    passages.push_str("{\"docno\":\"h1\",\"text\":\"Hamlet is by Shakespeare.\"}\n");
    qrels.push_str("q2 0 h1 2\nq2 0 h9 2\n");
    assert_eq!(load(&mut ws, 1, "topics.tsv", topics), Ok(FileKind::Topics));
    assert_eq!(
        load(&mut ws, 2, "passages.jsonl", &passages),
        Ok(FileKind::Passages)
    );
    assert_eq!(load(&mut ws, 3, "qrels.txt", &qrels), Ok(FileKind::Qrels));
    let server = FakeServer::start(markers()).unwrap();
    let spec = spec(
        &server,
        TaskInputs::NuggetsCreate {
            topics: 1,
            passages: 2,
            qrels: 3,
            min_grade: 1,
        },
    );
    let prepared = ws.prepare_judge(&spec, None, true).unwrap();
    assert_eq!(prepared.job.items.len(), 2, "round 0: one window per topic");
    assert!(
        prepared.skipped.iter().any(|s| s.contains("q2/h9")),
        "{:?}",
        prepared.skipped
    );
    let (outcome, out) = run(&ws, &spec);
    // q1's second window is a second round.
    assert_eq!(server.request_count(), 3);
    let totals: Vec<usize> = out
        .iter()
        .filter_map(|r| match r {
            JudgeResponse::Progress(p) => Some(p.total),
            _ => None,
        })
        .collect();
    assert_eq!((totals.first(), totals.last()), (Some(&2), Some(&3)));
    assert_eq!(outcome.name, "nuggets-created-fake-judge.jsonl");
    let lines: Vec<serde_json::Value> = outcome
        .qrels
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["qid"], "q1");
    assert_eq!(lines[0]["nuggets"][0]["text"], "fake nugget");
    assert_eq!(
        load(&mut ws, 4, &outcome.name, &outcome.qrels),
        Ok(FileKind::Answers(AnswerFile::Nuggets))
    );
}

#[test]
fn a_task_says_which_file_does_not_fit() {
    let mut ws = Workspace::default();
    load(&mut ws, 1, "queries.csv", &fixture("queries.csv")).unwrap();
    load(&mut ws, 2, "answers.csv", &fixture("answers.csv")).unwrap();
    let server = FakeServer::start(markers()).unwrap();
    // answers.csv picked as the queries: no "query" column.
    let swapped = spec(
        &server,
        TaskInputs::Pairwise {
            queries: 2,
            answers: 1,
            documents: None,
        },
    );
    let e = ws.prepare_judge(&swapped, None, true).err().unwrap();
    assert!(e.contains("answers.csv") && e.contains("query"), "{e}");
    let gone = spec(&server, TaskInputs::NuggetsScore { nuggets: 9 });
    let e = ws.prepare_judge(&gone, None, true).err().unwrap();
    assert_eq!(e, "the nuggets file is no longer loaded");
    ws.handle(Request::Remove { id: 2 });
    let removed = spec(
        &server,
        TaskInputs::Pointwise {
            queries: 1,
            answers: 2,
            documents: None,
        },
    );
    let e = ws.prepare_judge(&removed, None, true).err().unwrap();
    assert_eq!(e, "the RAGElo answers file is no longer loaded");
}

/// A pointwise job's result loads into the Answers view with its failed grade shown as failed
/// (the download leaves it out), the means those of the download's grades.
#[test]
fn pointwise_grades_load_into_the_answers_view_with_failures() {
    let mut ws = Workspace::default();
    for (id, f) in [(1, "queries.csv"), (2, "answers.csv")] {
        assert_eq!(load(&mut ws, id, f, &fixture(f)), Ok(FileKind::RageloTable));
    }
    let server = FakeServer::start(markers()).unwrap();
    let spec = spec(
        &server,
        TaskInputs::Pointwise {
            queries: 1,
            answers: 2,
            documents: None,
        },
    );
    let (outcome, _) = run(&ws, &spec);
    assert_eq!((outcome.judged, outcome.failed), (9, 1));
    let (name, text) = outcome.view.clone().expect("a view file");
    assert_eq!(
        load(&mut ws, 3, &name, &text),
        Ok(FileKind::Answers(AnswerFile::PointwiseGrades))
    );
    // The download's grades per agent (it has no failed rows), averaged here.
    let mut want: Vec<(String, Vec<f64>)> = Vec::new();
    let rows = ragscope_eval::answers::pointwise_grades::parse(&outcome.name, &outcome.qrels);
    for r in rows.unwrap() {
        let g = r.grade.expect("the download has graded rows only");
        match want.iter_mut().find(|(a, _)| *a == r.agent) {
            Some((_, v)) => v.push(g),
            None => want.push((r.agent, vec![g])),
        }
    }
    let out = ws.handle(Request::Evaluate(ragscope_protocol::EvalRequest {
        measures: vec!["MAP".into()],
        baseline: None,
        test: ragscope_protocol::SigTest::PairedT,
        generation: 1,
    }));
    let Some(Response::Report(report)) = out.last() else {
        panic!("{out:?}")
    };
    let grades = &report.answers.as_ref().expect("answers report").grades;
    assert_eq!(grades.len(), want.len());
    for (agent, g) in &want {
        let row = grades.iter().find(|r| &r.agent == agent).unwrap();
        assert_eq!(
            row.mean,
            Some(g.iter().sum::<f64>() / g.len() as f64),
            "{agent}"
        );
        assert_eq!(row.graded, g.len());
    }
    let failed: Vec<(&str, &str)> = grades
        .iter()
        .flat_map(|r| {
            r.queries
                .iter()
                .filter(|(_, g)| g.is_none())
                .map(move |(q, _)| (r.agent.as_str(), q.as_str()))
        })
        .collect();
    assert_eq!(failed, [("beta", "q4")], "the failed grade, never scored");
}
