//! `ragscope judge nuggets|pairwise|pointwise|citations` end to end against the fake provider
//! (ragscope_judge_fake, `FAKE{...}` directives in the item text), with the anchors' own files
//! for interchange: nuggetizer's nuggets + demo run through `nuggets assign` come out in
//! nuggetizer's assignment format (fields and order of its assignments.jsonl), RAGElo's unit-test
//! CSVs through `pairwise` come out with RAGElo's pairwise CSV columns.

use ragscope_judge_fake::{self as fake, FakeServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shared(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).join(path)
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ragscope-judge2-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `ragscope judge <task...> --provider openai ... -o OUT --log LOG --cache CACHE <extra>`.
fn judge(server: &FakeServer, dir: &Path, task: &[&str], extra: &[String]) -> Output {
    let mut args: Vec<String> = task.iter().map(|s| s.to_string()).collect();
    args.splice(0..0, ["judge".to_string()]);
    for a in [
        "--provider",
        "openai",
        "--model",
        "gpt-4o-mini",
        "--quiet",
        "--base-url",
    ] {
        args.push(a.into());
    }
    args.push(format!("{}/v1", server.url()));
    for (flag, f) in [("-o", "out"), ("--log", "log.jsonl"), ("--cache", "cache")] {
        args.push(flag.into());
        args.push(dir.join(f).display().to_string());
    }
    args.extend(extra.iter().cloned());
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&args)
        .env("OPENAI_API_KEY", "sk-test-judge2")
        .output()
        .unwrap()
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn nuggetizer_files_through_assign_in_nuggetizers_format_and_rerun_sends_nothing() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("assign");
    let extra = vec![
        "--nuggets".into(),
        p(&shared("nuggetizer/nuggets.jsonl")),
        "--answers".into(),
        p(&shared("nuggetizer/demo-run.jsonl")),
    ];
    let out = judge(&server, &dir, &["nuggets", "assign"], &extra);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.request_count(), 1);
    let ours = jsonl(&dir.join("out"));
    let theirs = jsonl(&shared("nuggetizer/assignments.jsonl"));
    assert_eq!(ours.len(), theirs.len());
    let (o, t) = (&ours[0], &theirs[0]);
    // nuggetizer writes the fields in this order: query, qid, answer_text, response_length,
    // run_id, nuggets.
    assert_eq!(keys(o), keys(t));
    for k in ["query", "qid", "answer_text", "response_length", "run_id"] {
        assert_eq!(o[k], t[k], "{k}");
    }
    let (on, tn) = (
        o["nuggets"].as_array().unwrap(),
        t["nuggets"].as_array().unwrap(),
    );
    assert_eq!(on.len(), tn.len());
    for (a, b) in on.iter().zip(tn) {
        assert_eq!(keys(a), keys(b));
        assert_eq!(a["text"], b["text"]);
        assert_eq!(a["importance"], b["importance"]);
        // The fake provider answers "support" for every nugget.
        assert_eq!(a["assignment"], "support");
    }
    // Rerun: everything from the cache.
    let out = judge(&server, &dir, &["nuggets", "assign"], &extra);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(server.request_count(), 1);
}

