//! Running child processes with readable logging and errors.

use std::path::{Path, PathBuf};
use std::process::Command;

pub type Result<T = ()> = std::result::Result<T, String>;

/// The repository root (xtask lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the repository")
        .to_path_buf()
}

/// When this xtask process started: every step prints its offset, so a CI log shows where
/// the time goes.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

pub fn step(title: &str) {
    let t = STARTED.get_or_init(std::time::Instant::now).elapsed();
    eprintln!("\n\x1b[1;34m==> [{:>4} s] {title}\x1b[0m", t.as_secs());
}

/// Runs a command, inheriting stdio; an error names the command and its exit status.
pub fn run(cmd: &mut Command) -> Result {
    eprintln!("    $ {}", show(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("could not start `{}`: {e}", show(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", show(cmd)))
    }
}

/// Runs a command and returns its stdout, or None if it could not run or failed.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// PATH with the project's own tool folders first (npm's .bin for wasm-opt, cargo's bin).
pub fn tool_path() -> String {
    let mut parts = vec![
        root()
            .join("tests/browser/node_modules/.bin")
            .display()
            .to_string(),
        cargo_home().join("bin").display().to_string(),
    ];
    if let Ok(p) = std::env::var("PATH") {
        parts.push(p);
    }
    parts.join(":")
}

pub fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"))
}

/// A Python venv at `venv` (created when missing) with `requirements` installed; its python.
///
/// llama-cpp-python, where the requirements pin it, comes from a wheel built once per machine
/// without AMX ([`llama_wheel`]) rather than from pip's own source build.
pub fn venv(venv: &Path, requirements: &Path) -> Result<PathBuf> {
    if !venv.join("bin/python").exists() {
        step(&format!("creating the venv {}", venv.display()));
        run(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    }
    let pip = venv.join("bin/pip");
    let pinned = std::fs::read_to_string(requirements)
        .map_err(|e| format!("{}: {e}", requirements.display()))?
        .lines()
        .find_map(llama_pin);
    let mut install = Command::new(&pip);
    install
        .args(["install", "-q", "--disable-pip-version-check", "-r"])
        .arg(requirements);
    let Some(version) = pinned else {
        run(&mut install)?;
        return Ok(venv.join("bin/python"));
    };
    let wheel = llama_wheel(&pip, &version)?;
    // the wheel first, over pip's own build where an older venv holds one
    let marker = venv.join(".llama-cpp-python-no-amx");
    if !marker.exists() {
        run(Command::new(&pip)
            .args(["install", "-q", "--disable-pip-version-check"])
            .args(["--force-reinstall", "--no-deps"])
            .arg(&wheel))?;
    }
    let wheels = wheel.parent().unwrap_or(Path::new("."));
    run(install.arg("--find-links").arg(wheels))?;
    std::fs::write(&marker, format!("{}\n", wheel.display()))
        .map_err(|e| format!("{}: {e}", marker.display()))?;
    Ok(venv.join("bin/python"))
}

/// The version of a requirements line `llama-cpp-python==V` (extras allowed).
fn llama_pin(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("llama-cpp-python")?;
    let rest = match rest.strip_prefix('[') {
        Some(extras) => &extras[extras.find(']')? + 1..],
        None => rest,
    };
    Some(rest.strip_prefix("==")?.trim().to_string())
}

/// llama-cpp-python `version` as a wheel built here without AMX, in the user's cache (built
/// with `pip` when missing; 3 minutes on 2 cores).
///
/// Why: PyPI has no Linux wheel, so pip builds llama.cpp from source for the machine
/// (`-march=native`). On a CPU with AMX (seen 2026-11-24, 0.3.36) that build segfaults in
/// `ggml_backend_amx_mul_mat` on the first batched request to `llama_cpp.server`, whose model
/// runs on a worker thread, and the real-server step fails with "connection refused". Without
/// AMX, llama.cpp takes the AVX-512/AVX2 kernels it takes on every other machine here. Pip's
/// wheel cache keys a build by its source alone, so flags given to pip could reuse an AMX build.
fn llama_wheel(pip: &Path, version: &str) -> Result<PathBuf> {
    let dir = crate::models::cache_dir()
        .with_file_name("wheels")
        .join("llama-cpp-python-no-amx");
    let prefix = format!("llama_cpp_python-{version}-");
    let find = || {
        std::fs::read_dir(&dir).ok()?.flatten().find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.starts_with(&prefix) && name.ends_with(".whl")).then(|| e.path())
        })
    };
    if let Some(wheel) = find() {
        return Ok(wheel);
    }
    step(&format!(
        "building llama-cpp-python {version} without AMX into {}",
        dir.display()
    ));
    let building = dir.join(format!("building-{}", std::process::id()));
    std::fs::create_dir_all(&building).map_err(|e| format!("{}: {e}", building.display()))?;
    let mut build = Command::new(pip);
    build
        .args([
            "wheel",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-cache-dir",
        ])
        .arg("-w")
        .arg(&building)
        .arg(format!("llama-cpp-python=={version}"));
    if cfg!(target_arch = "x86_64") {
        let flags = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16";
        build.env("CFLAGS", flags).env("CXXFLAGS", flags);
    }
    run(&mut build)?;
    let built = std::fs::read_dir(&building)
        .map_err(|e| format!("{}: {e}", building.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("pip built no wheel in {}", building.display()))?;
    let wheel = dir.join(built.file_name().unwrap_or_default());
    std::fs::rename(&built, &wheel).map_err(|e| format!("{}: {e}", wheel.display()))?;
    let _ = std::fs::remove_dir_all(&building);
    Ok(wheel)
}

#[cfg(test)]
mod tests {
    use super::llama_pin;

    #[test]
    fn the_pinned_llama_cpp_python_is_read_with_or_without_extras() {
        assert_eq!(llama_pin("llama-cpp-python==0.3.36"), Some("0.3.36".into()));
        assert_eq!(
            llama_pin("  llama-cpp-python[server]==0.3.36 "),
            Some("0.3.36".into())
        );
        assert_eq!(llama_pin("# llama-cpp-python's server"), None);
        assert_eq!(llama_pin("llama-cpp-python>=0.3"), None);
        assert_eq!(llama_pin("llama-cpp-python-extra==1.0"), None);
    }
}
