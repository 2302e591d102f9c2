//! The bookkeeping of `ragscope answer` and of the app's "answer the contexts", shared so both
//! write the same file: reading the input (correlation-study context sets as JSON Lines, or a
//! UDCG reference JSON whose every example becomes one context of all its passages), planning
//! the prompts of each question (its contexts, then with eRAG every passage used, alone),
//! recording each greedy answer with its outcome (abstain / correct / wrong,
//! [`super::answer_match::outcome`]: a context without a relevant passage is never correct) or
//! its eRAG score, and reading back which questions an earlier run completed (resume).
//!
//! Decoding is not here (crates/eval has no model): callers answer [`Job::texts`] with a model and
//! hand the text and the stop reason to [`record`].

use super::answer_match::{outcome, DownstreamMetric};
use super::contexts::Outcome;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// One question of the input, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// `file:line` (JSONL) or `file: example N` (reference JSON), for messages.
    pub at: String,
    pub dataset: String,
    pub qid: String,
    pub question: String,
    pub golds: Vec<String>,
    /// The input line (or the context built from a reference example); the output fills it in.
    pub value: Map<String, Value>,
}

/// One prompt to answer: a context (all its passages) or one passage alone (eRAG).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub context: Option<usize>,
    pub passage: Option<String>,
    pub ids: Vec<String>,
}

impl Job {
    /// The passage texts of the prompt, in context order.
    pub fn texts<'a>(&self, q: &'a Question) -> Vec<&'a str> {
        self.ids
            .iter()
            .map(|id| passage_text(&q.value, id))
            .collect()
    }

    /// The prompt, for messages ("context 2 (passages d1, d3)", "passage \"d1\" alone (eRAG)").
    pub fn describe(&self) -> String {
        match (&self.context, &self.passage) {
            (Some(c), _) => format!("context {c} (passages {})", self.ids.join(", ")),
            (None, Some(p)) => format!("passage {p:?} alone (eRAG)"),
            (None, None) => "prompt".into(),
        }
    }
}

fn passage_text<'a>(q: &'a Map<String, Value>, id: &str) -> &'a str {
    q.get("passages")
        .and_then(|p| p.get(id))
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn is_relevant(q: &Map<String, Value>, id: &str) -> bool {
    q.get("passages")
        .and_then(|p| p.get(id))
        .and_then(|p| p.get("is_relevant"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Writes one answer into `value` (the question's line being built): a context's `answer`,
/// `outcome` and `stop`, or a passage's `erag`, `erag_answer` and `erag_metric`. Returns the
/// context's outcome (None for an eRAG prompt).
pub fn record(
    value: &mut Map<String, Value>,
    q: &Question,
    job: &Job,
    answer: &str,
    stop: Value,
    metric: DownstreamMetric,
) -> Option<Outcome> {
    match (&job.context, &job.passage) {
        (Some(ci), _) => {
            let relevant = job.ids.iter().any(|id| is_relevant(&q.value, id));
            let o = outcome(answer, &q.golds, relevant);
            if let Some(c) = value
                .get_mut("contexts")
                .and_then(|c| c.get_mut(*ci))
                .and_then(Value::as_object_mut)
            {
                c.insert("answer".into(), Value::String(answer.to_string()));
                c.insert(
                    "outcome".into(),
                    serde_json::to_value(o).unwrap_or(Value::Null),
                );
                c.insert("stop".into(), stop);
            }
            Some(o)
        }
        (None, Some(pid)) => {
            let score = metric.score(answer, &q.golds);
            if let Some(p) = value
                .get_mut("passages")
                .and_then(|p| p.get_mut(pid))
                .and_then(Value::as_object_mut)
            {
                p.insert("erag".into(), Value::from(score));
                p.insert("erag_answer".into(), Value::String(answer.to_string()));
                p.insert("erag_metric".into(), Value::String(metric.name().into()));
            }
            None
        }
        (None, None) => None,
    }
}

/// The output line of a question whose every prompt is recorded (with its newline).
pub fn output_line(mut value: Map<String, Value>, model: &str) -> String {
    value.insert("model".into(), Value::String(model.to_string()));
    let mut line = Value::Object(value).to_string();
    line.push('\n');
    line
}

/// The prompts of one question: its contexts, then (with eRAG) each passage used, alone.
pub fn plan(q: &Question, erag: bool) -> Result<Vec<Job>, String> {
    let contexts = q
        .value
        .get("contexts")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: missing list field \"contexts\"", q.at))?;
    let mut jobs = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for (ci, c) in contexts.iter().enumerate() {
        let ids = c
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{}: contexts[{ci}]: missing list \"passages\"", q.at))?;
        let mut list = Vec::with_capacity(ids.len());
        for (pi, id) in ids.iter().enumerate() {
            let id = id.as_str().ok_or_else(|| {
                format!(
                    "{}: contexts[{ci}].passages[{pi}]: expected a passage id string",
                    q.at
                )
            })?;
            let p = q.value.get("passages").and_then(|p| p.get(id));
            match p.and_then(|p| p.get("text")) {
                Some(Value::String(_)) => {}
                _ => {
                    return Err(format!(
                        "{}: contexts[{ci}].passages[{pi}]: passage {id:?} of question {:?} has no \"text\" under \"passages\"",
                        q.at, q.qid
                    ))
                }
            }
            if p.and_then(|p| p.get("is_relevant"))
                .and_then(Value::as_bool)
                .is_none()
            {
                return Err(format!(
                    "{}: passages.{id}: missing boolean \"is_relevant\" (a context without a relevant passage is never correct)",
                    q.at
                ));
            }
            if !used.iter().any(|u| u == id) {
                used.push(id.to_string());
            }
            list.push(id.to_string());
        }
        jobs.push(Job {
            context: Some(ci),
            passage: None,
            ids: list,
        });
    }
    if erag {
        for id in used {
            jobs.push(Job {
                context: None,
                passage: Some(id.clone()),
                ids: vec![id],
            });
        }
    }
    Ok(jobs)
}

