//! Where the time of a load or an evaluation went, kept in `window.ragscopeTimings` (an array
//! of `{what, start_ms, end_ms, phases, wasm_memory_bytes}` from the worker and `{what, at_ms}`
//! marks of the page) for the performance test to print. A few small objects per file; nothing
//! is sent anywhere.

use ragscope_protocol::Timings;
use wasm_bindgen::{JsCast, JsValue};

const KEY: &str = "ragscopeTimings";

fn push(entry: JsValue) {
    let window: JsValue = gloo::utils::window().into();
    let list = js_sys::Reflect::get(&window, &KEY.into())
        .ok()
        .and_then(|v| v.dyn_into::<js_sys::Array>().ok())
        .unwrap_or_else(|| {
            let list = js_sys::Array::new();
            let _ = js_sys::Reflect::set(&window, &KEY.into(), &list);
            list
        });
    list.push(&entry);
}

fn now_ms() -> f64 {
    gloo::utils::window()
        .performance()
        .map_or_else(js_sys::Date::now, |p| p.time_origin() + p.now())
}

/// The worker's account of a load or an evaluation.
pub fn record(timings: &Timings) {
    if let Ok(json) = serde_json::to_string(timings) {
        if let Ok(value) = js_sys::JSON::parse(&json) {
            push(value);
        }
    }
}

/// A moment on the page (e.g. the report arrived), on the same clock as the worker's.
pub fn mark(what: &str) {
    let entry = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&entry, &"what".into(), &what.into());
    let _ = js_sys::Reflect::set(&entry, &"at_ms".into(), &now_ms().into());
    push(entry.into());
}
