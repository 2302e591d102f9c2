//! "Compute locally" on WebGPU in a dedicated worker (Chromium's WebGPU on SwiftShader, see
//! webdriver.json), driven like the worker's loop: the tiny oracle model opened from a Blob, its
//! weights put on the GPU once, the UDCG anchor's utilities computed in GPU steps, and the
//! device destroyed mid-run as a driver reset would: the failed batch is retried on a new
//! device, and every passage's p(NO-RESPONSE) still equals llama.cpp's within 1e-4 relative —
//! nothing computed before the loss is lost or changed. Without WebGPU: `SKIPPED:`.
#![cfg(target_arch = "wasm32")]

use ragscope_protocol::compute::{ComputeEvent, ComputeSource, MemoryReport};
use ragscope_protocol::{FileKind, Response};
use ragscope_worker::engine::inference::gpu::Outcome;
use ragscope_worker::engine::Workspace;

mod common;
use common::load_with_tiny_model;
use serde_json::Value;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

const ORACLE: &str = include_str!("../../../crates/infer/tests/fixtures/llama-f32.json");
const UDCG: &str = include_str!("../../../../shared/data/udcg/dataset_with_scores.json");

/// The UDCG anchor loaded and the tiny model's weights on a WebGPU device, its utilities job
/// started on it: the adapter's label, or `None` (skipped) without WebGPU.
async fn started(ws: &mut Workspace) -> Option<String> {
    load_with_tiny_model(
        ws,
        "dataset_with_scores.json",
        UDCG.as_bytes(),
        FileKind::UdcgJson,
    );
    let label = match ws.gpu_ensure().await {
        Ok(l) => l,
        Err(why) => {
            ragscope_wasm_tests::skip(&format!("no WebGPU device ({why})"));
            return None;
        }
    };
    ws.start_compute(&ComputeSource::Udcg(0), 1, false)
        .expect("start");
    ws.job().expect("job").use_backend(&label, true);
    Some(label)
}

/// The finished job's p(NO-RESPONSE) of every passage against llama.cpp's, within 1e-4
/// relative; how many were checked.
fn finished_equals_llama_cpp(ws: &mut Workspace) -> usize {
    let out = ws.finish_compute(MemoryReport::default());
    let Some(Response::Compute(ComputeEvent::Done { tsv, backend, .. })) = out.first() else {
        panic!("no Done: {out:?}");
    };
    assert!(backend.starts_with("WebGPU: "), "{backend}");
    let oracle: Value = serde_json::from_str(ORACLE).expect("fixture JSON");
    let mut checked = 0;
    for line in tsv.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let want = oracle["udcg_anchor"]
            .as_array()
            .expect("udcg_anchor")
            .iter()
            .find(|e| e["example_id"] == f[0] && e["doc_id"] == f[1])
            .expect("passage in the oracle")["p_no_response"]
            .as_f64()
            .expect("p");
        let got: f64 = f[3].parse().expect("p");
        assert!(
            (got - want).abs() <= 1e-4 * want,
            "{line}: llama.cpp {want}"
        );
        checked += 1;
    }
    checked
}

#[wasm_bindgen_test]
async fn a_device_lost_mid_run_is_replaced_and_nothing_is_lost() {
    let mut ws = Workspace::default();
    let Some(label) = started(&mut ws).await else {
        return;
    };
    let mut steps = 0;
    let mut recovered = 0;
    while !ws.job().expect("job").is_done() {
        if steps == 1 {
            assert!(ws.gpu_lose(), "a device was held");
        }
        match ws.gpu_step().await {
            Outcome::Done(_) => {}
            Outcome::Recovered(_, info) => {
                assert!(info.gpu && info.reason.contains("retried on a new device"));
                recovered += 1;
            }
            Outcome::ToCpu(i) | Outcome::Paused(i) => panic!("{}", i.reason),
            Outcome::Failed(e) => panic!("{e}"),
        }
        steps += 1;
    }
    assert_eq!(recovered, 1, "the lost device was replaced once");
    assert!(ws.gpu_bytes() > 0);
    let checked = finished_equals_llama_cpp(&mut ws);
    assert_eq!(checked, 15);
    web_sys::console::log_1(
        &format!("{checked} passages on {label}, {steps} steps, device replaced once").into(),
    );
}

/// A device with memory for 3 passages a batch: the first batch runs out, batches of half as
/// many on a new device (halved again while they run out) take over for the rest of the run,
/// and every passage still equals llama.cpp's.
#[wasm_bindgen_test]
async fn a_batch_out_of_memory_goes_on_in_smaller_batches() {
    let mut ws = Workspace::default();
    let Some(label) = started(&mut ws).await else {
        return;
    };
    ws.gpu_simulate_memory_for(3);
    let mut reasons = Vec::new();
    while !ws.job().expect("job").is_done() {
        match ws.gpu_step().await {
            Outcome::Done(_) => {}
            Outcome::Recovered(_, info) => {
                assert!(info.gpu, "{}", info.reason);
                reasons.push(info.reason);
            }
            Outcome::ToCpu(i) | Outcome::Paused(i) => panic!("{}", i.reason),
            Outcome::Failed(e) => panic!("{e}"),
        }
    }
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("ran out of memory"), "{}", reasons[0]);
    let room = ws.gpu_batch_room().expect("a model");
    assert!((1..=3).contains(&room), "batches of {room}");
    assert_eq!(finished_equals_llama_cpp(&mut ws), 15);
    web_sys::console::log_1(&format!("on {label}: {}", reasons[0]).into());
}
