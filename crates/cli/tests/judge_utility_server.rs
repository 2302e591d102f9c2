//! `ragscope judge utility` and `judge umbrela` against a REAL OpenAI-compatible server:
//! llama-cpp-python 0.3.36's `python -m llama_cpp.server` serving SmolLM2-135M-Instruct Q4_1 on
//! 127.0.0.1.
//!
//! * `judge utility --gguf` through the server agrees with `ragscope utility` (the local engine,
//!   same GGUF) on three passages of the UDCG sample (shared/data/udcg) within
//!   [`LN_P_TOL`]; with a template whose prompt does not start with the model's BOS, the same
//!   server's echo is misaligned and the command refuses it;
//! * a short `judge umbrela` run completes (its output contract, not its grades).
//!
//! Needs the server's venv (`cargo xtask test` makes tests/oracle/server/.venv and passes its
//! python in RAGSCOPE_LLAMA_SERVER_PYTHON) and the model cache (`cargo xtask models`); without
//! them it prints `SKIPPED: ...` and checks nothing.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// |ln p(server) − ln p(local)| at most, per passage. The server adds nothing: in-process
/// llama.cpp on the same Q4_1 file gives its values to 2e-6 in ln p, and the local engine matches
/// llama.cpp on the file's dequantized F32 twin to 9e-6. The whole gap is llama.cpp quantizing
/// the activations to Q8_1 for its Q4_1 matmuls: measured up to 0.267 (ln p, 23% in p) on the
/// 15 passages of the UDCG sample (tests/oracle/server/measure_tolerance.py); 0.5 leaves room
/// for other prompts and CPUs while a wrong token, position or template moves ln p by whole
/// nats.
const LN_P_TOL: f64 = 0.5;

