//! `ragscope answer --judge PROVIDER/MODEL`: after the answers are decoded, each context's answer
//! is graded against the gold answers by an LLM judge through the judge layer (the
//! answer-equivalence task, crates/judge/src/task/answer_equivalence.rs), as the UDCG paper does
//! with Gemini 2.0 Flash (its Figure 5), instead of the normalised substring match.
//!
//! - An answer that abstains (NO-RESPONSE) stays `abstain`; a context without a relevant passage
//!   stays `wrong` whatever its answer (the paper's rule): neither is sent to the judge.
//! - A judged context's `outcome` becomes `correct` or `wrong` by the verdict, and `judge` holds
//!   `{"model", "status": "ok", "correct"}`; a failed judgment (HTTP errors after retries, a reply
//!   without a verdict, the budget) gives `outcome: "failed"` and `judge: {"model", "status":
//!   "failed", "error"}` — never counted correct or wrong; `ragscope correlate` leaves such
//!   contexts out.
//! - Every request goes through the judge cache, so a rerun sends nothing already answered; the
//!   answers file is rewritten in place once every item is done (an interrupted run leaves it as
//!   it was), and the judge's log goes to `--judge-log` (default: ANSWERS.judge.jsonl).

use super::judge::{drive_rounds, usage, CommonArgs};
use super::utility::Failure;
use ragscope_eval::rag::answer_match::{abstains, first_line};
use ragscope_judge::task::answer_equivalence::AnswerEquivalence;
use ragscope_judge::{ItemRecord, JobItem, ProviderKind, Status};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

/// The judge's options, as `ragscope judge umbrela` has them, with a `judge-` prefix (`--model`,
/// `-o` and `--quiet` already belong to `answer`).
#[derive(clap::Args, Debug)]
pub struct JudgeOptions {
    /// Judge API base URL (required for openai-compatible, e.g. http://127.0.0.1:8000/v1).
    #[arg(long)]
    pub judge_base_url: Option<String>,
    /// Read the judge's API key from this environment variable instead of the provider's
    /// default (ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENAI_API_KEY).
    #[arg(long)]
    pub judge_key_env: Option<String>,
    /// The judge's JSONL log, one line per graded context (default: ANSWERS.judge.jsonl).
    #[arg(long)]
    pub judge_log: Option<PathBuf>,
    /// Judge requests in flight at most.
    #[arg(long, default_value_t = 4)]
    pub judge_concurrency: usize,
    /// Judge reply cache directory (default: the user cache dir's ragscope/judge).
    #[arg(long)]
    pub judge_cache: Option<PathBuf>,
    /// Keep no judge cache (every rerun pays again).
    #[arg(long, conflicts_with = "judge_cache")]
    pub judge_no_cache: bool,
    /// Judge requests per context, combined by majority (a tie is a failure).
    #[arg(long, default_value_t = 1)]
    pub judge_samples: u32,
    /// Stop judging before the cost in USD would exceed this (needs the model's price).
    #[arg(long)]
    pub judge_max_cost: Option<f64>,
    /// Stop judging before the input+output tokens would exceed this.
    #[arg(long)]
    pub judge_max_tokens: Option<u64>,
    /// Price table JSON replacing the shipped one.
    #[arg(long)]
    pub judge_prices: Option<PathBuf>,
    /// Judge requests per minute at most.
    #[arg(long)]
    pub judge_rpm: Option<u32>,
    /// Judge tokens per minute at most (estimated).
    #[arg(long)]
    pub judge_tpm: Option<u64>,
    /// Seconds per judge request before it is abandoned (and retried).
    #[arg(long, default_value_t = 60.0)]
    pub judge_timeout: f64,
    /// Attempts per judge request, the first included.
    #[arg(long, default_value_t = 5)]
    pub judge_max_attempts: u32,
}

/// `PROVIDER/MODEL` (the model may itself hold slashes: `openai-compatible/org/model`).
fn split_spec(spec: &str) -> Result<(ProviderKind, String), Failure> {
    let (p, m) = spec
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .ok_or_else(|| {
            usage(format!(
                "--judge {spec:?}: expected PROVIDER/MODEL, e.g. gemini/gemini-2.0-flash"
            ))
        })?;
    let kind: ProviderKind = p
        .parse()
        .map_err(|e| usage(format!("--judge {spec:?}: {e}")))?;
    Ok((kind, m.to_string()))
}

/// Usage errors found before any answer is decoded (a long decode must not end in "no key").
pub(super) fn check(spec: &str, o: &JudgeOptions) -> Result<(), Failure> {
    let (kind, _) = split_spec(spec)?;
    let var = match (&o.judge_key_env, kind) {
        (Some(v), _) => Some(v.as_str()),
        (None, ProviderKind::OpenAiCompatible) => None,
        (None, k) => Some(k.key_env()),
    };
    let has_key = var
        .and_then(|v| std::env::var(v).ok())
        .is_some_and(|k| !k.trim().is_empty());
    if kind.key_required() && !has_key {
        return Err(usage(format!(
            "--judge {spec}: provider {kind} needs an API key in {}",
            var.unwrap_or("an environment variable (--judge-key-env)")
        )));
    }
    if kind == ProviderKind::OpenAiCompatible && o.judge_base_url.is_none() {
        return Err(usage(format!(
            "--judge {spec}: openai-compatible needs --judge-base-url"
        )));
    }
    Ok(())
}

/// Where a graded item goes back: line and context index.
type Slot = (usize, usize);

