fn main() {
    #[cfg(target_arch = "wasm32")]
    yew::Renderer::<ragscope_web::ui::App>::new().render();
}
