//! `ragscope utility` with the real SmolLM2-135M-Instruct Q4_1 model on the UDCG anchor data
//! (shared/data/udcg), against llama.cpp's p(NO-RESPONSE) on the model's dequantized F32 twin
//! (crates/infer/tests/fixtures/real/smollm2-135m-q4_1.json, written by
//! tests/oracle/generate_real.py). The model comes from the cache `cargo xtask models` fills; when
//! it is missing the test prints `SKIPPED: ...` and checks nothing.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// p relative to llama.cpp on the F32 twin, as in crates/infer/tests/real_models.rs (measured
/// there: 7.5e-6 at worst).
const P_REL_TOL: f64 = 3e-5;

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

#[test]
fn json_mode_with_real_smollm2_matches_llama_cpp() {
    let model = model_cache().join(MODEL_FILE);
    if !model.is_file() {
        ragscope_infer::test_support::skip(&format!(
            "{} is not in the model cache (run `cargo xtask models smollm2`)",
            model.display()
        ));
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let input = root.join("../../../shared/data/udcg/dataset_with_scores.json");
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("../infer/tests/fixtures/real/smollm2-135m-q4_1.json"))
            .expect("real-model fixture"),
    )
    .expect("fixture JSON");
    let out_dir =
        std::env::temp_dir().join(format!("ragscope-utility-real-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("out.json");
    let st = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(["utility", "--quiet", "--model-name", "smollm2", "--model"])
        .arg(&model)
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut n = 0;
    let mut worst = 0f64;
    for ex in after.as_array().unwrap() {
        let eid = ex["example_id"].as_str().unwrap();
        for p in ex["passages"].as_array().unwrap() {
            let did = p["doc_id"].as_str().unwrap();
            let got = p["models_info"]["smollm2"]["no_res_prob"].as_f64().unwrap();
            let source = format!("udcg:{eid}:{did}");
            let want = fixture["passages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["source"] == source.as_str())
                .unwrap_or_else(|| panic!("{source} not in the fixture"))["p_no_response"]
                .as_f64()
                .unwrap();
            let rel = (got - want).abs() / want;
            worst = worst.max(rel);
            assert!(rel <= P_REL_TOL, "{source}: {got} vs llama.cpp {want}");
            n += 1;
        }
    }
    assert_eq!(n, 15, "UDCG anchor passages");
    println!("ragscope utility, SmolLM2-135M Q4_1, 15 UDCG passages: max rel Δp = {worst:.2e} vs llama.cpp (F32 twin)");
    let _ = std::fs::remove_dir_all(&out_dir);
}
