//! Only tests live here (tests/*.rs); they run for wasm32 in a real browser.
