//! "Answer the contexts" on WebGPU in a dedicated worker (Chromium's WebGPU on SwiftShader)
//! with a device that has memory for one prompt a step: the first step runs out, steps of half
//! as many on a new device take over for the rest of the run, and the answered file equals the
//! CPU engine's byte for byte. Without WebGPU: `SKIPPED:` (a failure under `cargo xtask test`).
#![cfg(target_arch = "wasm32")]

use ragscope_protocol::answer_generation::{AnswerEvent, AnswerSource, AnswerStart};
use ragscope_protocol::compute::{BackendChoice, ComputeEvent};
use ragscope_protocol::{FileKind, Response};
use ragscope_worker::engine::Workspace;

mod common;
use common::load_with_tiny_model;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

const CONTEXTS: &str = include_str!("../../../crates/cli/tests/fixtures/answer/contexts.jsonl");

/// The answer fixture's contexts loaded and the tiny model opened, an answer job started.
fn started() -> Workspace {
    let mut ws = Workspace::default();
    load_with_tiny_model(
        &mut ws,
        "contexts.jsonl",
        CONTEXTS.as_bytes(),
        FileKind::ContextSets,
    );
    ws.start_answers(&AnswerStart {
        source: AnswerSource::Contexts(0),
        result: 1,
        backend: BackendChoice::Gpu,
        erag: false,
        max_new_tokens: 8,
    })
    .expect("start");
    ws
}

/// The answered file of a finished job.
fn answered(ws: &mut Workspace) -> String {
    let out = ws.finish_answers();
    match out.first() {
        Some(Response::Compute(ComputeEvent::Answers(AnswerEvent::Done(done)))) => {
            done.jsonl.clone()
        }
        other => panic!("no Done: {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn a_step_out_of_memory_goes_on_in_smaller_steps_with_the_same_answers() {
    let mut cpu = started();
    while !cpu.answer_job().expect("job").is_done() {
        cpu.answer_step_cpu().expect("a CPU step");
    }
    let want = answered(&mut cpu);

    let mut ws = started();
    let label = match ws.gpu_ensure().await {
        Ok(l) => l,
        Err(why) => {
            ragscope_wasm_tests::skip(&format!("no WebGPU device ({why})"));
            return;
        }
    };
    ws.answer_job().expect("job").use_backend(&label, true);
    ws.gpu_simulate_memory_for(1);
    let mut reasons = Vec::new();
    while !ws.answer_job().expect("job").is_done() {
        if let Some(info) = ws.answer_step_gpu().await.expect("a GPU step") {
            assert!(info.gpu, "moved off the GPU: {}", info.reason);
            reasons.push(info.reason);
        }
    }
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("ran out of memory"), "{}", reasons[0]);
    assert_eq!(ws.gpu_batch_room(), Some(1));
    assert_eq!(answered(&mut ws), want, "answers on WebGPU in steps of one");
    web_sys::console::log_1(&format!("on {label}: {}", reasons[0]).into());
}
