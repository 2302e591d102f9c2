fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        // The same script serves as the evaluation worker's helper (src/engine/shard.rs).
        if ragscope_web::engine::shard::is_helper() {
            ragscope_web::engine::shard::serve();
            return;
        }
        use yew_agent::Registrable;
        ragscope_web::agent::EvalReactor::registrar().register();
    }
}
