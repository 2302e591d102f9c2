fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        // The same script serves as the evaluation worker's helper
        // (crates/worker/src/engine/shard.rs).
        if ragscope_worker::engine::shard::is_helper() {
            ragscope_worker::engine::shard::serve();
            return;
        }
        use yew_agent::Registrable;
        ragscope_worker::agent::EvalReactor::registrar().register();
    }
}
