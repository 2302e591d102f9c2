//! The lost-in-the-middle page's remote p(NO-RESPONSE) against a REAL OpenAI-compatible server:
//! llama-cpp-python 0.3.36's `python -m llama_cpp.server` serving SmolLM2-135M-Instruct Q4_1 on
//! 127.0.0.1 (the real-server step of `cargo xtask test`, xtask/src/real_server.rs, passes its
//! python in RAGSCOPE_LLAMA_SERVER_PYTHON). The page's exact path — the served model's GGUF read
//! for its template and tokenizer, the probe, `/completions` echo — gives p(NO-RESPONSE) of the
//! bundled data's first question's passages equal to the local engine's on the same GGUF (the
//! page's local path) within crates/cli/tests/judge_utility_server.rs's tolerance.
//!
//! Without the python or the cached model it prints `SKIPPED: ...` and checks nothing.

use super::litm_remote::{prepare, run, server_prompts};
use crate::engine::inference::open_model;
use crate::engine::Workspace;
use ragscope_infer::gguf::VecSource;
use ragscope_judge::native::{ThreadRuntime, UreqTransport};
use ragscope_judge::{Control, Env, MemoryCache};
use ragscope_protocol::judges::{JudgeResponse, ProviderChoice, UtilityTemplate};
use ragscope_protocol::litm::{LitmEvent, LitmQuestion, LitmRequest, RemoteModel, RemoteRun};
use ragscope_protocol::Response;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// |ln p(server) − ln p(local)| at most: crates/cli/tests/judge_utility_server.rs's `LN_P_TOL`
/// (llama.cpp quantizes activations to Q8_1 for Q4_1 matmuls: up to 0.267 measured).
const LN_P_TOL: f64 = 0.5;
const K: usize = 2;

fn model_path() -> PathBuf {
    std::env::var_os("RAGSCOPE_MODELS_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/ragscope/models"))
        })
        .unwrap_or_default()
        .join(MODEL_FILE)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ready(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut head = [0u8; 12];
    s.write_all(req.as_bytes()).is_ok()
        && s.read_exact(&mut head).is_ok()
        && head.starts_with(b"HTTP/1.1 200")
}

/// The server as crates/cli's real-server test starts it (F32 KV cache, every position's
/// logits for the echo).
fn start(python: &str, model: &PathBuf) -> (Server, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = Command::new(python)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--logits_all", "true", "--type_k", "0", "--type_v", "0"])
        .args(["--n_ctx", "1024", "--interrupt_requests", "false"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start llama_cpp.server");
    let mut server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(180);
    while !ready(port) {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("llama_cpp.server exited ({status}) before it was ready");
        }
        assert!(Instant::now() < deadline, "llama_cpp.server not ready");
        std::thread::sleep(Duration::from_millis(250));
    }
    (server, port)
}

/// The bundled data's first question (www/learn/litm-nq.json, the page's default data).
fn first_question() -> LitmQuestion {
    let p = format!(
        "{}/www/learn/litm-nq.json",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}")))
            .unwrap();
    let q = &v["questions"][0];
    LitmQuestion {
        qid: q["qid"].as_str().unwrap().into(),
        question: q["question"].as_str().unwrap().into(),
        answers: serde_json::from_value(q["answers"].clone()).unwrap(),
        gold_index: q["gold_index"].as_u64().unwrap() as usize,
        passages: serde_json::from_value(q["passages"].clone()).unwrap(),
    }
}

fn utilities(out: &[LitmEvent]) -> Vec<f64> {
    out.iter()
        .find_map(|e| match e {
            LitmEvent::Utilities { p, .. } => Some(p.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no utilities in {out:?}"))
}

#[test]
#[ignore = "needs a llama-cpp-python server: run by `cargo xtask test`'s real-server step (--include-ignored)"]
fn litm_remote_server_echo_p_equals_the_local_engines() {
    let Ok(python) = std::env::var("RAGSCOPE_LLAMA_SERVER_PYTHON") else {
        eprintln!("SKIPPED: RAGSCOPE_LLAMA_SERVER_PYTHON is not set (cargo xtask test sets it)");
        return;
    };
    let model = model_path();
    let Ok(bytes) = std::fs::read(&model) else {
        eprintln!(
            "SKIPPED: {} is not cached (cargo xtask models)",
            model.display()
        );
        return;
    };
    let q = first_question();

    // The page's local path: the model opened in the worker, its utilities computed.
    let mut ws = Workspace::default();
    let src = VecSource::new(bytes);
    ws.set_model(open_model(&src, MODEL_FILE).unwrap());
    let local: Vec<LitmEvent> = ws
        .handle_litm(LitmRequest::Start {
            questions: vec![q.clone()],
            k: K,
            utilities: vec![None],
            tasks: vec![(0, 1)],
            context_p: false,
            max_new_tokens: 1,
            backend: Default::default(),
            prompt: Default::default(),
        })
        .into_iter()
        .filter_map(|r| match r {
            Response::Litm(e) => Some(e),
            _ => None,
        })
        .collect();
    let local = utilities(&local);

    // The page's remote path with the same GGUF picked for its template.
    let JudgeResponse::GgufRead { result, .. } = ws.read_judge_gguf(1, MODEL_FILE, &src) else {
        panic!()
    };
    result.unwrap();
    let (_server, port) = start(&python, &model);
    let r = RemoteRun {
        remote: RemoteModel {
            provider: ProviderChoice::OpenAiCompatible,
            model: "smollm2".into(),
            base_url: format!("http://127.0.0.1:{port}/v1"),
        },
        questions: vec![q],
        k: K,
        tasks: vec![(0, 1)],
        max_tokens: 8,
        concurrency: 1,
        prompt: Default::default(),
        utility: Some(UtilityTemplate::Gguf {
            id: 1,
            name: MODEL_FILE.into(),
        }),
        context_p: false,
        keep: false,
    };
    let p = prepare(r.clone(), None, false, server_prompts(&ws, &r).unwrap()).unwrap();
    let env = Env {
        provider: p.provider(),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache: Rc::new(MemoryCache::new()),
    };
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(run(
        p,
        env,
        Control::new(),
        || 0.0,
        |e| out.borrow_mut().push(e),
    ));
    let out = out.into_inner();
    assert!(
        matches!(out.last(), Some(LitmEvent::Done { .. })),
        "{out:?}"
    );
    let remote = utilities(&out);
    assert_eq!(remote.len(), K);
    for (i, (s, l)) in remote.iter().zip(&local).enumerate() {
        let gap = (s.ln() - l.ln()).abs();
        eprintln!("passage {i}: p server {s:.6e}, local {l:.6e}, |Δ ln p| {gap:.4}");
        assert!(gap <= LN_P_TOL, "passage {i}: server {s}, local {l}");
    }
}
