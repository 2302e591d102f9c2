//! `onchange` callbacks of the form controls the compute panels share: each reads its element's
//! value and hands it on (an event from another element is ignored).

use ragscope_protocol::compute::ComputeRequest;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// A `<select>`: `f` gets the chosen option's value.
pub fn on_select(f: impl Fn(String) + 'static) -> Callback<Event> {
    Callback::from(move |e: Event| {
        if let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() {
            f(sel.value());
        }
    })
}

/// A checkbox: `f` gets whether it is checked.
pub fn on_checked(f: impl Fn(bool) + 'static) -> Callback<Event> {
    Callback::from(move |e: Event| {
        if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
            f(input.checked());
        }
    })
}

/// A number input for a count: `f` gets the value, at least 1; text that is not a whole number
/// is ignored (the last good count stays).
pub fn on_count(f: impl Fn(usize) + 'static) -> Callback<Event> {
    Callback::from(move |e: Event| {
        if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
            if let Ok(v) = input.value().trim().parse::<usize>() {
                f(v.max(1));
            }
        }
    })
}

/// A GGUF file input: asks the worker to open the picked file, offered to it on a channel (it
/// reads the file slice by slice; the file is never uploaded nor copied).
pub fn on_model_file(on_request: Callback<ComputeRequest>) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let Some(input) = e.target_dyn_into::<HtmlInputElement>() else {
            return;
        };
        let Some(file) = input.files().and_then(|l| l.get(0)) else {
            return;
        };
        if let Ok(url) = ragscope_platform::blob_channel::offer_kept(&file) {
            on_request.emit(ComputeRequest::OpenModel {
                url,
                name: file.name(),
            });
        }
    })
}
