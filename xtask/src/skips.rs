//! A check that did not run is never a pass (issue #41).
//!
//! Every suite `cargo xtask test` runs reports what it did not run: libtest's `ignored` tests
//! (native and wasm32), node's skipped browser tests (read from a TAP file), and the opt-in
//! steps' own reasons. A test `#[ignore]`d in the native step counts as run only when a later
//! step (the real models, the real server) runs it and it passes. Whatever is left is a skip, and
//! a skip fails the run unless `tests/allowed-skips.txt` lists it with its reason. That list is
//! printed by every run, so a reader of any CI log sees what was allowed to be left out and why.

use crate::cmd::{root, show, Result};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// The allow-list: one skip a line, `ID<TAB>reason`; `#` starts a comment.
pub const ALLOW_LIST: &str = "tests/allowed-skips.txt";

/// What did not run, by id (a test's name, `browser: <name>`, or a step's name), and why.
#[derive(Default)]
pub struct Skips {
    skipped: BTreeMap<String, String>,
    /// Tests that libtest reported as ignored, waiting for a later step to run them.
    ignored: BTreeMap<String, String>,
}

impl Skips {
    pub fn skip(&mut self, id: &str, reason: &str) {
        self.skipped.insert(id.to_string(), reason.to_string());
    }

    /// Reads a libtest run's output: its `ignored` tests wait for a later step, and the tests it
    /// passed settle those that were waiting.
    pub fn libtest(&mut self, output: &str) {
        for line in output.lines() {
            match libtest_line(line) {
                Some((name, Outcome::Ignored(reason))) => {
                    self.ignored
                        .entry(name.to_string())
                        .or_insert_with(|| reason.to_string());
                }
                Some((name, Outcome::Ok)) => {
                    self.ignored.remove(name);
                }
                None => {}
            }
        }
    }

    /// Reads node's TAP report: each `# SKIP` (or `# TODO`) test is a skip.
    pub fn tap(&mut self, tap: &str) {
        for (name, reason) in tap_skips(tap) {
            self.skip(&format!("browser: {name}"), &reason);
        }
    }

    /// Reads pytest's `-rs` report: each `SKIPPED [n] place: reason` line is a skip.
    pub fn pytest(&mut self, output: &str) {
        for line in output.lines() {
            if let Some(rest) = line.strip_prefix("SKIPPED [") {
                let rest = rest.split_once("] ").map_or(rest, |(_, r)| r);
                let (place, reason) = rest.split_once(": ").unwrap_or((rest, ""));
                self.skip(&format!("python: {place}"), reason);
            }
        }
    }

    /// Prints the allow-list and every skip; fails when a skip is not on the list.
    pub fn check(mut self) -> Result {
        let allowed = allowed()?;
        for (name, reason) in std::mem::take(&mut self.ignored) {
            self.skipped
                .insert(name, format!("#[ignore]d, and no step ran it: {reason}"));
        }
        print_allowed(&allowed);
        if self.skipped.is_empty() {
            eprintln!("Skipped: nothing.");
            return Ok(());
        }
        let mut refused = Vec::new();
        eprintln!("Skipped:");
        for (id, reason) in &self.skipped {
            let ok = allowed.contains_key(id);
            eprintln!(
                "  {} {id}: {reason}",
                if ok { "allowed" } else { "NOT ALLOWED" }
            );
            if !ok {
                refused.push(id.clone());
            }
        }
        if refused.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} check(s) did not run and are not on {ALLOW_LIST}: {}",
                refused.len(),
                refused.join(", ")
            ))
        }
    }
}

pub fn print_allowed(allowed: &BTreeMap<String, String>) {
    if allowed.is_empty() {
        eprintln!("\nAllowed skips ({ALLOW_LIST}): none.");
    } else {
        eprintln!("\nAllowed skips ({ALLOW_LIST}):");
        for (id, reason) in allowed {
            eprintln!("  {id}: {reason}");
        }
    }
}

/// The allow-list, read from the repository; an entry without a reason is an error.
pub fn allowed() -> Result<BTreeMap<String, String>> {
    let path = root().join(ALLOW_LIST);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_allowed(&text).map_err(|e| format!("{ALLOW_LIST}:{e}"))
}

fn parse_allowed(text: &str) -> std::result::Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (id, reason) = line
            .split_once('\t')
            .map(|(a, b)| (a.trim(), b.trim()))
            .unwrap_or((line, ""));
        if reason.is_empty() {
            return Err(format!(
                "{}: `{id}` has no reason (write ID, a tab, then why it may be skipped)",
                i + 1
            ));
        }
        out.insert(id.to_string(), reason.to_string());
    }
    Ok(out)
}

