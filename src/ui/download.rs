//! Saving exports: text as a file, a chart's SVG as is or rendered to PNG, the HTML report.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Offers `text` as a download named `name` (a Blob URL: nothing leaves the browser).
pub fn save_text(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) {
        save_blob(name, &blob);
    }
}

pub fn save_blob(name: &str, blob: &web_sys::Blob) {
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    let document = gloo::utils::document();
    if let Ok(a) = document.create_element("a") {
        if let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() {
            a.set_href(&url);
            a.set_download(name);
            a.set_attribute("data-export", name).ok();
            if let Some(body) = document.body() {
                let _ = body.append_child(&a);
                a.click();
                let _ = body.remove_child(&a);
            }
        }
    }
    // Revoke later: some browsers start the download asynchronously.
    gloo::timers::callback::Timeout::new(10_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
}

/// The chart's markup as a standalone SVG document, with the page's colours resolved.
pub fn svg_markup(id: &str) -> Option<String> {
    let el = gloo::utils::document().get_element_by_id(id)?;
    Some(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
        el.outer_html()
    ))
}

/// Every chart on the page as (title, SVG markup), for the HTML report.
pub fn charts_on_page() -> Vec<(String, String)> {
    let Ok(list) = gloo::utils::document().query_selector_all("svg.chart") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.get(i)?.dyn_into::<web_sys::Element>().ok())
        .map(|el| {
            let title = el.get_attribute("aria-label").unwrap_or_default();
            (title, el.outer_html())
        })
        .collect()
}

/// Renders the chart's SVG onto a canvas at 2× and saves it as PNG.
pub fn save_png(id: &str, name: &str) {
    let Some(svg) = svg_markup(id) else { return };
    let Some(el) = gloo::utils::document().get_element_by_id(id) else {
        return;
    };
    let rect = el.get_bounding_client_rect();
    let (w, h) = (rect.width().max(1.0), rect.height().max(1.0));
    let parts = js_sys::Array::of1(&JsValue::from_str(&svg));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("image/svg+xml");
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let Ok(img) = web_sys::HtmlImageElement::new() else {
        return;
    };
    let name = name.to_string();
    let img2 = img.clone();
    let url2 = url.clone();
    let onload = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url2);
        let document = gloo::utils::document();
        let Some(canvas) = document
            .create_element("canvas")
            .ok()
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            return;
        };
        canvas.set_width((w * 2.0) as u32);
        canvas.set_height((h * 2.0) as u32);
        let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        else {
            return;
        };
        ctx.set_fill_style_str("#ffffff");
        ctx.fill_rect(0.0, 0.0, w * 2.0, h * 2.0);
        let _ = ctx.scale(2.0, 2.0);
        let _ = ctx.draw_image_with_html_image_element_and_dw_and_dh(&img2, 0.0, 0.0, w, h);
        let done = Closure::once_into_js(move |blob: Option<web_sys::Blob>| {
            if let Some(blob) = blob {
                save_blob(&name, &blob);
            }
        });
        let _ = canvas.to_blob(done.unchecked_ref());
    });
    img.set_onload(Some(onload.unchecked_ref()));
    img.set_src(&url);
}
