fn main() {
    // Inside a frame (another site's clickjacking overlay) the app does not start: a notice
    // with a link to open it in its own tab stands in its place.
    #[cfg(target_arch = "wasm32")]
    if ragscope_web::ui::components::framed::framed() {
        yew::Renderer::<ragscope_web::ui::components::framed::Framed>::new().render();
    } else {
        yew::Renderer::<ragscope_web::ui::App>::new().render();
    }
}
