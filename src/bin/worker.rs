fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        use yew_agent::Registrable;
        ragscope_web::agent::EvalReactor::registrar().register();
    }
}
