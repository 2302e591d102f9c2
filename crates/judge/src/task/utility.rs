//! Passage utilities at cluster scale: p(NO-RESPONSE | q, p) (UDCG, Trappolini et al.; reference
//! code GiovanniTRA/UDCG) read from an OpenAI-compatible server (vLLM, llama.cpp) instead of the
//! local engine of `ragscope-infer`.
//!
//! Two ways, chosen by what the user has (REFERENCE.md §8):
//!
//! * **Exact** ([`Scoring::Echo`]): the caller renders the paper's prompt with the model's chat
//!   template locally (from the GGUF or a template file), this task appends the first token of
//!   NO-RESPONSE (or the whole word when no tokenizer is at hand) and sends it to
//!   `/completions` with `echo: true, logprobs: 1, max_tokens: 1` (lm-eval-harness's
//!   method): the echoed log-probability of the appended token is log p(first token | prompt).
//!   `max_tokens` is 1, not 0, because llama-cpp-python reads 0 as "until the context is full".
//! * **Bound** ([`Scoring::TopLogprobs`]): without a template, the chat endpoint with
//!   `top_logprobs: 20` on one generated token (OpenAI chat; also Gemini's generateContent with
//!   `responseLogprobs` and `logprobs: 20`, whose `logprobsResult` the Gemini provider reads into
//!   the same [`Logprobs`]). When the token is among the 20 its probability is
//!   exact; otherwise p is only known to be at most min(p of the 20th, 1 − Σ p of the 20): the
//!   result says `"exact": false` and the CLI writes it as a bound, never as a number a metric
//!   would use silently (and never as 0).
//!
//! Servers disagree on where an echoed log-probability belongs: llama-cpp-python 0.3.36 pairs token
//! i with the distribution *after* token i unless the prompt starts with the model's BOS token
//! (checked: "The capital of France is Paris" reports " Paris" at −8.77 while generating it gives
//! −0.27; a chat prompt of SmolLM2, whose template starts with its BOS `<|im_start|>`, is aligned).
//! [`probe`] therefore checks each server once, with a prompt rendered by the same template:
//! generate one token, echo it back, and compare the two log-probabilities.

use super::{ItemKey, JobItem, Task};
use crate::provider::{
    Call, ChatRequest, CompletionRequest, GenParams, Logprobs, Message, Reply, Role,
};
use crate::runner::{run_job, Control, Env, ItemRecord, Job, JudgeOptions, Status};
use serde_json::{json, Value};
use std::rc::Rc;

pub const TEMPLATE_VERSION: &str = "utility-ragscope-1";
/// The answer whose first token is scored (the paper's prompt asks for it).
pub const NO_RESPONSE: &str = "NO-RESPONSE";
/// Alternatives asked of the chat endpoint (OpenAI's maximum).
pub const TOP_LOGPROBS: u32 = 20;
/// The largest |echoed − generated| log-probability (nats) the probe accepts. Both come from the
/// same forward pass over the same prefix; a server computes them in batches of different sizes
/// (bf16 on GPUs, quantized activations in llama.cpp), which moves them by far less than this,
/// while a shifted echo reports another distribution's value (−8.77 against −0.27 above).
pub const PROBE_TOLERANCE: f64 = 0.1;
/// The probe's question and passage (any prompt works; this one has an obvious answer).
pub const PROBE_QUESTION: &str = "What is the capital of France?";
pub const PROBE_PASSAGE: &str = "Paris is the capital and the largest city of France.";

/// How the probability is read.
#[derive(Clone, Debug, PartialEq)]
pub enum Scoring {
    /// `/completions` with echo. `appended` is the first token's text when a tokenizer is known
    /// (`single_token`: the server must echo it as exactly one token), else "NO-RESPONSE".
    Echo {
        appended: String,
        single_token: bool,
    },
    /// The chat endpoint's `top_logprobs`. `first_token`: the first token's text when known;
    /// otherwise the longest listed token that starts "NO-RESPONSE" is taken as it.
    TopLogprobs { first_token: Option<String> },
}

/// The utility task: one call per (question, passage).
#[derive(Clone, Debug)]
pub struct Utility {
    pub scoring: Scoring,
}

impl Utility {
    pub fn new(scoring: Scoring) -> Self {
        Utility { scoring }
    }