enum Outcome<'a> {
    Ok,
    Ignored(&'a str),
}

/// `test NAME ... ok` or `test NAME ... ignored[, REASON]` (libtest's and wasm-bindgen-test's
/// plain format).
fn libtest_line(line: &str) -> Option<(&str, Outcome<'_>)> {
    let rest = line.strip_prefix("test ")?;
    let (name, result) = rest.split_once(" ... ")?;
    let result = result.trim_end();
    if result == "ok" {
        Some((name, Outcome::Ok))
    } else if let Some(r) = result.strip_prefix("ignored") {
        let reason = r.strip_prefix(',').unwrap_or(r).trim();
        Some((name, Outcome::Ignored(reason)))
    } else {
        None
    }
}

/// `ok N - NAME # SKIP reason` (or `# TODO`) lines of a TAP report, at any depth.
fn tap_skips(tap: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in tap.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("ok ") else {
            continue;
        };
        let Some((_, rest)) = rest.split_once(" - ") else {
            continue;
        };
        for marker in [" # SKIP", " # TODO"] {
            if let Some((name, reason)) = rest.split_once(marker) {
                let reason = reason.trim();
                let reason = if reason.is_empty() {
                    "no reason given"
                } else {
                    reason
                };
                out.push((name.trim().to_string(), reason.to_string()));
                break;
            }
        }
    }
    out
}

/// Runs a command with its stdout echoed line by line and returned (stderr is inherited); an
/// error names the command and its exit status.
pub fn run_capturing(cmd: &mut Command) -> Result<String> {
    eprintln!("    $ {}", show(cmd));
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start `{}`: {e}", show(cmd)))?;
    let mut captured = String::new();
    if let Some(out) = child.stdout.take() {
        let mut stdout = std::io::stdout().lock();
        for line in BufReader::new(out).lines() {
            let line = line.map_err(|e| format!("reading `{}`: {e}", show(cmd)))?;
            let _ = writeln!(stdout, "{line}");
            captured.push_str(&line);
            captured.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for `{}`: {e}", show(cmd)))?;
    if status.success() {
        Ok(captured)
    } else {
        Err(format!("`{}` failed ({status})", show(cmd)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ignored_test_that_a_later_step_passes_is_not_a_skip() {
        let mut s = Skips::default();
        s.libtest(
            "running 3 tests\n\
             test a ... ok\n\
             test real::qwen ... ignored, needs Qwen\n\
             test gemma ... ignored\n\
             test result: ok. 1 passed; 0 failed; 2 ignored\n",
        );
        s.libtest("test real::qwen ... ok\ntest gemma ... FAILED\n");
        assert_eq!(
            s.ignored.into_iter().collect::<Vec<_>>(),
            [("gemma".to_string(), String::new())]
        );
    }

    #[test]
    fn tap_skips_are_read_at_any_depth() {
        let tap = "TAP version 13\n\
                   # Subtest: webgpu\n    \
                   ok 1 - utilities on WebGPU # SKIP no WebGPU adapter (none)\n\
                   ok 2 - runs\n\
                   not ok 3 - fails\n\
                   ok 4 - later # TODO\n";
        assert_eq!(
            tap_skips(tap),
            [
                (
                    "utilities on WebGPU".to_string(),
                    "no WebGPU adapter (none)".to_string()
                ),
                ("later".to_string(), "no reason given".to_string())
            ]
        );
    }

    #[test]
    fn pytest_skips_are_read_from_its_short_summary() {
        let mut s = Skips::default();
        s.pytest(
            "45 passed, 1 skipped in 3.2s\n\
             SKIPPED [1] test_x.py:12: no pandas\n",
        );
        assert_eq!(s.skipped["python: test_x.py:12"], "no pandas");
    }

    #[test]
    fn an_allowed_skip_needs_a_reason() {
        let list = parse_allowed("# comment\n\nbrowser: x\tno GPU here\n").unwrap();
        assert_eq!(list["browser: x"], "no GPU here");
        let e = parse_allowed("# c\nbrowser: y\n").unwrap_err();
        assert!(e.starts_with("2: `browser: y` has no reason"), "{e}");
    }

    #[test]
    fn a_skip_off_the_list_fails_the_run() {
        // the committed list, whatever it holds, does not allow a made-up id
        let mut s = Skips::default();
        s.skip("no such check", "made up for this test");
        let e = s.check().unwrap_err();
        assert!(e.contains("no such check"), "{e}");
    }
}