/// Grades every answered context of `answers` (the output of this run) and rewrites the file.
pub fn grade(answers: &Path, spec: &str, o: &JudgeOptions, quiet: bool) -> ExitCode {
    match grade_inner(answers, spec, o, quiet) {
        Ok(code) => code,
        Err(e) => Failure::exit("answer", Err(e)),
    }
}

fn grade_inner(
    answers: &Path,
    spec: &str,
    o: &JudgeOptions,
    quiet: bool,
) -> Result<ExitCode, Failure> {
    let (kind, model) = split_spec(spec)?;
    let text = std::fs::read_to_string(answers)
        .map_err(|e| Failure::Error(format!("{}: {e}", answers.display())))?;
    let mut lines: Vec<Map<String, Value>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(Value::Object(m)) => lines.push(m),
            _ => {
                return Err(Failure::Error(format!(
                    "{}:{}: not a line `ragscope answer` wrote",
                    answers.display(),
                    i + 1
                )))
            }
        }
    }
    let task = AnswerEquivalence::new();
    let mut items: Vec<JobItem> = Vec::new();
    let mut slots: HashMap<Vec<(String, String)>, Slot> = HashMap::new();
    for (li, line) in lines.iter_mut().enumerate() {
        let qid = match line.get("qid") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        let dataset = str_field(line, "dataset").unwrap_or_default();
        let question = str_field(line, "question").unwrap_or_default();
        let golds: Vec<String> = match line.get("answers").or_else(|| line.get("answer")) {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|g| g.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let relevant: Vec<String> = line
            .get("passages")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .filter(|(_, v)| v.get("is_relevant").and_then(Value::as_bool) == Some(true))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        let n = line
            .get("contexts")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for ci in 0..n {
            let Some(c) = line
                .get_mut("contexts")
                .and_then(|c| c.get_mut(ci))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let Some(answer) = c.get("answer").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            let has_relevant = c
                .get("passages")
                .and_then(Value::as_array)
                .is_some_and(|ids| {
                    ids.iter().any(|id| {
                        id.as_str()
                            .is_some_and(|id| relevant.iter().any(|r| r == id))
                    })
                });
            if abstains(&answer) {
                c.insert("outcome".into(), json!("abstain"));
                c.remove("judge");
            } else if !has_relevant {
                c.insert("outcome".into(), json!("wrong"));
                c.insert(
                    "judge".into(),
                    json!({"model": spec, "status": "skipped",
                           "reason": "no relevant passage in the context: never correct"}),
                );
            } else {
                let item = task.item(&dataset, &qid, ci, &question, &golds, first_line(&answer));
                slots.insert(item.key.0.clone(), (li, ci));
                items.push(item);
            }
        }
    }
    let log = o.judge_log.clone().unwrap_or_else(|| {
        let mut p = answers.as_os_str().to_owned();
        p.push(".judge.jsonl");
        PathBuf::from(p)
    });
    let common = CommonArgs {
        provider: kind.to_string(),
        model,
        base_url: o.judge_base_url.clone(),
        key_env: o.judge_key_env.clone(),
        output: Some(answers.to_path_buf()),
        log: Some(log),
        concurrency: o.judge_concurrency,
        cache: o.judge_cache.clone(),
        no_cache: o.judge_no_cache,
        samples: o.judge_samples,
        max_cost: o.judge_max_cost,
        max_tokens: o.judge_max_tokens,
        prices: o.judge_prices.clone(),
        rpm: o.judge_rpm,
        tpm: o.judge_tpm,
        timeout: o.judge_timeout,
        max_attempts: o.judge_max_attempts,
        dry_run: false,
        quiet,
        parse_retries: 0,
        batch: false,
        poll_interval: None,
        no_wait: false,
    };
    let finish = |records: &[ItemRecord]| {
        let mut out = lines.clone();
        let mut judged = [0usize; 3];
        for r in records {
            let Some(&(li, ci)) = slots.get(&r.key.0) else {
                continue;
            };
            let Some(c) = out[li]
                .get_mut("contexts")
                .and_then(|c| c.get_mut(ci))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            match (r.status, r.result.as_ref().and_then(Value::as_bool)) {
                (Status::Ok, Some(correct)) => {
                    judged[usize::from(correct)] += 1;
                    c.insert(
                        "outcome".into(),
                        json!(if correct { "correct" } else { "wrong" }),
                    );
                    c.insert(
                        "judge".into(),
                        json!({"model": spec, "status": "ok", "correct": correct}),
                    );
                }
                _ => {
                    judged[2] += 1;
                    c.insert("outcome".into(), json!("failed"));
                    c.insert(
                        "judge".into(),
                        json!({"model": spec, "status": "failed",
                               "error": r.error.clone().unwrap_or_else(|| "no verdict".into())}),
                    );
                }
            }
        }
        let text: String = out
            .iter()
            .map(|l| Value::Object(l.clone()).to_string() + "\n")
            .collect();
        let note = format!(
            "answers judged by {spec}: {} correct, {} wrong, {} failed (outcome \"failed\": left \
             out of `ragscope correlate`)",
            judged[1], judged[0], judged[2]
        );
        (text, Some(note))
    };
    drive_rounds(
        &common,
        Rc::new(task.clone()),
        items,
        &mut |_| Vec::new(),
        &finish,
    )
}

fn str_field(m: &Map<String, Value>, k: &str) -> Option<String> {
    m.get(k).and_then(Value::as_str).map(str::to_string)
}