fn golds_of(v: &Map<String, Value>, at: &str) -> Result<Vec<String>, String> {
    match v.get("answers").or_else(|| v.get("answer")) {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{at}: answers[{i}] is not a string"))
            })
            .collect(),
        _ => Err(format!(
            "{at}: missing \"answers\" (a list of gold answer strings)"
        )),
    }
}

/// Reads the input: a UDCG reference JSON when the text starts with `[`, else context sets
/// (JSON Lines). `file` names it in messages.
pub fn read_input(file: &str, text: &str) -> Result<Vec<Question>, String> {
    if text.trim_start().starts_with('[') {
        return read_reference_json(file, text);
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{file}:{}", i + 1);
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{at}: column {}: {e}", e.column()))?;
        let Value::Object(map) = v else {
            return Err(format!("{at}: expected a JSON object"));
        };
        let qid = match map.get("qid") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(format!("{at}: missing field \"qid\"")),
        };
        let question = map
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{at}: missing string field \"question\""))?
            .to_string();
        let golds = golds_of(&map, &at)?;
        let dataset = map
            .get("dataset")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !seen.insert((dataset.clone(), qid.clone())) {
            return Err(format!(
                "{at}: duplicate question {qid:?} for dataset {dataset:?}"
            ));
        }
        out.push(Question {
            at,
            dataset,
            qid,
            question,
            golds,
            value: map,
        });
    }
    Ok(out)
}

/// A UDCG reference JSON: each example becomes one context of all its passages, in order.
fn read_reference_json(file: &str, text: &str) -> Result<Vec<Question>, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("{file}: line {}, column {}: {e}", e.line(), e.column()))?;
    let examples = v
        .as_array()
        .ok_or_else(|| format!("{file}: expected a list of examples"))?;
    let mut out = Vec::new();
    for (ei, ex) in examples.iter().enumerate() {
        let at = format!("{file}: example {ei}");
        let qid = ex
            .get("example_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| ei.to_string());
        let question = ex
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{at}: missing string field \"question\""))?
            .to_string();
        let map = ex.as_object().cloned().unwrap_or_default();
        let golds = golds_of(&map, &at)?;
        let passages = ex
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{at}: missing list field \"passages\""))?;
        let mut pool = Map::new();
        let mut ids = Vec::new();
        for (pi, p) in passages.iter().enumerate() {
            let id = p
                .get("doc_id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| pi.to_string());
            let mut entry = Map::new();
            for key in ["text", "is_relevant"] {
                if let Some(x) = p.get(key) {
                    entry.insert(key.into(), x.clone());
                }
            }
            // The judgment `correlate` needs, when the file holds one model's probability.
            if let Some(Value::Object(info)) = p.get("models_info") {
                if info.len() == 1 {
                    if let Some(prob) = info.values().next().and_then(|m| m.get("no_res_prob")) {
                        entry.insert("no_res_prob".into(), prob.clone());
                    }
                }
            }
            ids.push(Value::String(id.clone()));
            pool.insert(id, Value::Object(entry));
        }
        let mut value = Map::new();
        value.insert("qid".into(), Value::String(qid.clone()));
        value.insert("question".into(), Value::String(question.clone()));
        value.insert(
            "answers".into(),
            Value::Array(golds.iter().cloned().map(Value::String).collect()),
        );
        value.insert("passages".into(), Value::Object(pool));
        let mut context = Map::new();
        context.insert("passages".into(), Value::Array(ids));
        value.insert(
            "contexts".into(),
            Value::Array(vec![Value::Object(context)]),
        );
        out.push(Question {
            at,
            dataset: String::new(),
            qid,
            question,
            golds,
            value,
        });
    }
    Ok(out)
}

