//! `ragscope utility --backend gpu`: with a GPU adapter (lavapipe counts) the utilities equal
//! llama.cpp's as on the CPU and the adapter is named on stderr; without one the command fails
//! with a message saying so (never a silent CPU fallback).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn backend_gpu_runs_on_an_adapter_or_fails_clearly() {
    let model = path("../infer/tests/fixtures/llama-f32.gguf");
    let input = path("../../../shared/data/udcg/dataset_with_scores.json");
    let fx: Value = serde_json::from_str(
        &std::fs::read_to_string(path("../infer/tests/fixtures/llama-f32.json")).unwrap(),
    )
    .unwrap();
    let out = std::env::temp_dir().join(format!("ragscope-backend-{}.json", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(["utility", "--quiet", "--backend", "gpu", "--model"])
        .arg(&model)
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    if !run.status.success() {
        assert!(
            stderr.contains("--backend gpu: no GPU adapter found")
                || stderr.contains("without the GPU backend"),
            "unexpected failure: {stderr}"
        );
        ragscope_infer::test_support::skip("no Vulkan adapter (checked the error message only)");
        return;
    }
    assert!(
        stderr.contains("GPU backend on"),
        "adapter not reported: {stderr}"
    );
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    let mut n = 0;
    for want in fx["udcg_anchor"].as_array().unwrap() {
        let ex = got
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["example_id"] == want["example_id"])
            .unwrap();
        let p = ex["passages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["doc_id"] == want["doc_id"])
            .unwrap();
        let g = p["models_info"]["llama-f32"]["no_res_prob"]
            .as_f64()
            .unwrap();
        let w = want["p_no_response"].as_f64().unwrap();
        assert!((g - w).abs() / w <= 1e-4, "{g} vs llama.cpp {w}");
        n += 1;
    }
    assert!(n > 0);
}
