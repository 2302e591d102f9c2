//! The parse helper worker (src/engine/tail_parser.rs): parses the tail of a large run while
//! the evaluation worker parses its head.
fn main() {
    #[cfg(target_arch = "wasm32")]
    ragscope_web::engine::tail_parser::helper_main();
}
