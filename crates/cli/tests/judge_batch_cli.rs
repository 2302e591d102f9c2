//! `ragscope judge ... --batch` against the fake provider's batch endpoints: `--no-wait` submits,
//! prints the batch id and exits 4; the same command run again resumes that batch (one
//! submission in all), imports the replies and writes the synchronous path's outputs; per-request
//! batch failures are logged as failed and a synchronous rerun sends just those. For umbrela,
//! pairwise and pointwise (RAGElo's CSVs), nuggets assign and score (nuggetizer's files) and
//! nuggets create (rounds, re-asks), the batch output equals the synchronous output byte for byte.

use ragscope_judge_fake::{self as fake, FakeServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shared(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).join(path)
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ragscope-judge-batch-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

/// `ragscope judge <task...> --provider P --base-url ... -o OUT --log LOG --cache CACHE <extra>`.
fn judge(
    server: &FakeServer,
    provider: &str,
    dir: &Path,
    task: &[&str],
    extra: &[String],
) -> Output {
    let mut args: Vec<String> = vec!["judge".into()];
    args.extend(task.iter().map(|s| s.to_string()));
    let base = if provider == "openai" {
        format!("{}/v1", server.url())
    } else {
        server.url()
    };
    for a in [
        "--provider",
        provider,
        "--model",
        "fake-model",
        "--quiet",
        "--base-url",
        &base,
    ] {
        args.push(a.into());
    }
    for (flag, f) in [("-o", "out"), ("--log", "log.jsonl"), ("--cache", "cache")] {
        args.push(flag.into());
        args.push(dir.join(f).display().to_string());
    }
    args.extend(extra.iter().cloned());
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&args)
        .env("OPENAI_API_KEY", "sk-test-batch")
        .env("ANTHROPIC_API_KEY", "sk-ant-test-batch")
        .env("GEMINI_API_KEY", "gm-test-batch")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn umbrela_inputs(dir: &Path) -> Vec<String> {
    let passages = [
        ("d0", "FAKE{grade=2}"),
        ("d1", "FAKE{grade=0}"),
        ("d2", "FAKE{batcherror}"),
        ("d3", "FAKE{batchexpired}"),
        ("d4", "FAKE{fenced=3}"),
    ];
    let mut pj = String::new();
    let mut run = String::new();
    for (i, (d, t)) in passages.iter().enumerate() {
        pj.push_str(&format!("{{\"docno\": \"{d}\", \"text\": \"{t}\"}}\n"));
        run.push_str(&format!("1 Q0 {d} {} {} fake\n", i + 1, 10 - i));
    }
    std::fs::write(dir.join("topics.tsv"), "1\twhat does the fixture say?\n").unwrap();
    std::fs::write(dir.join("passages.jsonl"), pj).unwrap();
    std::fs::write(dir.join("run.txt"), run).unwrap();
    let mut v = Vec::new();
    for (f, n) in [
        ("--topics", "topics.tsv"),
        ("--passages", "passages.jsonl"),
        ("--run", "run.txt"),
    ] {
        v.push(f.to_string());
        v.push(p(&dir.join(n)));
    }
    v.extend(["--k".to_string(), "5".to_string()]);
    v
}

fn with(mut v: Vec<String>, more: &[&str]) -> Vec<String> {
    v.extend(more.iter().map(|s| s.to_string()));
    v
}

#[test]
fn no_wait_then_resume_without_a_second_submission_then_sync_retry() {
    for provider in ["anthropic", "openai", "gemini"] {
        let server = FakeServer::start(fake::markers()).unwrap();
        server.set_batch_polls(2);
        let dir = tmp(&format!("resume-{provider}"));
        let inputs = umbrela_inputs(&dir);
        let batch = with(inputs.clone(), &["--batch", "--poll-interval", "0.01"]);

        // Submit and exit: exit 4, the id on stdout, the state file beside the cache.
        let out = judge(
            &server,
            provider,
            &dir,
            &["umbrela"],
            &with(batch.clone(), &["--no-wait"]),
        );
        assert_eq!(out.status.code(), Some(4), "{provider}: {}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(stdout.contains("\t5 requests"), "{provider}: {stdout}");
        assert_eq!(server.batch_submissions(), 1);
        assert!(!dir.join("out").exists() && !dir.join("log.jsonl").exists());
        let states: Vec<_> = std::fs::read_dir(dir.join("cache/batches"))
            .unwrap()
            .collect();
        assert_eq!(states.len(), 1);
        let state = std::fs::read_to_string(states[0].as_ref().unwrap().path()).unwrap();
        let id = stdout.split('\t').next().unwrap();
        assert!(state.contains(id), "{state}");
        assert!(!state.contains("test-batch"), "a key in the state file");

        // The same command (waiting): resumes, imports, writes; exit 3 for the 2 batch failures.
        let out = judge(&server, provider, &dir, &["umbrela"], &batch);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{provider}: {err}");
        assert_eq!(server.batch_submissions(), 1, "{provider}: paid twice");
        assert!(err.contains(&format!("resuming batch {id}")), "{err}");
        assert!(
            err.contains("3 replies stored in the cache, 2 failed"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("out")).unwrap(),
            "1 0 d0 2\n1 0 d1 0\n1 0 d4 3\n"
        );
        let log: Vec<Value> = std::fs::read_to_string(dir.join("log.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(log.len(), 5);
        assert_eq!(log[2]["status"], "failed");
        assert!(log[2]["error"].as_str().unwrap().starts_with("batch: "));
        assert_eq!(log[3]["status"], "failed");
        assert!(
            log[3]["error"].as_str().unwrap().contains("expire"),
            "{}",
            log[3]
        );
        assert_eq!(log[0]["result"], 2);
        // 3 replies of 120 + 6 tokens bought through the batch.
        assert!(err.contains("360 input + 18 output tokens bought"), "{err}");

        // A synchronous rerun sends just the two failures.
        let before = server.request_count();
        let out = judge(&server, provider, &dir, &["umbrela"], &inputs);
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        assert_eq!(server.request_count() - before, 2, "{provider}");
        assert_eq!(server.batch_submissions(), 1);
        let before = server.request_count();
        let out = judge(&server, provider, &dir, &["umbrela"], &inputs);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            server.request_count(),
            before,
            "{provider}: a sync rerun sends nothing"
        );
    }
}

#[test]
fn batch_outputs_equal_sync_outputs_for_every_task() {
    let d = |f: &str| p(&shared(&format!("ragelo/tests_data/{f}")));
    let ragelo = vec![
        "--queries".to_string(),
        d("queries.csv"),
        "--answers".into(),
        d("answers.csv"),
        "--documents".into(),
        d("documents.csv"),
    ];
    let nuggets = vec![
        "--nuggets".to_string(),
        p(&shared("nuggetizer/nuggets.jsonl")),
        "--answers".into(),
        p(&shared("nuggetizer/demo-run.jsonl")),
    ];
    // Nugget creation in rounds (window 2 of t1 needs window 1's list: a second batch), with
    // replies that do not parse (re-asked synchronously, as the synchronous path does).
    let pool_dir = tmp("eq-pool");
    let cands = |n: usize, tag: &str| -> Vec<Value> {
        (0..n)
            .map(|i| {
                serde_json::json!({"docid": format!("d{i}"), "judgment": 2,
                                        "doc": {"segment": format!("passage {i} {tag}")}})
            })
            .collect()
    };
    let pool: String = [
        serde_json::json!({"query": {"qid": "t1", "text": "first"},
                           "candidates": cands(12, "FAKE{nuggets=alpha|beta}")}),
        serde_json::json!({"query": {"qid": "t2", "text": "second"},
                           "candidates": cands(3, "FAKE{garbage}")}),
    ]
    .iter()
    .map(|l| l.to_string() + "\n")
    .collect();
    std::fs::write(pool_dir.join("pool.jsonl"), pool).unwrap();
    let create = vec![
        "--pool".to_string(),
        p(&pool_dir.join("pool.jsonl")),
        "--parse-retries".into(),
        "1".into(),
    ];
    let umbrela_dir = tmp("eq-umbrela-inputs");
    let umbrela = umbrela_inputs(&umbrela_dir);
    let cases: Vec<(&str, Vec<&str>, Vec<String>, &str)> = vec![
        ("anthropic", vec!["umbrela"], umbrela, "umbrela"),
        ("openai", vec!["pairwise"], ragelo.clone(), "pairwise"),
        ("gemini", vec!["pointwise"], ragelo, "pointwise"),
        (
            "openai",
            vec!["nuggets", "assign"],
            nuggets.clone(),
            "assign",
        ),
        (
            "anthropic",
            vec!["nuggets", "score"],
            nuggets[..2].to_vec(),
            "score",
        ),
        ("gemini", vec!["nuggets", "create"], create, "create"),
    ];
    for (provider, task, args, tag) in cases {
        let sync_server = FakeServer::start(fake::markers()).unwrap();
        let sync_dir = tmp(&format!("eq-sync-{tag}"));
        let s = judge(&sync_server, provider, &sync_dir, &task, &args);
        let batch_server = FakeServer::start(fake::markers()).unwrap();
        let batch_dir = tmp(&format!("eq-batch-{tag}"));
        let b = judge(
            &batch_server,
            provider,
            &batch_dir,
            &task,
            &with(args.clone(), &["--batch", "--poll-interval", "0.01"]),
        );
        // Umbrela's batch-only directives fail in the batch and not synchronously: compare the
        // files, and the exit codes where both paths see the same replies.
        if tag != "umbrela" {
            assert_eq!(s.status.code(), b.status.code(), "{tag}: {}", stderr(&b));
        }
        assert!(
            matches!(b.status.code(), Some(0 | 3)),
            "{tag}: {}",
            stderr(&b)
        );
        let rounds = if tag == "create" { 2 } else { 1 };
        assert_eq!(batch_server.batch_submissions(), rounds, "{tag}");
        if tag == "create" {
            // Synchronous requests for t2's window: its first ask and re-ask without --batch;
            // with --batch the first ask went in the batch and only the re-ask was sent alone.
            let reasks = |s: &FakeServer| {
                s.requests()
                    .iter()
                    .filter(|r| r.path.ends_with(":generateContent"))
                    .filter(|r| r.body.contains("FAKE{garbage}"))
                    .count()
            };
            assert_eq!(reasks(&batch_server), 1);
            assert_eq!(reasks(&sync_server), 2);
        }
        let sync_out = std::fs::read(sync_dir.join("out")).unwrap();
        let batch_out = std::fs::read(batch_dir.join("out")).unwrap();
        if tag == "umbrela" {
            assert_eq!(batch_out, b"1 0 d0 2\n1 0 d1 0\n1 0 d4 3\n");
        } else {
            assert!(!sync_out.is_empty());
            assert_eq!(batch_out, sync_out, "{tag}: batch and sync outputs differ");
        }
        // A synchronous rerun on the batch's cache sends nothing (all answered in the batch).
        if tag != "umbrela" {
            let before = batch_server.request_count();
            let again = judge(&batch_server, provider, &batch_dir, &task, &args);
            assert_eq!(again.status.code(), s.status.code());
            assert_eq!(batch_server.request_count(), before, "{tag}");
            assert_eq!(std::fs::read(batch_dir.join("out")).unwrap(), sync_out);
        }
    }
}

#[test]
fn batch_price_estimate_and_usage_errors() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("usage");
    let inputs = umbrela_inputs(&dir);
    // The estimate is at half price, with the discount's source and date.
    let mut dry: Vec<String> = vec!["judge".into(), "umbrela".into()];
    dry.extend(inputs.clone());
    dry.extend(
        [
            "--provider",
            "openai",
            "--model",
            "gpt-4o",
            "--dry-run",
            "--batch",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&dry)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout.contains(
            "less the batch discount of 50% (as of 2026-11, platform.openai.com/docs/guides/batch"
        ),
        "{stdout}"
    );
    // Same estimate without --batch is twice the cost.
    let cost = |s: &str| -> f64 {
        let i = s.find("cost $").unwrap() + 6;
        s[i..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let out2 = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&dry[..dry.len() - 1])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let full = String::from_utf8_lossy(&out2.stdout).into_owned();
    assert!(
        (cost(&full) - 2.0 * cost(&stdout)).abs() < 2e-4,
        "{full}\n{stdout}"
    );

    // --no-cache cannot go with --cache (which `judge` passes): the dry-run arguments instead.
    let mut no_cache = dry.clone();
    no_cache.retain(|a| a != "--dry-run");
    no_cache.extend(["--no-cache", "-o", "/dev/null", "--log", "/dev/null"].map(String::from));
    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&no_cache)
        .env("OPENAI_API_KEY", "sk-x")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("drop --no-cache"), "{}", stderr(&out));
    for (extra, msg) in [
        (vec!["--no-wait"], "go with --batch"),
        (
            vec!["--batch", "--poll-interval", "0"],
            "--poll-interval must be",
        ),
    ] {
        let out = judge(
            &server,
            "anthropic",
            &dir,
            &["umbrela"],
            &with(inputs.clone(), &extra),
        );
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(msg), "{extra:?}: {}", stderr(&out));
    }
    let mut args: Vec<String> = vec!["judge".into(), "umbrela".into()];
    args.extend(inputs);
    args.extend(
        [
            "--provider",
            "openai-compatible",
            "--base-url",
            &server.url(),
            "--model",
            "m",
            "--batch",
            "-o",
            "/dev/null",
            "--log",
            "/dev/null",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no batch API"), "{}", stderr(&out));
    assert_eq!(server.request_count(), 0);
}