    /// The call for one passage: `prompt` is the chat-templated prompt (echo) — or, for
    /// [`Scoring::TopLogprobs`], `system` and `user` are sent as chat messages.
    pub fn call(&self, prompt: &Prompt) -> Call {
        match (&self.scoring, prompt) {
            (Scoring::Echo { appended, .. }, Prompt::Rendered(text)) => echo_call(text, appended),
            (_, Prompt::Chat { system, user }) => chat_call(system, user),
            // An echo task given chat messages (a caller's mistake) still asks the chat way.
            (Scoring::TopLogprobs { .. }, Prompt::Rendered(text)) => chat_call("", text),
        }
    }

    /// One job item per (key, prompt).
    pub fn items(&self, prompts: Vec<(ItemKey, Prompt)>) -> Vec<JobItem> {
        prompts
            .into_iter()
            .map(|(key, p)| JobItem {
                call: self.call(&p),
                key,
            })
            .collect()
    }
}

/// What is sent for one passage.
#[derive(Clone, Debug, PartialEq)]
pub enum Prompt {
    /// The whole prompt after the chat template, generation prompt included.
    Rendered(String),
    /// System and user messages (the server applies its template).
    Chat { system: String, user: String },
}

/// `/completions` of `prompt + appended` with the echoed log-probabilities.
pub fn echo_call(prompt: &str, appended: &str) -> Call {
    Call::Completion(CompletionRequest {
        prompt: format!("{prompt}{appended}"),
        max_tokens: 1,
        temperature: Some(0.0),
        logprobs: Some(1),
        echo: true,
        echo_tail: Some(appended.len()),
    })
}

/// One chat token with its top alternatives.
pub fn chat_call(system: &str, user: &str) -> Call {
    Call::Chat(ChatRequest {
        system: (!system.is_empty()).then(|| system.to_string()),
        messages: vec![Message {
            role: Role::User,
            content: user.to_string(),
        }],
        params: GenParams {
            max_tokens: 1,
            temperature: Some(0.0),
            top_p: None,
            frequency_penalty: None,
            presence_penalty: None,
            seed: None,
            stop: Vec::new(),
        },
        top_logprobs: Some(TOP_LOGPROBS),
    })
}

fn logprobs_of(reply: &Reply) -> Result<&Logprobs, String> {
    reply.logprobs.as_ref().ok_or_else(|| {
        "the reply has no logprobs (the server ignored `logprobs`: llama-cpp-python needs \
         --logits_all true)"
            .to_string()
    })
}

/// The echoed tokens `[start, end)` that spell `appended`, just before the completion.
///
/// The completion is the last `completion_tokens` tokens when the server reports usage (else 0
/// or 1 tokens, whichever fits), and must be the end of the reply's text; `appended` must be
/// spelled exactly by the tokens before it. Anything else — the server tokenized the boundary
/// differently, cut the echo short, or paired the tokens with shifted values and dropped the
/// completion (llama-cpp-python without BOS) — is an error, never a guess.
pub fn locate(
    lp: &Logprobs,
    reply_text: &str,
    completion_tokens: Option<u64>,
    appended: &str,
) -> Result<(usize, usize), String> {
    let n = lp.tokens.len();
    let candidates: Vec<usize> = match completion_tokens {
        Some(c) => usize::try_from(c)
            .ok()
            .and_then(|c| n.checked_sub(c))
            .into_iter()
            .collect(),
        None => [Some(n), n.checked_sub(1)].into_iter().flatten().collect(),
    };
    for end in candidates {
        let completion: String = lp.tokens[end..].concat();
        if !reply_text.ends_with(&completion) {
            continue;
        }
        let mut spelled = String::new();
        let mut j = end;
        while j > 0 {
            j -= 1;
            spelled.insert_str(0, &lp.tokens[j]);
            if spelled == appended {
                return Ok((j, end));
            }
            if !appended.ends_with(&spelled) {
                break;
            }
        }
    }
    let tail: Vec<&str> = lp.tokens[n.saturating_sub(4)..]
        .iter()
        .map(String::as_str)
        .collect();
    Err(format!(
        "the echoed tokens do not end with {appended:?} followed by the completion (last \
         tokens {tail:?}, reply text ending {:?}): the server tokenized the prompt differently, \
         cut its echo short, or misaligned it",
        text_tail(reply_text)
    ))
}

fn text_tail(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(20)..].iter().collect()
}

/// The reply's completion-token count when it reports usage.
fn completion_count(reply: &Reply) -> Option<u64> {
    (reply.usage.input_tokens > 0).then_some(reply.usage.output_tokens)
}