#[test]
fn nugget_scoring_reasks_bounded_failures_recorded_vital_first() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("score");
    let nug = |texts: Vec<String>| -> Vec<Value> {
        texts
            .into_iter()
            .map(|t| serde_json::json!({ "text": t }))
            .collect()
    };
    let mut q1: Vec<String> = (0..12).map(|i| format!("fact {i}")).collect();
    q1[3] = "fact 3 FAKE{short}".into();
    let q4: Vec<String> = (0..25).map(|i| format!("point {i}")).collect();
    let lines = [
        serde_json::json!({"query": "one", "qid": "q1", "nuggets": nug(q1)}),
        serde_json::json!({"query": "two", "qid": "q2",
                           "nuggets": nug(vec!["a FAKE{shortalways}".into(), "b".into()])}),
        serde_json::json!({"query": "four FAKE{labels=okay|vital,fence}", "qid": "q4",
                           "nuggets": nug(q4)}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(dir.join("nuggets.jsonl"), text).unwrap();
    let extra = vec!["--nuggets".into(), p(&dir.join("nuggets.jsonl"))];
    let out = judge(&server, &dir, &["nuggets", "score"], &extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    // q1: batch 0 short once then fixed by one re-ask (2), batch 1 (1); q2: 1 + 3 re-asks; q4: 3.
    assert_eq!(server.request_count(), 2 + 1 + 4 + 3);
    let log = jsonl(&dir.join("log.jsonl"));
    assert_eq!(log.len(), 2 + 1 + 3);
    let q2 = log.iter().find(|l| l["qid"] == "q2").unwrap();
    assert_eq!(q2["status"], "failed");
    assert_eq!(q2["attempts"], 4);
    let e = q2["error"].as_str().unwrap();
    assert!(
        e.contains("wrong length") && e.contains("after 3 re-asks"),
        "{e}"
    );
    assert!(q2["raw"].as_str().is_some());
    let q1b0 = log
        .iter()
        .find(|l| l["qid"] == "q1" && l["batch"] == "0")
        .unwrap();
    assert_eq!(q1b0["status"], "ok");
    assert_eq!(q1b0["attempts"], 2);
    let out_lines = jsonl(&dir.join("out"));
    let qids: Vec<&str> = out_lines
        .iter()
        .map(|l| l["qid"].as_str().unwrap())
        .collect();
    assert_eq!(
        qids,
        ["q1", "q4"],
        "q2 failed: left out, never labelled okay"
    );
    assert_eq!(keys(&out_lines[0]), ["query", "qid", "nuggets"]);
    let n4 = out_lines[1]["nuggets"].as_array().unwrap();
    assert_eq!(n4.len(), 20);
    // labels cycle okay|vital within each batch of 10 (and 5): vital are points 1,3,5,7,9,11,..
    let vital: Vec<&str> = n4
        .iter()
        .filter(|n| n["importance"] == "vital")
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert_eq!(vital.len(), 12);
    assert_eq!(vital[0], "point 1");
    assert_eq!(vital[11], "point 23");
    assert!(n4[..12].iter().all(|n| n["importance"] == "vital"));
    assert_eq!(n4[12]["text"], "point 0");
    // Rerun: failed items too come from the cache (re-asks included): nothing is paid twice.
    let before = server.request_count();
    let out = judge(&server, &dir, &["nuggets", "score"], &extra);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(server.request_count(), before);
    // --parse-retries 0: the short batch fails at once.
    let dir0 = tmp("score0");
    let mut extra0 = extra.clone();
    extra0.extend(["--parse-retries".into(), "0".into()]);
    let out = judge(&server, &dir0, &["nuggets", "score"], &extra0);
    assert_eq!(out.status.code(), Some(3));
    let log0 = jsonl(&dir0.join("log.jsonl"));
    let q1b0 = log0
        .iter()
        .find(|l| l["qid"] == "q1" && l["batch"] == "0")
        .unwrap();
    assert_eq!(q1b0["status"], "failed");
}

#[test]
fn nugget_creation_runs_windows_in_rounds() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("create");
    let cands = |n: usize, tag: &str| -> Vec<Value> {
        (0..n)
            .map(|i| {
                serde_json::json!({"docid": format!("d{i}"), "judgment": if i == 0 { 0 } else { 2 },
                                   "doc": {"segment": format!("passage {i} {tag}")}})
            })
            .collect()
    };
    let lines = [
        // 12 relevant passages (d0 has grade 0): windows of 10 and 2.
        serde_json::json!({"query": {"qid": "t1", "text": "first"},
                           "candidates": cands(13, "FAKE{nuggets=alpha|beta}")}),
        serde_json::json!({"query": {"qid": "t2", "text": "second"},
                           "candidates": cands(3, "FAKE{garbage}")}),
        serde_json::json!({"query": {"qid": "t3", "text": "third"},
                           "candidates": cands(3, "FAKE{truncated}")}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(dir.join("pool.jsonl"), text).unwrap();
    let extra = vec![
        "--pool".into(),
        p(&dir.join("pool.jsonl")),
        "--parse-retries".into(),
        "1".into(),
    ];
    let out = judge(&server, &dir, &["nuggets", "create"], &extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    // t1: 2 windows; t2: 1 + 1 re-ask; t3: truncated (1 + 1 re-ask).
    assert_eq!(server.request_count(), 2 + 2 + 2);
    let reqs = server.requests();
    // The second window of t1 carries the first window's list.
    assert!(reqs
        .iter()
        .any(|r| r.body.contains("passage 12") && r.body.contains("(2 nuggets)")));
    assert!(!reqs.iter().any(|r| r.body.contains("passage 0 ")));
    let out_lines = jsonl(&dir.join("out"));
    assert_eq!(out_lines.len(), 1);
    assert_eq!(out_lines[0]["qid"], "t1");
    assert_eq!(out_lines[0]["nuggets"][1]["text"], "beta");
    let log = jsonl(&dir.join("log.jsonl"));
    let t3 = log.iter().find(|l| l["qid"] == "t3").unwrap();
    assert!(t3["error"].as_str().unwrap().contains("truncated"));
    let before = server.request_count();
    judge(&server, &dir, &["nuggets", "create"], &extra);
    assert_eq!(server.request_count(), before);
}

#[test]
fn pairwise_ragelo_csvs_both_orders_flips_and_failures() {
    let server = FakeServer::start(fake::markers()).unwrap();
    // RAGElo's own unit-test CSVs (leading spaces in values): 2 queries x 2 agents.
    let dir = tmp("pairwise-ragelo");
    let d = |f: &str| p(&shared(&format!("ragelo/tests_data/{f}")));
    let extra = vec![
        "--queries".into(),
        d("queries.csv"),
        "--answers".into(),
        d("answers.csv"),
        "--documents".into(),
        d("documents.csv"),
    ];
    let out = judge(&server, &dir, &["pairwise"], &extra);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("out")).unwrap();
    let theirs =
        std::fs::read_to_string(shared("ragelo/tests_data/pairwise_answers_evaluations.csv"))
            .unwrap();
    assert_eq!(
        text.lines().next(),
        theirs.lines().next(),
        "RAGElo's header"
    );
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][1], "agent1");
    assert_eq!(&rows[0][2], "agent2");
    assert_eq!(server.request_count(), 4);
    // The documents go into the prompt of their query.
    assert!(server
        .requests()
        .iter()
        .all(|r| r.body.contains("capital of")));
    assert!(server
        .requests()
        .iter()
        .any(|r| r.body.contains("Rio de Janeiro used to be")));

    // Directives: y wins both orders; "first" always says A (orders disagree → tie, a flip);
    // [[A]] text verdicts; garbage fails the game (left out).
    let dir = tmp("pairwise");
    std::fs::write(
        dir.join("q.csv"),
        "qid,query\n1,one\n2,two\n3,three\n4,four\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.csv"),
        "qid,agent,answer\n1,x,plain x\n1,y,\"y, FAKE{win}\"\n1,z,plain z\n\
2,x,FAKE{first}\n2,y,other\n3,x,\"FAKE{bracket,win}\"\n3,y,\"multi\nline\"\n4,x,FAKE{garbage}\n4,y,b\n",
    )
    .unwrap();
    let extra = vec![
        "--queries".into(),
        p(&dir.join("q.csv")),
        "--answers".into(),
        p(&dir.join("a.csv")),
    ];
    let out = judge(&server, &dir, &["pairwise"], &extra);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("5 games judged in both orders"), "{stderr}");
    assert!(
        stderr.contains("position flips (orders disagree, scored as a tie): 1 (20.0%)"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(dir.join("out")).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let got: Vec<(String, String, String, String)> = rdr
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].into(), r[1].into(), r[2].into(), r[4].into())
        })
        .collect();
    let want = [
        ("1", "x", "y", "B"),
        ("1", "x", "z", "C"),
        ("1", "y", "z", "A"),
        ("2", "x", "y", "C"),
        ("3", "x", "y", "A"),
    ];
    let want: Vec<(String, String, String, String)> = want
        .iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
        .collect();
    assert_eq!(got, want);
    // Both raw verdicts kept.
    assert!(text.contains("[x shown as A]") && text.contains("[y shown as A]"));
    assert!(text.contains("Final verdict: [[A]]") && text.contains("Final verdict: [[B]]"));
    let log = jsonl(&dir.join("log.jsonl"));
    assert_eq!(log.len(), 12);
    let failed: Vec<&Value> = log.iter().filter(|l| l["status"] == "failed").collect();
    assert_eq!(failed.len(), 2);
    // No verdict: re-asked 3 times (the default --parse-retries), then recorded as failed.
    assert!(failed.iter().all(|l| l["attempts"] == 4 && l["qid"] == "4"));
}

