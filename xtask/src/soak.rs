//! `cargo xtask soak judge`: `ragscope judge umbrela` on 10,000 items against the fake provider
//! (crates/judge-fake, the `markers` script), with faults injected on a fraction of the items
//! through `FAKE{...}` directives in their passages (429 with retry-after, 503, 500 twice,
//! connection resets, 2-second replies, a 400, 500 on every attempt, replies that do not parse
//! or are cut at max tokens), a `kill -9` of the CLI once half the replies are cached, and a
//! rerun with the same cache. It checks and prints:
//!
//! - every item is in the rerun's log exactly once, answered with the grade its passage asks
//!   for, or recorded as failed exactly when its fault cannot succeed; the qrels hold exactly the
//!   answered items;
//! - the rerun sends no request for an item it took from the cache, and its log's `attempts`
//!   equal the requests the fake received for that item;
//! - replies bought (a 200 from the fake) per item: at most one, except the replies that were in
//!   flight at the kill (bought, never cached: at most `--concurrency` items);
//! - peak RSS of the CLI on 10,000 items against a clean 1,000-item run (flat: at most 1.5×).
//!
//! Not part of `cargo xtask test` (about 2 minutes on top of CI's budget); see docs/testing.md.

use crate::cmd::{self, root, step, Result};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ITEMS: usize = 10_000;
const SMALL: usize = 1_000;
const K: usize = 10;
const CONCURRENCY: usize = 16;
/// The 10,000-item peak RSS may exceed the 1,000-item one by this factor at most.
const FLAT: f64 = 1.5;

pub fn soak(args: &[String]) -> Result {
    match args.first().map(String::as_str) {
        Some("judge") => judge(),
        _ => Err("usage: cargo xtask soak judge".into()),
    }
}

/// An item's injected behaviour: the directive and how many of its first requests fail.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    None,
    /// `429=1`, `503=1`, `reset=1`, `500=2`: the first n requests fail, a retry succeeds.
    Transient(&'static str, u32),
    /// `slow=1`: the first reply comes after 2 s (within the timeout).
    Slow,
    /// `400`, `500=99`: never answered (no reply bought).
    Never(&'static str),
    /// `seq=x`, `truncated`: a reply (bought) that does not parse.
    Unparseable(&'static str),
}

/// Deterministic per item: about 13% of the items carry a fault.
fn fault(i: usize) -> Fault {
    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54; // 0..1024
    match h {
        0..=40 => Fault::Transient("429=1", 1),
        41..=71 => Fault::Transient("503=1", 1),
        72..=91 => Fault::Transient("reset=1", 1),
        92..=101 => Fault::Transient("500=2", 2),
        102..=106 => Fault::Slow,
        107..=109 => Fault::Never("400"),
        110..=112 => Fault::Never("500=99"),
        113..=116 => Fault::Unparseable("seq=x"),
        117..=120 => Fault::Unparseable("truncated"),
        _ => Fault::None,
    }
}

fn directive(i: usize) -> String {
    let grade = format!("grade={}", i % 4);
    match fault(i) {
        Fault::None => grade,
        Fault::Transient(d, _) => format!("{d},{grade}"),
        Fault::Slow => format!("slow=1,{grade}"),
        Fault::Never(d) | Fault::Unparseable(d) => d.to_string(),
    }
}

fn judge() -> Result {
    step("building the ragscope CLI and the fake provider (release)");
    cmd::run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-cli",
        "-p",
        "ragscope-judge-fake",
        "--bin",
        "ragscope",
        "--bin",
        "fake_provider",
    ]))?;
    let dir = root().join("target/soak-judge");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;

    step(&format!(
        "{SMALL} items, one clean run (the memory baseline)"
    ));
    let small = dir.join("small");
    write_inputs(&small, SMALL)?;
    let rss_small = {
        let _fake = Fake::start()?;
        let t = Instant::now();
        let (code, rss) = timed_run(judge_cmd(&small, _fake.port))?;
        eprintln!(
            "    exit {code:?}, {:.1} s, peak RSS {rss} KiB",
            t.elapsed().as_secs_f64()
        );
        rss
    };

    step(&format!("{ITEMS} items: run, kill -9 at half, rerun"));
    let big = dir.join("big");
    write_inputs(&big, ITEMS)?;
    let fake = Fake::start()?;
    let t = Instant::now();
    let (cached_at_kill, rss_killed) = run_and_kill(judge_cmd(&big, fake.port), &big)?;
    let first = fake.requests()?;
    eprintln!(
        "    killed after {:.1} s: {cached_at_kill} replies cached, {} requests sent, peak RSS \
         {rss_killed} KiB",
        t.elapsed().as_secs_f64(),
        first.len()
    );
    let t = Instant::now();
    let (code, rss_big) = timed_run(judge_cmd(&big, fake.port))?;
    let all = fake.requests()?;
    eprintln!(
        "    rerun: exit {code:?}, {:.1} s, {} requests, peak RSS {rss_big} KiB",
        t.elapsed().as_secs_f64(),
        all.len() - first.len()
    );
    if code != Some(3) {
        return Err(format!(
            "the rerun exited {code:?}; 3 (some items failed) was expected"
        ));
    }
    let report = check(&big, &all, first.len(), cached_at_kill)?;
    let ratio = rss_big.max(rss_killed) as f64 / rss_small as f64;
    let flat = ratio <= FLAT;
    println!("{report}");
    println!(
        "peak RSS: {} KiB at {ITEMS} items (killed run {rss_killed}, rerun {rss_big}), \
         {rss_small} KiB at {SMALL} items: ×{ratio:.2} (at most ×{FLAT}) {}",
        rss_big.max(rss_killed),
        if flat { "ok" } else { "FAILED" }
    );
    if !flat {
        return Err("memory grows with the number of items".into());
    }
    Ok(())
}

