//! What the app shows instead of itself when it runs inside a frame: the page where API keys
//! are typed must not work under another site's clickjacking overlay, and a `<meta>` CSP cannot
//! set `frame-ancestors` (hosts that can should send the headers in www/_headers; see
//! docs/privacy.md). `src/bin/app.rs` renders this when [`framed`] says so.

use yew::prelude::*;

/// Whether this page runs inside a frame (`window.top !== window.self`). A browser that will
/// not say counts as framed: refusing is the safe side.
pub fn framed() -> bool {
    let window = gloo::utils::window();
    match window.top() {
        Ok(Some(top)) => !js_sys::Object::is(&top, &window),
        Ok(None) | Err(_) => true,
    }
}

/// The refusal, with a link that opens the app in its own tab.
#[function_component(Framed)]
pub fn framed_notice() -> Html {
    let href = gloo::utils::window().location().href().unwrap_or_default();
    html! {
        <main id="framed" class="framed">
            <p>{ "ragscope does not run inside another site's frame: open it in its own tab." }</p>
            <p><a href={href} target="_blank" rel="noopener noreferrer">{ "Open ragscope in its own tab" }</a></p>
        </main>
    }
}
