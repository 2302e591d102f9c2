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
pub fn venv(venv: &Path, requirements: &Path) -> Result<PathBuf> {
    if !venv.join("bin/python").exists() {
        step(&format!("creating the venv {}", venv.display()));
        run(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    }
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--disable-pip-version-check", "-r"])
        .arg(requirements))?;
    Ok(venv.join("bin/python"))
}