/// topics.tsv, passages.jsonl and a run of `n` items (`n / K` queries, top K each).
fn write_inputs(dir: &Path, n: usize) -> Result {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (mut topics, mut passages, mut run) = (String::new(), String::new(), String::new());
    for q in 0..n / K {
        topics.push_str(&format!("q{q}\twhat does soak passage set {q} say?\n"));
        for r in 0..K {
            let i = q * K + r;
            passages.push_str(&format!(
                "{{\"docno\": \"d{i}\", \"text\": \"FAKE{{{}}} soak:d{i}; a passage of the soak test.\"}}\n",
                directive(i)
            ));
            run.push_str(&format!("q{q} Q0 d{i} {} {} soak\n", r + 1, 100 - r));
        }
    }
    for (name, text) in [
        ("topics.tsv", topics),
        ("passages.jsonl", passages),
        ("run", run),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

fn judge_cmd(dir: &Path, port: u16) -> Command {
    let mut c = Command::new(root().join("target/release/ragscope"));
    c.args([
        "judge",
        "umbrela",
        "--provider",
        "openai-compatible",
        "--model",
        "fake",
    ])
    .args(["--base-url", &format!("http://127.0.0.1:{port}/v1")])
    .args([
        "--k",
        &K.to_string(),
        "--concurrency",
        &CONCURRENCY.to_string(),
    ])
    .arg("--quiet");
    for (flag, file) in [
        ("--topics", "topics.tsv"),
        ("--passages", "passages.jsonl"),
        ("--run", "run"),
        ("-o", "out.qrels"),
        ("--log", "log.jsonl"),
        ("--cache", "cache"),
    ] {
        c.arg(flag).arg(dir.join(file));
    }
    c.env("OPENAI_API_KEY", "sk-soak").stdout(Stdio::null());
    c
}

/// Runs `c` to its end under /usr/bin/time: (exit code, peak RSS in KiB).
fn timed_run(c: Command) -> Result<(Option<i32>, u64)> {
    let rss_file = std::env::temp_dir().join(format!("ragscope-soak-rss-{}", std::process::id()));
    let mut t = Command::new("/usr/bin/time");
    t.args(["-f", "%M", "-o"])
        .arg(&rss_file)
        .arg(c.get_program())
        .args(c.get_args())
        .envs(c.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdout(Stdio::null());
    let status = t
        .status()
        .map_err(|e| format!("could not start /usr/bin/time (apt-get install time): {e}"))?;
    let text =
        std::fs::read_to_string(&rss_file).map_err(|e| format!("{}: {e}", rss_file.display()))?;
    let rss = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("/usr/bin/time wrote {text:?}, not a peak RSS"))?;
    Ok((status.code(), rss))
}

/// Starts the CLI, SIGKILLs it once half the items' replies are in the cache: (cache files at
/// the kill, the peak RSS seen until then in KiB).
fn run_and_kill(mut c: Command, dir: &Path) -> Result<(usize, u64)> {
    let mut child = c
        .spawn()
        .map_err(|e| format!("could not start the CLI: {e}"))?;
    let cache = dir.join("cache");
    let mut peak = 0;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        peak = peak.max(vm_hwm(child.id()).unwrap_or(0));
        if let Ok(Some(s)) = child.try_wait() {
            return Err(format!(
                "the CLI ended ({s}) before half the items were cached"
            ));
        }
        if count_files(&cache) >= ITEMS / 2 {
            child.kill().map_err(|e| format!("kill -9: {e}"))?;
            let _ = child.wait();
            return Ok((count_files(&cache), peak));
        }
    }
}

fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reply files under the cache (`ab/abcdef….json`; temporary files excluded).
fn count_files(dir: &Path) -> usize {
    let Ok(subdirs) = std::fs::read_dir(dir) else {
        return 0;
    };
    subdirs
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flat_map(|f| f.flatten())
        .filter(|f| f.path().extension().is_some_and(|e| e == "json"))
        .count()
}

/// The checks of the module doc over the rerun's log and qrels and the fake's request record
/// (`requests[..first]` came from the killed run).
fn check(
    dir: &Path,
    requests: &[(usize, u32)],
    first: usize,
    cached_at_kill: usize,
) -> Result<String> {
    let mut failures = Vec::new();
    let read =
        |name: &str| std::fs::read_to_string(dir.join(name)).map_err(|e| format!("{name}: {e}"));
    // The log: every item once.
    let mut seen = vec![0u32; ITEMS];
    let mut logged = Vec::new();
    for (n, line) in read("log.jsonl")?.lines().enumerate() {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("log.jsonl:{}: {e}", n + 1))?;
        let i = item_of(v["docno"].as_str().unwrap_or(""))
            .ok_or_else(|| format!("log.jsonl:{}: no soak docno", n + 1))?;
        seen[i] += 1;
        logged.push((i, v));
    }
    let missing = seen.iter().filter(|&&n| n == 0).count();
    let twice = seen.iter().filter(|&&n| n > 1).count();
    if missing + twice > 0 {
        failures.push(format!(
            "log: {missing} items missing, {twice} logged more than once"
        ));
    }
    // Answers and failures as the faults dictate.
    let (mut answered, mut failed, mut wrong, mut from_cache) = (0, 0, 0, 0);
    let mut per_item_rerun = vec![0u32; ITEMS];
    for &(i, _) in &requests[first..] {
        per_item_rerun[i] += 1;
    }
    let mut rerequested = 0;
    let mut attempts_off = 0;
    for (i, v) in &logged {
        let ok = v["status"] == "ok";
        let should_fail = matches!(fault(*i), Fault::Never(_) | Fault::Unparseable(_));
        if ok {
            answered += 1;
            if v["result"].as_u64() != Some((*i % 4) as u64) {
                wrong += 1;
            }
        } else {
            failed += 1;
        }
        if ok == should_fail {
            wrong += 1;
        }
        if v["cached"] == true {
            from_cache += 1;
            if per_item_rerun[*i] > 0 {
                rerequested += 1;
            }
        }
        if v["attempts"].as_u64() != Some(u64::from(per_item_rerun[*i])) {
            attempts_off += 1;
        }
    }
    if wrong > 0 {
        failures.push(format!(
            "{wrong} items answered with the wrong grade or status"
        ));
    }
    if rerequested > 0 {
        failures.push(format!(
            "{rerequested} cached items requested again by the rerun"
        ));
    }
    if attempts_off > 0 {
        failures.push(format!(
            "{attempts_off} items whose logged attempts differ from the requests the fake got"
        ));
    }
    // The qrels: exactly the answered items.
    let mut in_qrels = vec![0u32; ITEMS];
    for line in read("out.qrels")?.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = f.get(2).and_then(|d| item_of(d)) {
            in_qrels[i] += 1;
            if f.get(3) != Some(&(i % 4).to_string().as_str()) {
                failures.push(format!("out.qrels: {line:?} has the wrong grade"));
            }
        }
    }
    let qrels_lines: u32 = in_qrels.iter().sum();
    if qrels_lines as usize != answered || in_qrels.iter().any(|&n| n > 1) {
        failures.push(format!(
            "out.qrels has {qrels_lines} lines for {answered} answered items"
        ));
    }
    // Replies bought: the requests the fake answered 200 (nth beyond the failing ones).
    let mut bought = vec![0u32; ITEMS];
    for &(i, nth) in requests {
        let paid = match fault(i) {
            Fault::None | Fault::Slow | Fault::Unparseable(_) => true,
            Fault::Transient(_, n) => nth > n,
            Fault::Never(_) => false,
        };
        bought[i] += u32::from(paid);
    }
    let paid_twice = bought.iter().filter(|&&n| n > 1).count();
    if paid_twice > CONCURRENCY {
        failures.push(format!(
            "{paid_twice} items bought twice: more than the {CONCURRENCY} that can be in flight at the kill"
        ));
    }
    let mut report = format!(
        "soak judge: {ITEMS} items; killed run: {first} requests, {cached_at_kill} replies cached; \
         rerun: {} requests, {from_cache} items from the cache, none re-requested: {}\n\
         answered {answered}, failed {failed} (expected failures: {}), wrong {wrong}, logged once: {}\n\
         replies bought: {} for {ITEMS} items; bought twice: {paid_twice} (in flight at the kill, \
         at most {CONCURRENCY})",
        requests.len() - first,
        if rerequested == 0 { "ok" } else { "FAILED" },
        (0..ITEMS).filter(|&i| matches!(fault(i), Fault::Never(_) | Fault::Unparseable(_))).count(),
        if missing + twice == 0 { "ok" } else { "FAILED" },
        bought.iter().sum::<u32>(),
    );
    if failures.is_empty() {
        Ok(report)
    } else {
        report.push_str("\nFAILED: ");
        report.push_str(&failures.join("; "));
        Err(report)
    }
}