/// What an earlier run wrote: the byte length of its complete lines (a partial last line, cut
/// by an interrupt, is to be dropped) and the (dataset, qid) of every complete line.
pub fn completed(file: &str, text: &str) -> Result<(usize, HashSet<(String, String)>), String> {
    let mut done = HashSet::new();
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    for (i, line) in text[..complete].lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            format!(
                "{file}:{}: not a line this command wrote ({e}); move the file away to start over",
                i + 1
            )
        })?;
        let qid = match v.get("qid") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        let dataset = v
            .get("dataset")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        done.insert((dataset, qid));
    }
    Ok((complete, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"qid": "q1", "question": "Capital of France?", "answers": ["Paris"], "passages": {"d1": {"is_relevant": true, "text": "Paris is the capital."}, "d2": {"is_relevant": false, "text": "Berlin."}}, "contexts": [{"passages": ["d1", "d2"]}, {"passages": ["d2"]}]}"#;

    #[test]
    fn contexts_then_each_passage_alone_and_the_papers_rule() {
        let qs = read_input("c.jsonl", LINE).unwrap();
        let jobs = plan(&qs[0], true).unwrap();
        let got: Vec<String> = jobs.iter().map(Job::describe).collect();
        assert_eq!(
            got,
            [
                "context 0 (passages d1, d2)",
                "context 1 (passages d2)",
                "passage \"d1\" alone (eRAG)",
                "passage \"d2\" alone (eRAG)"
            ]
        );
        assert_eq!(jobs[0].texts(&qs[0]), ["Paris is the capital.", "Berlin."]);
        let mut v = qs[0].value.clone();
        let m = DownstreamMetric::Substring;
        let stop = Value::String("stop".into());
        assert_eq!(
            record(&mut v, &qs[0], &jobs[0], "The Paris", stop.clone(), m),
            Some(Outcome::Correct)
        );
        // No relevant passage in the context: never correct, even with the gold answer.
        assert_eq!(
            record(&mut v, &qs[0], &jobs[1], "Paris", stop.clone(), m),
            Some(Outcome::Wrong)
        );
        assert_eq!(record(&mut v, &qs[0], &jobs[2], "Paris", stop, m), None);
        let line = output_line(v, "m");
        assert!(line.ends_with("\"model\":\"m\"}\n"), "{line}");
        assert!(line.contains(r#""erag":1.0,"erag_answer":"Paris","erag_metric":"substring""#));
    }

    #[test]
    fn resume_reads_complete_lines_only_and_names_a_foreign_line() {
        let (n, done) = completed("a.jsonl", "{\"qid\": 3}\n{\"qid\": \"q").unwrap();
        assert_eq!(n, 11);
        assert!(done.contains(&(String::new(), "3".to_string())));
        let e = completed("a.jsonl", "x\n").unwrap_err();
        assert!(
            e.starts_with("a.jsonl:1: not a line this command wrote"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_place() {
        let e = read_input("c.jsonl", "{\"qid\": \"q\"}\n").unwrap_err();
        assert_eq!(e, "c.jsonl:1: missing string field \"question\"");
        let e = read_input(
            "u.json",
            "[{\"question\": \"x\", \"answers\": [], \"passages\": 3}]",
        )
        .unwrap_err();
        assert_eq!(e, "u.json: example 0: missing list field \"passages\"");
        let qs = read_input(
            "c.jsonl",
            r#"{"qid": "q", "question": "x", "answers": "a", "passages": {"d": {"text": "t"}}, "contexts": [{"passages": ["d"]}]}"#,
        )
        .unwrap();
        assert!(plan(&qs[0], false)
            .unwrap_err()
            .contains("passages.d: missing boolean \"is_relevant\""));
    }
}
