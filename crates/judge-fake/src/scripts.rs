//! Scripts: how the fake answers each request (the `FAKE{...}` directives, the part-2 tasks'
//! replies, and the named scenarios).

use super::*;
use serde_json::{json, Value};

/// The `FAKE{...}` directives in a request body, as (name, value) pairs.
pub fn directives(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("FAKE{") {
        let after = &rest[i + 5..];
        let Some(j) = after.find('}') else { break };
        for d in after[..j].split(',') {
            let d = d.trim();
            if d.is_empty() {
                continue;
            }
            let (k, v) = d.split_once('=').unwrap_or((d, ""));
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
        rest = &after[j..];
    }
    out
}

fn grade_text(g: &str) -> String {
    format!("##final score: {g}")
}

/// The directive-driven script (see the module documentation).
pub fn markers() -> Script {
    Arc::new(|r: &RecordedRequest| {
        let ds = directives(&r.body);
        let get = |k: &str| ds.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let count = |k: &str| get(k).map(|v| v.parse::<u32>().unwrap_or(1));
        let text = |t: String| Action::Text {
            text: t,
            finish: Finish::Stop,
        };
        let mut action = if let Some(seq) = get("seq") {
            let entries: Vec<&str> = seq.split('|').collect();
            let e = entries
                .get((r.nth as usize).saturating_sub(1))
                .or(entries.last())
                .copied()
                .unwrap_or("x");
            if e.len() == 1 && e.chars().all(|c| c.is_ascii_digit()) {
                text(grade_text(e))
            } else {
                text("I cannot tell.".into())
            }
        } else if let Some(g) = get("warm") {
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            let t = v
                .get("temperature")
                .or_else(|| v.get("generationConfig").and_then(|c| c.get("temperature")))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            if t > 0.0 {
                text(grade_text(g))
            } else {
                text("I cannot tell.".into())
            }
        } else if let Some(g) = get("fenced") {
            text(format!("```json\n{{\"final score\": {g}}}\n```"))
        } else if let Some(g) = get("trap") {
            text(format!("On a scale from 0 to 3, ##final score: {g}"))
        } else if get("truncated").is_some() {
            Action::Text {
                text: "The passage mentions the topic of the query, and to weigh its".into(),
                finish: Finish::Length,
            }
        } else if get("safety").is_some() {
            Action::Blocked
        } else if get("malformed").is_some() {
            Action::Raw {
                status: 200,
                headers: Vec::new(),
                body: "{\"choices\": [{\"message\": {\"content\": \"##final sc".into(),
            }
        } else if let Some(a) = utility_reply(r, &ds, false) {
            // Asked for log-probabilities (the utility task, also on a lost-in-the-middle
            // passage that carries `answer=`): the fake model's, not the reader's answer;
            // `lpfail` fails these requests only (400), not the answers.
            if get("lpfail").is_some() {
                return Action::Error {
                    status: 400,
                    code: "invalid_request_error".into(),
                    headers: Vec::new(),
                };
            }
            a
        } else if get("answer").is_some() {
            let first = r
                .body
                .find("FAKE{")
                .map(|i| &r.body[i..r.body[i..].find('}').map_or(r.body.len(), |j| i + j + 1)])
                .unwrap_or("");
            let answer = directives(first)
                .into_iter()
                .find(|(k, _)| k == "answer")
                .map_or_else(|| "NO-RESPONSE".to_string(), |(_, v)| v);
            text(answer)
        } else if let Some(a) = task_reply(r, &ds) {
            a
        } else {
            text(grade_text(get("grade").unwrap_or("1")))
        };
        let err = |status: u16, code: &str, headers: Vec<(String, String)>| Action::Error {
            status,
            code: code.into(),
            headers,
        };
        let code_for = |status: u16| match r.format {
            Some(WireFormat::Anthropic) => match status {
                429 => "rate_limit_error",
                529 => "overloaded_error",
                400 => "invalid_request_error",
                401 => "authentication_error",
                404 => "not_found_error",
                _ => "api_error",
            },
            Some(WireFormat::Gemini) => match status {
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                404 => "NOT_FOUND",
                _ => "INTERNAL",
            },
            _ => match status {
                429 => "rate_limit_exceeded",
                400 => "invalid_request_error",
                401 => "invalid_api_key",
                404 => "model_not_found",
                _ => "server_error",
            },
        };
        for status in [400u16, 401, 404] {
            if get(&status.to_string()).is_some() {
                return err(status, code_for(status), Vec::new());
            }
        }
        if get("quota").is_some() {
            return err(429, "insufficient_quota", Vec::new());
        }
        if count("429").is_some_and(|n| r.nth <= n) {
            let mut h = vec![("retry-after".to_string(), "1".to_string())];
            if get("noheader").is_some() {
                h.clear();
            } else if get("ms").is_some() {
                h.push(("retry-after-ms".into(), "1500".into()));
            }
            return err(429, code_for(429), h);
        }
        for status in [529u16, 503, 500] {
            if count(&status.to_string()).is_some_and(|n| r.nth <= n) {
                return err(status, code_for(status), Vec::new());
            }
        }
        if count("reset").is_some_and(|n| r.nth <= n) {
            return Action::Drop;
        }
        if count("slow").is_some_and(|n| r.nth <= n) {
            action = Action::Delay(Duration::from_secs(2), Box::new(action));
        }
        if let Some(n) = count("hold") {
            action = Action::Hold(n as usize, Box::new(action));
        }
        action
    })
}

fn request_temperature(body: &str) -> f64 {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    v.get("temperature")
        .or_else(|| v.get("generationConfig").and_then(|c| c.get("temperature")))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// The reply of a part-2 task, recognised by its prompt's phrase (see the module documentation).
fn task_reply(r: &RecordedRequest, ds: &[(String, String)]) -> Option<Action> {
    use ragscope_judge::task::{answer_equivalence, citations, nuggets, pairwise, pointwise};
    let has = |k: &str| ds.iter().any(|(n, _)| n == k);
    let get = |k: &str| ds.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let text = |t: String| Action::Text {
        text: t,
        finish: Finish::Stop,
    };
    let body = r.body.as_str();
    let is = |mark: &str| body.contains(mark) || body.contains(&mark.replace('\'', "\\u0027"));
    let task = if is(nuggets::CREATE_MARK) {
        "create"
    } else if is(nuggets::SCORE_MARK) {
        "score"
    } else if is(nuggets::ASSIGN_MARK) {
        "assign"
    } else if is(pairwise::MARK) {
        "pairwise"
    } else if is(pointwise::MARK) {
        "pointwise"
    } else if is(citations::MARK) {
        "citations"
    } else if is(answer_equivalence::MARK) {
        "equivalence"
    } else {
        return None;
    };
    if has("garbage") {
        return Some(text("I am not sure what you are asking.".into()));
    }
    let fence = |t: String, lang: &str| {
        if has("fence") {
            format!("```{lang}\n{t}\n```")
        } else {
            t
        }
    };
    let list = |items: &[String]| {
        if has("json") {
            serde_json::to_string(items).unwrap_or_default()
        } else {
            let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
            format!("[{}]", quoted.join(", "))
        }
    };
    Some(match task {
        "create" => {
            let items: Vec<String> = get("nuggets")
                .unwrap_or("fake nugget")
                .split('|')
                .map(String::from)
                .collect();
            text(fence(list(&items), "python"))
        }
        "score" | "assign" => {
            let n = body
                .find("Return exactly ")
                .map(|i| &body[i + 15..])
                .and_then(|t| t.split(' ').next())
                .and_then(|d| d.parse::<usize>().ok())
                .unwrap_or(1);
            let default = if task == "score" { "vital" } else { "support" };
            let pool: Vec<&str> = get("labels").unwrap_or(default).split('|').collect();
            let mut items: Vec<String> = (0..n).map(|i| pool[i % pool.len()].to_string()).collect();
            if has("shortalways") || (has("short") && request_temperature(body) == 0.0) {
                items.pop();
            }
            text(fence(list(&items), "python"))
        }
        "pairwise" => {
            let b_start = body.find("[The Start of Assistant B").unwrap_or(body.len());
            let winner = if has("first") {
                "A"
            } else if let Some(i) = body.match_indices("FAKE{").map(|(i, _)| i).find(|&i| {
                directives(&body[i..body[i..].find('}').map_or(body.len(), |j| i + j + 1)])
                    .iter()
                    .any(|(k, _)| k == "win")
            }) {
                if i < b_start {
                    "A"
                } else {
                    "B"
                }
            } else {
                "C"
            };
            if has("bracket") {
                text(format!(
                    "Both assistants address the question.\n\nFinal verdict: [[{winner}]]"
                ))
            } else {
                let j = json!({"answer_a_analysis": "fake analysis of A",
                               "answer_b_analysis": "fake analysis of B",
                               "comparison_reasoning": "fake comparison",
                               "winner": winner});
                text(fence(j.to_string(), "json"))
            }
        }
        "equivalence" => {
            let verdict = get("verdict").unwrap_or("correct").to_ascii_uppercase();
            if has("verdictline") {
                text(format!(
                    "The candidate names the same thing.\nVerdict: {verdict}"
                ))
            } else {
                text(fence(verdict, ""))
            }
        }
        "pointwise" => {
            let score: i64 = get("score").and_then(|s| s.parse().ok()).unwrap_or(1);
            let j = json!({"reasoning": "fake reasoning", "score": score});
            text(fence(j.to_string(), "json"))
        }
        _ => {
            let level = get("support").unwrap_or("full");
            if has("word") {
                text(level.to_string())
            } else {
                text(fence(json!({ "support": level }).to_string(), "json"))
            }
        }
    })
}

/// Every request answered 503 (a provider that is down).
pub fn down() -> Script {
    Arc::new(|_r: &RecordedRequest| Action::Error {
        status: 503,
        code: "unavailable".into(),
        headers: Vec::new(),
    })
}

/// [`markers`], but `/completions` echoes are misaligned the way llama-cpp-python's are for a
/// prompt without BOS: token i carries the value of the distribution after it.
pub fn shifted() -> Script {
    let base = markers();
    Arc::new(move |r: &RecordedRequest| {
        utility_reply(r, &directives(&r.body), true).unwrap_or_else(|| base(r))
    })
}

/// A script by name: `markers` (default), `down` or `shifted`.
pub fn scenario(name: &str) -> Option<Script> {
    match name {
        "markers" => Some(markers()),
        "down" => Some(down()),
        "shifted" => Some(shifted()),
        _ => None,
    }
}

// ------------------------------------------------------------------ utilities (logprobs)
//
// `/completions` with `logprobs` and chat requests with `top_logprobs` get log-probabilities
// from a fake model over a fake tokenizer, so tests can compute every served value:
//
// * tokens ([`fake_tokens`]): a newline or tab alone, a space alone before whitespace, else an
//   optional space and a run of other characters;
// * the log-probability of token t at position i is [`fake_logprob`]`(i, t)` =
//   −(0.5 + 0.1·chars(t) + 3·(i mod 2)); directive `lp=X` makes the last prompt token's X;
// * generation always produces "Sure" (position n = the prompt's token count), alternatives
//   " Yes" one nat below;
// * echo: the prompt's tokens then "Sure", the first logprob null; `cut` drops the last 3;
//   the `shifted` script gives token i the value at position i + 1 (the completion included);
// * chat `top_logprobs: N`: "Sure" at −0.1, then "alt1".."alt{N-1}" at −(4 + 0.25·k); with
//   `lp=X` the last alternative is "NO" at X;
// * Gemini `generationConfig.responseLogprobs: true, logprobs: N`: the same N alternatives as
//   `logprobsResult.topCandidates[0].candidates` (`logProbability`), "Sure" at −0.1 as its
//   `chosenCandidates[0]`.