#[test]
fn pointwise_and_citations() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("pointwise");
    std::fs::write(dir.join("q.csv"), "qid,query\n1,one\n").unwrap();
    std::fs::write(
        dir.join("a.csv"),
        "qid,agent,answer\n1,x,\"FAKE{score=2,fence}\"\n1,y,plain\n1,z,FAKE{garbage}\n1,w,FAKE{score=7}\n",
    )
    .unwrap();
    let extra = vec![
        "--queries".into(),
        p(&dir.join("q.csv")),
        "--answers".into(),
        p(&dir.join("a.csv")),
    ];
    let out = judge(&server, &dir, &["pointwise"], &extra);
    assert_eq!(out.status.code(), Some(3));
    let text = std::fs::read_to_string(dir.join("out")).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        rdr.headers().unwrap().iter().collect::<Vec<_>>(),
        ["qid", "agent", "raw_answer", "reasoning", "score"]
    );
    let got: Vec<(String, String)> = rdr
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[1].to_string(), r[4].to_string())
        })
        .collect();
    assert_eq!(got, [("x".into(), "2".into()), ("y".into(), "1".into())]);
    let log = jsonl(&dir.join("log.jsonl"));
    let z = log.iter().find(|l| l["agent"] == "z").unwrap();
    assert_eq!(
        (z["status"].as_str(), z["attempts"].as_u64()),
        (Some("failed"), Some(4))
    );
    let w = log.iter().find(|l| l["agent"] == "w").unwrap();
    assert!(w["error"]
        .as_str()
        .unwrap()
        .contains("not an integer from 0 to 2"));

    let dir = tmp("citations");
    std::fs::write(
        dir.join("passages.jsonl"),
        "{\"docno\": \"d1\", \"text\": \"FAKE{support=partial}\"}\n\
{\"docno\": \"d2\", \"text\": \"FAKE{word,support=none}\"}\n{\"docno\": \"d3\", \"text\": \"plain\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("run.jsonl"),
        "{\"topic_id\": \"7\", \"references\": [\"d1\", \"d2\"], \"answer\": [\
{\"text\": \"A.\", \"citations\": [0, 1]}, {\"text\": \"B.\", \"citations\": [\"d3\"]}, \
{\"text\": \"C.\", \"citations\": []}]}\n",
    )
    .unwrap();
    let extra = vec![
        "--answers".into(),
        p(&dir.join("run.jsonl")),
        "--passages".into(),
        p(&dir.join("passages.jsonl")),
    ];
    let out = judge(&server, &dir, &["citations"], &extra);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = jsonl(&dir.join("out"));
    let got: Vec<(String, u64, String, f64)> = rows
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap().to_string(),
                r["sentence"].as_u64().unwrap(),
                r["docid"].as_str().unwrap().to_string(),
                r["score"].as_f64().unwrap(),
            )
        })
        .collect();
    let run = "run".to_string();
    assert_eq!(
        got,
        [
            (run.clone(), 0, "d1".to_string(), 0.5),
            (run.clone(), 0, "d2".to_string(), 0.0),
            (run, 1, "d3".to_string(), 1.0)
        ]
    );
    // `ragscope citations` scores the judge's JSONL (Open RAG Eval's CitationMetric), by hand:
    // d1 ½, d2 0, d3 1 → precision ½; sentences ¼ and 1 → recall ⅝ (sentence C cites nothing,
    // so it is not in the file); F1 = 2·½·⅝ / (½ + ⅝) = 5/9.
    let scores = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(["citations", "--format", "json"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert_eq!(scores.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&scores.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["run_id"], "run");
    assert_eq!(run["precision"].as_f64(), Some(0.5));
    assert_eq!(run["recall"].as_f64(), Some(0.625));
    assert!((run["f1"].as_f64().unwrap() - 5.0 / 9.0).abs() < 1e-15);
    // --batch on a job the cache already answers: no batch submitted, nothing sent, the same
    // output (the batch path itself is tested in judge_batch_cli.rs).
    let before = server.request_count();
    let first = std::fs::read(dir.join("out")).unwrap();
    let mut extra = extra;
    extra.push("--batch".into());
    let out = judge(&server, &dir, &["citations"], &extra);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(server.request_count(), before);
    assert_eq!(server.batch_submissions(), 0);
    assert_eq!(std::fs::read(dir.join("out")).unwrap(), first);
}