/// The echoed log-probability of `appended`'s first token, and that token.
pub fn echoed_logprob(
    reply: &Reply,
    appended: &str,
    single_token: bool,
) -> Result<(f64, String), String> {
    let lp = logprobs_of(reply)?;
    let (start, end) = locate(lp, &reply.text, completion_count(reply), appended)?;
    if single_token && end - start != 1 {
        return Err(format!(
            "the server split {appended:?} into {} tokens ({:?}): its tokenizer is not the \
             GGUF's",
            end - start,
            &lp.tokens[start..end]
        ));
    }
    let value = lp
        .token_logprobs
        .get(start)
        .copied()
        .flatten()
        .ok_or_else(|| {
            format!(
                "no logprob for the echoed token {:?} (position {start})",
                lp.tokens[start]
            )
        })?;
    check_logprob(value)?;
    Ok((value, lp.tokens[start].clone()))
}

fn check_logprob(v: f64) -> Result<(), String> {
    if v.is_finite() && v <= 1e-6 {
        Ok(())
    } else {
        Err(format!(
            "the server returned the log-probability {v}, not one"
        ))
    }
}

/// The chat reply's reading: (probability or its upper bound, exact?, the token matched or
/// the lowest-ranked alternative's text).
pub fn top_logprobs_reading(
    reply: &Reply,
    first_token: Option<&str>,
) -> Result<(f64, bool, Option<String>, Option<f64>), String> {
    let lp = logprobs_of(reply)?;
    let top = lp
        .top_logprobs
        .first()
        .filter(|t| !t.is_empty())
        .ok_or("the reply lists no top_logprobs for its first token")?;
    for (_, v) in top {
        check_logprob(*v)?;
    }
    let matched = top
        .iter()
        .filter(|(t, _)| match first_token {
            Some(f) => t == f,
            None => !t.is_empty() && NO_RESPONSE.starts_with(t.as_str()),
        })
        .max_by_key(|(t, _)| t.len());
    if let Some((t, v)) = matched {
        return Ok((v.exp(), true, Some(t.clone()), Some(*v)));
    }
    // Not listed: at most the rest of the mass, and (when the server listed as many as asked)
    // at most the least likely listed token.
    let listed: f64 = top.iter().map(|(_, v)| v.exp()).sum();
    let mut bound = (1.0 - listed).clamp(0.0, 1.0);
    if top.len() >= TOP_LOGPROBS as usize {
        let lowest = top.iter().map(|(_, v)| *v).fold(f64::INFINITY, f64::min);
        bound = bound.min(lowest.exp());
    }
    Ok((bound, false, None, None))
}

impl Task for Utility {
    fn name(&self) -> &str {
        "utility"
    }

    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }

    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        match &self.scoring {
            Scoring::Echo {
                appended,
                single_token,
            } => {
                let (lp, token) = echoed_logprob(reply, appended, *single_token)?;
                Ok(
                    json!({"no_res_prob": lp.exp(), "logprob": lp, "token": token,
                          "exact": true, "method": "echo"}),
                )
            }
            Scoring::TopLogprobs { first_token } => {
                let (p, exact, token, lp) = top_logprobs_reading(reply, first_token.as_deref())?;
                Ok(json!({"no_res_prob": p, "logprob": lp, "token": token,
                          "exact": exact, "method": "top_logprobs"}))
            }
        }
    }

    /// Samples at temperature 0 read one distribution: the first is the result.
    fn vote(&self, results: &[Value]) -> Option<Value> {
        results.first().cloned()
    }

    /// `key values… no_res_prob` per line (`<=p` for an upper bound).
    fn write_output(&self, records: &[ItemRecord]) -> String {
        records
            .iter()
            .filter_map(|r| {
                let (p, exact) = reading(r)?;
                let mut fields: Vec<String> = r.key.0.iter().map(|(_, v)| v.clone()).collect();
                fields.push(format_probability(p, exact));
                Some(fields.join("\t") + "\n")
            })
            .collect()
    }
}

/// A successful record's probability and whether it is exact (else an upper bound).
pub fn reading(r: &ItemRecord) -> Option<(f64, bool)> {
    if r.status != Status::Ok {
        return None;
    }
    let v = r.result.as_ref()?;
    Some((v.get("no_res_prob")?.as_f64()?, v.get("exact")?.as_bool()?))
}

/// `p`, or `<=p` for an upper bound (which no utilities reader takes for a value).
pub fn format_probability(p: f64, exact: bool) -> String {
    if exact {
        format!("{p}")
    } else {
        format!("<={p}")
    }
}

// ------------------------------------------------------------------------------- the probe