/// `d123` → 123.
fn item_of(docno: &str) -> Option<usize> {
    docno.strip_prefix('d')?.parse().ok().filter(|&i| i < ITEMS)
}

/// The fake_provider binary on a free port, killed when dropped.
struct Fake {
    child: Child,
    port: u16,
}

impl Fake {
    fn start() -> Result<Fake> {
        let bin: PathBuf = root().join("target/release/fake_provider");
        let mut child = Command::new(&bin)
            .args(["--port", "0", "--scenario", "markers"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let port = line.trim().parse().map_err(|_| {
            let _ = child.kill();
            format!("fake_provider printed {line:?}, not a port")
        })?;
        Ok(Fake { child, port })
    }

    /// Every provider request so far, as (item, nth request with that body).
    fn requests(&self) -> Result<Vec<(usize, u32)>> {
        let mut s =
            std::net::TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        write!(
            s,
            "GET /__fake/requests HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"
        )
        .map_err(|e| e.to_string())?;
        let mut r = BufReader::new(s);
        let mut len = None;
        loop {
            let mut h = String::new();
            r.read_line(&mut h).map_err(|e| e.to_string())?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse::<usize>().ok();
                }
            }
        }
        let mut body = vec![0; len.ok_or("/__fake/requests: no content-length")?];
        r.read_exact(&mut body).map_err(|e| e.to_string())?;
        let v: Value =
            serde_json::from_slice(&body).map_err(|e| format!("/__fake/requests: {e}"))?;
        let list = v["requests"]
            .as_array()
            .ok_or("/__fake/requests: no list")?;
        list.iter()
            .map(|q| {
                let body = q["body"].as_str().unwrap_or("");
                let i = body
                    .find("soak:d")
                    .and_then(|at| {
                        let digits: String = body[at + 6..]
                            .chars()
                            .take_while(char::is_ascii_digit)
                            .collect();
                        item_of(&format!("d{digits}"))
                    })
                    .ok_or("a request without a soak item")?;
                Ok((i, q["nth"].as_u64().unwrap_or(0) as u32))
            })
            .collect()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
