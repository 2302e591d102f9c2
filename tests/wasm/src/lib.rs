//! Only tests live here (tests/*.rs); they run for wasm32 in a real browser. This library holds
//! what they share.

/// Says why the calling test checks nothing (no WebGPU adapter, say), or fails it where
/// skipping is not allowed: `cargo xtask test` builds these tests with `RAGSCOPE_NO_SKIPS=1`
/// (read at compile time: a page has no environment), since its Chromium has SwiftShader's
/// WebGPU. As `ragscope_infer::test_support::skip` does for the native tests.
pub fn skip(reason: &str) {
    if option_env!("RAGSCOPE_NO_SKIPS") == Some("1") {
        panic!("{reason}; built with RAGSCOPE_NO_SKIPS=1 (cargo xtask test), so this is a failure");
    }
    #[cfg(target_arch = "wasm32")]
    web_sys::console::log_1(&format!("SKIPPED: {reason}").into());
}

/// A Blob of `bytes`, as a picked file is.
#[cfg(target_arch = "wasm32")]
pub fn blob(bytes: &[u8]) -> web_sys::Blob {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    web_sys::Blob::new_with_u8_array_sequence(&parts).expect("a Blob from bytes")
}
