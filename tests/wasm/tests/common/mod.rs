//! Set-up shared by the WebGPU tests of the worker's engine.

use ragscope_protocol::{FileKind, Response};
use ragscope_wasm_tests::blob;
use ragscope_worker::blob_source::BlobSource;
use ragscope_worker::engine::inference::open_model;
use ragscope_worker::engine::Workspace;

/// The tiny llama test model (f32 GGUF), as the tests open it.
pub const MODEL: &[u8] = include_bytes!("../../../../crates/infer/tests/fixtures/llama-f32.gguf");

/// Loads `bytes` as file 0 named `name`, which must be read as `kind`, and opens the tiny
/// model from a Blob, as a picked file is.
pub fn load_with_tiny_model(ws: &mut Workspace, name: &str, bytes: &[u8], kind: FileKind) {
    let loaded = ws.load_whole(0, name, bytes);
    assert!(
        matches!(&loaded[..], [Response::Loaded { kind: k, .. }] if *k == kind),
        "{loaded:?}"
    );
    let source = BlobSource::new(blob(MODEL)).expect("in a worker");
    ws.set_model(open_model(&source, "llama-f32.gguf").expect("model"));
}