/// The probe's two steps, through the runner (cache, retries): a reply is kept whole.
struct ProbeStep;

impl Task for ProbeStep {
    fn name(&self) -> &str {
        "utility-probe"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        serde_json::to_value(reply).map_err(|e| e.to_string())
    }
    fn vote(&self, results: &[Value]) -> Option<Value> {
        results.first().cloned()
    }
    fn write_output(&self, _records: &[ItemRecord]) -> String {
        String::new()
    }
}

/// What the probe saw.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeReport {
    pub token: String,
    pub generated: f64,
    pub echoed: f64,
}

/// The generating step: one token after `prompt`, with its log-probability and 5 alternatives.
pub fn probe_generate_call(prompt: &str) -> Call {
    Call::Completion(CompletionRequest {
        prompt: prompt.to_string(),
        max_tokens: 1,
        temperature: Some(0.0),
        logprobs: Some(5),
        echo: false,
        echo_tail: None,
    })
}

/// The token to echo and its generated log-probability: the generated token, else (an empty
/// one: the model stopped) the likeliest non-empty alternative.
pub fn probe_pick(reply: &Reply) -> Result<(String, f64), String> {
    let lp = logprobs_of(reply)?;
    if let (Some(t), Some(Some(v))) = (lp.tokens.first(), lp.token_logprobs.first()) {
        if !t.is_empty() && reply.text == *t {
            check_logprob(*v)?;
            return Ok((t.clone(), *v));
        }
    }
    lp.top_logprobs
        .first()
        .and_then(|top| {
            top.iter()
                .filter(|(t, _)| !t.trim().is_empty())
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .cloned()
        })
        .ok_or_else(|| "the probe's generated token has no text and no alternatives".into())
}

/// Compares the echoed log-probability of the probe token with the generated one.
pub fn probe_check(token: &str, generated: f64, echo: &Reply) -> Result<ProbeReport, String> {
    let (echoed, _) = echoed_logprob(echo, token, true)?;
    if (echoed - generated).abs() > PROBE_TOLERANCE {
        return Err(format!(
            "the server's echoed logprobs are misaligned: {token:?} after the probe prompt has \
             logprob {generated} when generated but {echoed} when echoed (more than \
             {PROBE_TOLERANCE} apart), so the echoed values belong to other positions"
        ));
    }
    Ok(ProbeReport {
        token: token.to_string(),
        generated,
        echoed,
    })
}

fn probe_reply(rec: Option<&ItemRecord>) -> Result<Reply, String> {
    let rec = rec.ok_or("the probe got no record")?;
    match (&rec.status, &rec.result) {
        (Status::Ok, Some(v)) => serde_json::from_value(v.clone()).map_err(|e| e.to_string()),
        _ => Err(rec.error.clone().unwrap_or_else(|| "failed".into())),
    }
}

/// Checks once, before a job, that the server's echoed log-probabilities line up with its
/// tokens. `prompt` is the probe prompt rendered with the job's chat template (so that the
/// server sees the same kind of prompt: llama-cpp-python's alignment depends on a leading BOS).
pub async fn probe(env: &Env, opts: &JudgeOptions, prompt: &str) -> Result<ProbeReport, String> {
    probe_with(env, opts, prompt, &Control::new()).await
}

/// [`probe`] under a job's `control` (the app's Pause and Cancel reach the probe's requests).
pub async fn probe_with(
    env: &Env,
    opts: &JudgeOptions,
    prompt: &str,
    control: &Control,
) -> Result<ProbeReport, String> {
    let task: Rc<dyn Task> = Rc::new(ProbeStep);
    let step = |call: Call, step: &str| Job {
        task: task.clone(),
        items: vec![JobItem {
            key: ItemKey(vec![("probe".into(), step.into())]),
            call,
        }],
        samples: 1,
    };
    let generated = run_job(
        &step(probe_generate_call(prompt), "generate"),
        env,
        opts,
        control,
        &mut |_| {},
    )
    .await;
    let reply = probe_reply(generated.records.first())
        .map_err(|e| format!("the alignment probe's first request failed: {e}"))?;
    let (token, lp) =
        probe_pick(&reply).map_err(|e| format!("the alignment probe cannot run: {e}"))?;
    let echoed = run_job(
        &step(echo_call(prompt, &token), "echo"),
        env,
        opts,
        control,
        &mut |_| {},
    )
    .await;
    let echo = probe_reply(echoed.records.first())
        .map_err(|e| format!("the alignment probe's echo request failed: {e}"))?;
    probe_check(&token, lp, &echo)
}