/// Same rule as xtask/src/models.rs.
fn model_cache() -> PathBuf {
    if let Some(d) = std::env::var_os("RAGSCOPE_MODELS_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join("ragscope")
        .join("models")
}

/// The server process, killed when the test ends (pass or panic).
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn log_tail(&self) -> String {
        let s = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    fn start(python: &Path, model: &Path, dir: &Path) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let log = dir.join("server.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // logits_all: echoed logprobs need every position's logits; type_k/type_v 0 = F32
            // KV cache (as the local engine); one request at a time, never interrupted.
            .args(["--logits_all", "true", "--type_k", "0", "--type_v", "0"])
            .args(["--n_ctx", "512", "--interrupt_requests", "false"])
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .expect("start llama_cpp.server");
        let mut server = Server { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "llama_cpp.server exited ({status}) before it was ready:\n{}",
                    server.log_tail()
                );
            }
            if get_ok(port, "/v1/models") {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "llama_cpp.server not ready after 180 s:\n{}",
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// A plain HTTP GET answered 200.
fn get_ok(port: u16, path: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

fn ragscope(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn log_lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
#[ignore = "needs a llama-cpp-python server: run by `cargo xtask test`'s real-server step (--include-ignored)"]
fn judge_utility_and_umbrela_through_llama_cpp_server() {
    let Some(python) = std::env::var_os("RAGSCOPE_LLAMA_SERVER_PYTHON").map(PathBuf::from) else {
        eprintln!(
            "SKIPPED: RAGSCOPE_LLAMA_SERVER_PYTHON is not set (cargo xtask test sets it to the \
             venv of tests/oracle/server)"
        );
        return;
    };
    let model = model_cache().join(MODEL_FILE);
    if !model.is_file() {
        eprintln!(
            "SKIPPED: {} is not in the model cache (run `cargo xtask models smollm2`)",
            model.display()
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("ragscope-real-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sample = read_json(&root.join("../../../shared/data/udcg/sample_dataset.json"));
    // Three passages and a short system prompt: llama-cpp-python's echo sorts the whole
    // vocabulary in Python at every prompt position (about 0.15 s a position on this machine),
    // so the paper's 55-token system prompt alone would cost seconds per request. Both commands
    // take the same --prompt-template, so the comparison is unchanged.
    let mut first = sample[0].clone();
    first["passages"].as_array_mut().unwrap().truncate(3);
    let input = dir.join("input.json");
    std::fs::write(&input, Value::Array(vec![first]).to_string()).unwrap();
    let prompt = dir.join("prompt.json");
    std::fs::write(
        &prompt,
        serde_json::json!({"system": "Answer from the document, or say NO-RESPONSE.",
                           "user": "Document: {text}\nQuestion: {question}\nAnswer:"})
        .to_string(),
    )
    .unwrap();
    let prompt_s = prompt.to_str().unwrap();
    let t0 = Instant::now();
    let stage = |what: &str| eprintln!("[{:6.1} s] {what}", t0.elapsed().as_secs_f64());
    let server = Server::start(&python, &model, &dir);
    stage("server ready");
    let base = server.base_url();
    let model_s = model.to_str().unwrap();
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();

    // (a) the local engine and the server on the same passages.
    let (code, err) = ragscope(&[
        "utility",
        "--quiet",
        "--backend",
        "cpu",
        "--model",
        model_s,
        "--model-name",
        "smol",
        "--prompt-template",
        prompt_s,
        input.to_str().unwrap(),
        "-o",
        &path("local.json"),
    ]);
    assert_eq!(code, 0, "{err}");
    stage("ragscope utility (local engine)");
    let remote_args = |extra: &[&str], out: &str, log: &str| -> Vec<String> {
        let mut v: Vec<String> = [
            "judge",
            "utility",
            "--provider",
            "openai-compatible",
            "--base-url",
            &base,
            "--model",
            "smol",
            "--model-name",
            "smol",
            "--no-cache",
            "--quiet",
            "--concurrency",
            "1",
            "--timeout",
            "300",
            "--prompt-template",
            prompt_s,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v.extend([input.to_str().unwrap().to_string(), "-o".into(), path(out)]);
        v.extend(["--log".into(), path(log)]);
        v
    };
    let args = remote_args(&["--gguf", model_s], "remote.json", "remote.jsonl");
    let (code, err) = ragscope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}\nserver log:\n{}", server.log_tail());
    assert!(err.contains("alignment probe passed"), "{err}");
    stage("ragscope judge utility (server)");
    let (local, remote) = (
        read_json(&dir.join("local.json")),
        read_json(&dir.join("remote.json")),
    );
    let passages = local[0]["passages"].as_array().unwrap();
    assert_eq!(passages.len(), 3);
    let mut worst: f64 = 0.0;
    for (i, p) in passages.iter().enumerate() {
        let l = p["models_info"]["smol"]["no_res_prob"].as_f64().unwrap();
        let r = remote[0]["passages"][i]["models_info"]["smol"]["no_res_prob"]
            .as_f64()
            .unwrap();
        let d = (r.ln() - l.ln()).abs();
        eprintln!("passage {i}: local p {l:.6e}, server p {r:.6e}, |d ln p| {d:.4}");
        assert!(d <= LN_P_TOL, "passage {i}: local {l}, server {r}");
        worst = worst.max(d);
    }
    eprintln!("judge utility vs utility: max |d ln p| = {worst:.4} (tolerance {LN_P_TOL})");
    for line in log_lines(&dir.join("remote.jsonl")) {
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["result"]["method"], "echo");
        assert_eq!(line["result"]["exact"], true);
        assert_eq!(line["result"]["token"], "NO");
    }

    // The same server with a prompt that does not start with BOS: llama-cpp-python then pairs
    // each echoed token with the next position's distribution, and the probe refuses it.
    let plain = dir.join("plain.jinja");
    std::fs::write(
        &plain,
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}Answer:",
    )
    .unwrap();
    let args = remote_args(
        &["--template", plain.to_str().unwrap()],
        "plain.json",
        "plain.jsonl",
    );
    let (code, err) = ragscope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused"), "{err}");
    assert!(!dir.join("plain.json").exists());
    stage("misaligned server refused");

    // (b) a short UMBRELA run: 2 passages of one query.
    std::fs::write(
        dir.join("topics.tsv"),
        "q1\tWhat is the capital of France?\n",
    )
    .unwrap();
    let mut jsonl = String::new();
    for p in passages.iter().take(2) {
        jsonl.push_str(&serde_json::json!({"docno": p["doc_id"], "text": p["text"]}).to_string());
        jsonl.push('\n');
    }
    std::fs::write(dir.join("passages.jsonl"), jsonl).unwrap();
    std::fs::write(
        dir.join("run.txt"),
        "q1 Q0 doc_1 1 2.0 r\nq1 Q0 doc_2 2 1.0 r\n",
    )
    .unwrap();
    let (code, err) = ragscope(&[
        "judge",
        "umbrela",
        "--provider",
        "openai-compatible",
        "--base-url",
        &base,
        "--model",
        "smol",
        "--no-cache",
        "--quiet",
        "--concurrency",
        "1",
        "--timeout",
        "300",
        "--topics",
        &path("topics.tsv"),
        "--passages",
        &path("passages.jsonl"),
        "--run",
        &path("run.txt"),
        "--k",
        "2",
        "-o",
        &path("qrels.txt"),
        "--log",
        &path("umbrela.jsonl"),
    ]);
    stage("ragscope judge umbrela (server)");
    // 0: every item graded; 3: some replies had no grade (recorded, left out of the qrels).
    assert!(code == 0 || code == 3, "exit {code}: {err}");
    let qrels = std::fs::read_to_string(dir.join("qrels.txt")).unwrap();
    let log = log_lines(&dir.join("umbrela.jsonl"));
    assert_eq!(log.len(), 2);
    let mut graded = 0;
    for (line, docno) in log.iter().zip(["doc_1", "doc_2"]) {
        assert_eq!(line["qid"], "q1");
        assert_eq!(line["docno"], docno);
        match line["status"].as_str() {
            Some("ok") => {
                let g = line["result"].as_i64().unwrap();
                assert!((0..=3).contains(&g), "{line}");
                assert!(qrels.contains(&format!("q1 0 {docno} {g}")), "{qrels}");
                graded += 1;
            }
            Some("failed") => {
                assert!(line["error"].is_string(), "{line}");
                assert!(!qrels.contains(docno), "{qrels}");
            }
            other => panic!("status {other:?}"),
        }
        assert!(line["attempts"].as_u64().unwrap() >= 1);
    }
    assert_eq!(qrels.lines().count(), graded);
    assert_eq!(code == 0, graded == 2);
    eprintln!("judge umbrela through the server: {graded} of 2 graded (exit {code})");
    let _ = std::fs::remove_dir_all(&dir);
}
