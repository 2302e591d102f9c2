//! `cargo xtask test`: every test, in the order that fails fastest.

use crate::cmd::{self, root, run, step, Result};
use crate::skips::{run_capturing, Skips};
use crate::tools;
use std::process::Command;

/// Seconds each fuzz target runs in `cargo xtask test` (the issue asks for at least 30).
const FUZZ_SECONDS: u32 = 30;

pub fn test(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    // `--only fuzz|wasm|browser|real-server`: one of the slow suites alone, for working on it (never CI).
    if let Some(i) = args.iter().position(|a| a == "--only") {
        return match args.get(i + 1).map(String::as_str) {
            Some("fuzz") => fuzz(),
            Some("wasm") => {
                tools::ensure_all()?;
                let mut skips = Skips::default();
                skips.libtest(&wasm_tests()?);
                skips.check()
            }
            Some("browser") => {
                tools::ensure_all()?;
                let mut skips = Skips::default();
                skips.tap(&browser_e2e()?);
                skips.check()
            }
            Some("real-server") => crate::real_server::test().map(|_| ()),
            Some("python") => {
                let mut skips = Skips::default();
                python_step(&mut skips)?;
                skips.check()
            }
            other => Err(format!(
                "--only takes fuzz, wasm, browser, real-server or python (got {other:?})"
            )),
        };
    }
    let started = std::time::Instant::now();

    step("rustfmt");
    run(cmd::cargo().args(["fmt", "--all", "--check"]))?;

    step("clippy (native, -D warnings)");
    run(cmd::cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;

    // The real-model tests (crates/infer, crates/cli) read the models from the model cache.
    step("real models (cargo xtask models)");
    for m in crate::models::ALL {
        crate::models::ensure(m)?;
    }

    // A test that finds no Vulkan adapter or no cached model fails here instead of skipping:
    // both are provided first (lavapipe is one of the Debian packages; ragscope_infer::test_support).
    tools::ensure_apt_packages()?;
    let mut skips = Skips::default();
    step("native tests");
    skips.libtest(&run_capturing(
        cmd::cargo()
            .args(["test", "--workspace"])
            .env("RAGSCOPE_NO_SKIPS", "1"),
    )?);

    // The tests `#[ignore]`d for their size (Qwen2.5-0.5B, Gemma 3 270M, a real model on lavapipe):
    // a plain `cargo test` reports them as ignored; here they run.
    step("real models' tests (#[ignore]d in a plain cargo test)");
    skips.libtest(&run_capturing(
        cmd::cargo()
            .args(["test", "--workspace"])
            .args(["--test", "real_models", "--test", "gemma3_real"])
            .args(["--test", "gpu_oracle", "--", "--ignored"])
            .env("RAGSCOPE_NO_SKIPS", "1"),
    )?);

    python_step(&mut skips)?;

    skips.libtest(&crate::real_server::test()?);

    if quick {
        eprintln!("\n--quick: NOT a full run (no wasm, fuzz or browser tests); `cargo xtask test` runs them");
        return skips.check();
    }

    tools::ensure_all()?;

    step("clippy (wasm32 web app, -D warnings)");
    run(cmd::cargo()
        .args([
            "clippy",
            "-p",
            "ragscope-web",
            "-p",
            "ragscope-worker",
            "-p",
            "ragscope-platform",
            "-p",
            "ragscope-protocol",
            "--target",
            "wasm32-unknown-unknown",
        ])
        .args(["--", "-D", "warnings"]))?;

    skips.libtest(&wasm_tests()?);
    fuzz()?;
    skips.tap(&browser_e2e()?);

    step("what did not run");
    skips.check()?;
    eprintln!(
        "\nxtask test: all suites passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The Python package: its wheel, installed in a fresh venv beside its oracles
/// (pytrec-eval-terrier, ir_measures, ranx, scipy), then its pytest suite.
fn python_step(skips: &mut Skips) -> Result {
    let started = std::time::Instant::now();
    skips.pytest(&crate::wheel::pytest(&crate::wheel::wheel()?)?);
    eprintln!("python step: {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The eval engine compiled to wasm32 and run in headless Chromium by wasm-bindgen-test.
fn wasm_tests() -> Result<String> {
    step("wasm32 tests in headless Chromium (wasm-bindgen-test)");
    let webdriver = root().join("tests/wasm/webdriver.json");
    run_capturing(
        cmd::cargo()
            .args([
                "test",
                "-p",
                "ragscope-wasm-tests",
                "--target",
                "wasm32-unknown-unknown",
            ])
            .env("PATH", cmd::tool_path())
            .env("CHROMEDRIVER", "/usr/bin/chromedriver")
            // gpu_in_browser runs every oracle model and two decodes on SwiftShader: 289 s on a
            // quiet 2-core machine (2026-11-22), so 300 s was too tight.
            .env("WASM_BINDGEN_TEST_TIMEOUT", "900")
            .env("WASM_BINDGEN_TEST_DRIVER_TIMEOUT", "60")
            .env("WEBDRIVER_JSON", webdriver)
            // its Chromium has SwiftShader's WebGPU: a test without an adapter fails (read when the
            // tests are compiled: tests/wasm/src/lib.rs)
            .env("RAGSCOPE_NO_SKIPS", "1"),
    )
}

fn fuzz() -> Result {
    let fuzz_dir = root().join("fuzz");
    if !fuzz_dir.join("Cargo.toml").exists() {
        return Err(
            "fuzz/Cargo.toml is missing: the parsers' fuzz targets are part of the suite".into(),
        );
    }
    tools::ensure_cargo_fuzz()?;
    // The targets declared in fuzz/Cargo.toml must be exactly the ones cargo-fuzz lists and
    // runs: an empty or short list (a broken manifest, a cargo-fuzz that prints nothing) is a
    // failure, never a silent pass.
    let expected = declared_fuzz_targets(&fuzz_dir)?;
    let listed = cmd::output(cmd::cargo().args(["fuzz", "list"]).current_dir(&fuzz_dir))
        .ok_or("`cargo fuzz list` failed")?;
    let mut targets: Vec<&str> = listed
        .lines()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    targets.sort_unstable();
    let mut want: Vec<&str> = expected.iter().map(String::as_str).collect();
    want.sort_unstable();
    if targets != want || targets.is_empty() {
        return Err(format!(
            "cargo fuzz list printed {targets:?}, but fuzz/Cargo.toml declares {want:?}"
        ));
    }
    // One build of every target, then the targets run side by side, one per core: on the
    // 2-core CI machine that halves the suite's fuzzing time (12 targets x 30 s). Each run's
    // libFuzzer output goes to its own log (thousands of lines per target), whose tail is
    // printed when it fails.
    step("building the fuzz targets");
    run(fuzz_cargo().args(["fuzz", "build"]).current_dir(&fuzz_dir))?;
    let logs = root().join("target/fuzz-logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let parallel = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    step(&format!(
        "fuzzing {} targets for {FUZZ_SECONDS} s each, {parallel} at a time",
        targets.len()
    ));
    let mut ran = 0;
    for chunk in targets.chunks(parallel) {
        let mut children = Vec::new();
        for &target in chunk {
            let log_path = logs.join(format!("{target}.log"));
            let log = std::fs::File::create(&log_path)
                .map_err(|e| format!("{}: {e}", log_path.display()))?;
            let err_log = log.try_clone().map_err(|e| e.to_string())?;
            let mut c = fuzz_cargo();
            c.args(fuzz_run_args(&fuzz_dir, target)?)
                .current_dir(&fuzz_dir)
                .stdout(log)
                .stderr(err_log);
            eprintln!("    $ {}  > {}", cmd::show(&c), log_path.display());
            let child = c
                .spawn()
                .map_err(|e| format!("could not start cargo fuzz run {target}: {e}"))?;
            children.push((target, log_path, child));
        }
        let mut failed = Vec::new();
        for (target, log_path, mut child) in children {
            let status = child.wait().map_err(|e| e.to_string())?;
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            let done = text
                .lines()
                .rev()
                .find(|l| l.starts_with("Done "))
                .unwrap_or("(no \"Done\" line)");
            if status.success() {
                eprintln!("    fuzz {target}: {done}");
                ran += 1;
            } else {
                let tail: Vec<&str> = text.lines().rev().take(60).collect();
                for line in tail.iter().rev() {
                    eprintln!("    | {line}");
                }
                failed.push(format!(
                    "fuzz target {target} failed ({status}); log: {}",
                    log_path.display()
                ));
            }
        }
        if !failed.is_empty() {
            return Err(failed.join("\n"));
        }
    }
    if ran != want.len() {
        return Err(format!("ran {ran} fuzz targets of {}", want.len()));
    }
    eprintln!("fuzzing: {ran} targets ran for {FUZZ_SECONDS} s each");
    Ok(())
}

/// cargo with the toolchain cargo-fuzz needs. `cargo xtask` runs under the stable toolchain's
/// own cargo (not rustup's proxy), so the nightly one is reached through `rustup run`.
fn fuzz_cargo() -> Command {
    let mut c = match tools::fuzz_toolchain() {
        tools::FuzzToolchain::Nightly => {
            let mut c = Command::new("rustup");
            c.args(["run", "nightly", "cargo"]);
            c
        }
        tools::FuzzToolchain::BootstrapStable => {
            let mut c = cmd::cargo();
            c.env("RUSTC_BOOTSTRAP", "1");
            c
        }
    };
    c.env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC");
    c
}

/// `fuzz run <target> <corpus> [<seeds>] -- <libFuzzer options>`. Each target gets its own
/// corpus folder under fuzz/corpus (git-ignored), seeded from fuzz/seeds/<target> when
/// present, so runs start from real files.
fn fuzz_run_args(fuzz_dir: &std::path::Path, target: &str) -> Result<Vec<String>> {
    let corpus = fuzz_dir.join("corpus").join(target);
    std::fs::create_dir_all(&corpus).map_err(|e| e.to_string())?;
    let seeds = fuzz_dir.join("seeds").join(target);
    let mut args = vec![
        "fuzz".to_string(),
        "run".into(),
        target.into(),
        corpus.display().to_string(),
    ];
    if seeds.is_dir() {
        args.push(seeds.display().to_string());
    }
    args.extend([
        "--".into(),
        format!("-max_total_time={FUZZ_SECONDS}"),
        "-rss_limit_mb=4096".into(),
        "-max_len=65536".into(),
    ]);
    // A target's dictionary (fuzz/<target>.dict) steers libFuzzer towards its grammar.
    let dict = fuzz_dir.join(format!("{target}.dict"));
    if dict.is_file() {
        args.push(format!("-dict={}", dict.display()));
    }
    Ok(args)
}

/// The `[[bin]]` names of fuzz/Cargo.toml (each is one fuzz target).
fn declared_fuzz_targets(fuzz_dir: &std::path::Path) -> Result<Vec<String>> {
    let manifest = std::fs::read_to_string(fuzz_dir.join("Cargo.toml"))
        .map_err(|e| format!("fuzz/Cargo.toml: {e}"))?;
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin {
            if let Some(v) = line.strip_prefix("name") {
                let v = v
                    .trim_start()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"');
                names.push(v.to_string());
            }
        }
    }
    if names.is_empty() {
        return Err("fuzz/Cargo.toml declares no [[bin]] fuzz target".into());
    }
    Ok(names)
}

/// Builds the site with trunk and drives it in headless Chromium (tests/browser/*.test.mjs).
fn browser_e2e() -> Result<String> {
    crate::serve::build_site(true)?;
    // The Judges panel's test talks to crates/judge's fake provider on loopback.
    step("building the fake LLM provider for the Judges e2e test");
    run(cmd::cargo().args([
        "build",
        "-p",
        "ragscope-judge-fake",
        "--bin",
        "fake_provider",
    ]))?;
    // compute-webgpu.test.mjs compares the page's utilities with `ragscope utility --backend cpu`.
    step("building the ragscope CLI for the compute e2e test");
    run(cmd::cargo().args(["build", "-p", "ragscope-cli"]))?;
    step("browser end-to-end tests (node --test, playwright-core + Debian Chromium)");
    // A second reporter writes TAP, where a skipped test is named with its reason.
    let artifacts = root().join("target/e2e-artifacts");
    std::fs::create_dir_all(&artifacts).map_err(|e| format!("{}: {e}", artifacts.display()))?;
    let tap = artifacts.join("browser.tap");
    let _ = std::fs::remove_file(&tap);
    run(node_test()
        .args(["--test-reporter=spec", "--test-reporter-destination=stdout"])
        .arg("--test-reporter=tap")
        .arg(format!("--test-reporter-destination={}", tap.display())))?;
    std::fs::read_to_string(&tap).map_err(|e| format!("{}: {e}", tap.display()))
}

/// `node --test` in tests/browser, with what the tests read from the environment (the built
/// site, the CLI, the fake provider, the shared data). Without file arguments node runs every
/// `*.test.mjs`; the benchmarks (`*.bench.mjs`) are named by `cargo xtask bench browser`.
pub fn node_test() -> Command {
    let mut c = Command::new("node");
    c.args(["--test", "--test-concurrency=1"])
        .current_dir(root().join("tests/browser"))
        .env(
            "RAGSCOPE_FAKE_PROVIDER",
            root().join("target/debug/fake_provider"),
        )
        .env("RAGSCOPE_CLI", root().join("target/debug/ragscope"))
        .env("RAGSCOPE_DIST", root().join("dist"))
        .env("RAGSCOPE_SHARED", root().join("../shared"))
        .env("RAGSCOPE_ARTIFACTS", root().join("target/e2e-artifacts"));
    c
}

/// Regenerates the committed fixtures from their Python oracles, each folder in its own venv.
pub fn oracle() -> Result {
    // (oracle folder, script, fixture folder it writes)
    let oracles = [
        (
            "tests/oracle/stats",
            "generate.py",
            "crates/eval/tests/fixtures/stats",
        ),
        (
            "tests/oracle/stats",
            "generate_svm.py",
            "crates/eval/tests/fixtures/rag",
        ),
        (
            "tests/oracle/stats",
            "generate_study.py",
            "crates/eval/tests/fixtures/rag",
        ),
        (
            "tests/oracle/stats",
            "generate_study_inference.py",
            "crates/eval/tests/fixtures/rag",
        ),
        (
            "tests/oracle/stats",
            "generate_answer_match.py",
            "crates/eval/tests/fixtures/rag",
        ),
        (
            "tests/oracle/rouge",
            "generate.py",
            "crates/eval/tests/fixtures/rag",
        ),
        (
            "tests/oracle/rouge",
            "generate_erag.py",
            "crates/cli/tests/fixtures/erag",
        ),
        ("tests/oracle", "generate.py", "crates/infer/tests/fixtures"),
        // After generate.py: it rebuilds the models and checks they equal the committed ones.
        (
            "tests/oracle",
            "generate_decode.py",
            "crates/infer/tests/fixtures",
        ),
        (
            "tests/oracle/answers",
            "generate.py",
            "crates/eval/tests/fixtures/answers",
        ),
        (
            "tests/oracle/tournament",
            "generate.py",
            "crates/eval/tests/fixtures/tournament",
        ),
        (
            "tests/oracle/calibration",
            "generate.py",
            "crates/eval/tests/fixtures/calibration",
        ),
        // Needs the real models in the cache (fetched just below); skips those missing.
        (
            "tests/oracle",
            "generate_real.py",
            "crates/infer/tests/fixtures/real",
        ),
    ];
    for m in crate::models::ALL {
        crate::models::ensure(m)?;
    }
    for (folder, script, out) in oracles {
        let dir = root().join(folder);
        let python = cmd::venv(&dir.join(".venv"), &dir.join("requirements.txt"))?;
        step(&format!("oracle {folder}/{script} -> {out}"));
        run(Command::new(python)
            .arg(dir.join(script))
            .arg("--out")
            .arg(root().join(out))
            .current_dir(root()))?;
    }
    Ok(())
}
