//! `ragscope judge utility`: p(NO-RESPONSE | question, passage) from an OpenAI-compatible server
//! (vLLM, llama.cpp) — the inputs and outputs of `ragscope utility`, the options, log and exit
//! codes of `judge umbrela`.
//!
//! With `--gguf` (or `--template`) the paper's prompt is rendered here with the model's chat
//! template, the first token of NO-RESPONSE is appended and its echoed logprob read from
//! `/completions` — exact, after a probe that the server's echo is aligned (the task and the
//! probe live in `ragscope_judge::task::utility`). Without either, the chat endpoint's top 20
//! logprobs give the value when the token is listed and an upper bound otherwise, written as
//! `<=p` (TSV) or `no_res_prob_upper_bound` (JSON), never as a plain number.

use super::judge::{drive_rounds_in, setup, usage, CommonArgs};
use super::utility::{read_passages, read_run_top_k, read_topics, Failure};
use futures::executor::block_on;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::utility::{PromptTemplate, NO_RESPONSE};
use ragscope_infer::{ChatMessage, ChatTemplate, Tokenizer};
use ragscope_judge::task::utility::{
    format_probability, probe, reading, Prompt, Scoring, Utility, PROBE_PASSAGE, PROBE_QUESTION,
};
use ragscope_judge::{ItemKey, ItemRecord};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

#[derive(clap::Args, Debug)]
#[command(
    long_about = "p(NO-RESPONSE | question, passage) from an OpenAI-compatible server, with the \
inputs and outputs of `ragscope utility` and the options, log and exit codes of `judge umbrela`.\n\n\
Exact (--gguf M.gguf, or --template T.jinja): the paper's prompt is rendered here with the model's \
chat template, the first token of NO-RESPONSE appended, and its logprob read from /completions \
with echo. Each server is probed first (a token generated, then echoed: both logprobs must agree) \
and refused when its echo is misaligned.\n\n\
Without either: the chat endpoint's top 20 logprobs. A token not among them gets only an upper \
bound, written `<=p` in the TSV and `no_res_prob_upper_bound` in the JSON.\n\n\
JSON mode:  ragscope judge utility --provider openai-compatible --base-url URL --model M --gguf M.gguf INPUT.json -o OUT.json --log LOG.jsonl\n\
Run mode:   ... --topics T.tsv --passages P.jsonl --qrels Q --run R --k 5 -o U.tsv --log LOG.jsonl"
)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// UDCG reference JSON to fill (JSON mode).
    pub input: Option<PathBuf>,
    /// The served model's GGUF: its chat template and tokenizer (exact scoring).
    #[arg(long)]
    pub gguf: Option<PathBuf>,
    /// Jinja chat template (replaces the GGUF's; without --gguf, the whole word NO-RESPONSE is
    /// appended and its first echoed token scored).
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// Key under models_info (default: the GGUF's general.name, else --model).
    #[arg(long)]
    pub model_name: Option<String>,
    /// Topics file: `qid<TAB>question` per line (run mode).
    #[arg(long)]
    pub topics: Option<PathBuf>,
    /// Passages JSONL: `{"docno": ..., "text": ...}` per line (run mode).
    #[arg(long)]
    pub passages: Option<PathBuf>,
    /// TREC qrels `qid iter docno rel` (run mode); rel > 0 counts as relevant.
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// TREC run `qid Q0 docno rank score tag` (run mode); ranked like trec_eval.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Passages per query taken from the run (run mode).
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    /// JSON file {"system": ..., "user": "...{text}...{question}..."} replacing the paper's prompt.
    #[arg(long)]
    pub prompt_template: Option<PathBuf>,
}

fn err(m: impl Into<String>) -> Failure {
    Failure::Error(m.into())
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| err(format!("{}: {e}", path.display())))
}

/// Renders the paper's prompt the way the local engine does (`ragscope utility`).
struct Renderer {
    prompt: PromptTemplate,
    chat: Option<ChatTemplate>,
    tokenizer: Option<Tokenizer>,
    /// The first token of NO-RESPONSE (id, text), from the tokenizer.
    first: Option<(u32, String)>,
}

impl Renderer {
    fn messages(&self, question: &str, text: &str) -> [ChatMessage; 2] {
        [
            ChatMessage::new("system", &self.prompt.system),
            ChatMessage::new("user", &self.prompt.user_message(question, text)),
        ]
    }

    /// What is sent for one passage. With a tokenizer, the rendered prompt is the exact token
    /// sequence the local engine scores: checked by encoding it with the token appended; a
    /// leading BOS is left to the server when the model adds one itself (else it would be
    /// doubled).
    fn prompt(&self, question: &str, text: &str, item: &str) -> Result<Prompt, Failure> {
        let Some(chat) = &self.chat else {
            return Ok(Prompt::Chat {
                system: self.prompt.system.clone(),
                user: self.prompt.user_message(question, text),
            });
        };
        let (bos, eos) = match &self.tokenizer {
            Some(t) => (t.bos_text(), t.eos_text()),
            None => ("", ""),
        };
        let rendered = chat
            .render(&self.messages(question, text), true, bos, eos)
            .map_err(|e| err(format!("{item}: {e}")))?;
        let (Some(tok), Some((id, first))) = (&self.tokenizer, &self.first) else {
            return Ok(Prompt::Rendered(rendered));
        };
        let mut ids = tok.encode(&rendered, false, true);
        ids.push(*id);
        if tok.encode(&format!("{rendered}{first}"), false, true) != ids {
            return Err(err(format!(
                "{item}: the prompt followed by {first:?} does not tokenize as the prompt's \
                 tokens then that token; the echo cannot score it"
            )));
        }
        let sent = match rendered.strip_prefix(bos) {
            Some(rest) if tok.add_bos() && !bos.is_empty() => rest.to_string(),
            _ => rendered,
        };
        Ok(Prompt::Rendered(sent))
    }
}

pub(super) fn run(a: Args) -> Result<ExitCode, Failure> {
    let run_mode = [&a.topics, &a.passages, &a.qrels, &a.run]
        .iter()
        .any(|o| o.is_some());
    if run_mode == a.input.is_some() {
        return Err(usage(
            "give either INPUT.json, or all of --topics --passages --qrels --run (see --help)",
        ));
    }
    if a.k == 0 {
        return Err(usage("--k must be at least 1"));
    }
    let prompt = match &a.prompt_template {
        Some(p) => PromptTemplate::from_json(&read_text(p)?, &p.display().to_string())?,
        None => PromptTemplate::default(),
    };
    let mut model_name = a.model_name.clone();
    let mut r = Renderer {
        prompt,
        chat: None,
        tokenizer: None,
        first: None,
    };
    if let Some(path) = &a.gguf {
        let (g, _bytes) = GgufFile::open(path)?;
        let tok = Tokenizer::from_gguf(&g)?;
        let id = *tok
            .encode(NO_RESPONSE, false, false)
            .first()
            .ok_or_else(|| {
                err(format!(
                    "{}: \"{NO_RESPONSE}\" tokenizes to nothing",
                    path.display()
                ))
            })?;
        r.first = Some((id, tok.decode(&[id])));
        r.chat = match (&a.template, tok.chat_template()) {
            (Some(_), _) => None,
            (None, Some(t)) => Some(ChatTemplate::new(t)),
            (None, None) => {
                return Err(usage(format!(
                    "{}: no tokenizer.chat_template; give --template T.jinja",
                    path.display()
                )))
            }
        };
        if model_name.is_none() {
            model_name = g.get_str("general.name")?.map(str::to_string);
        }
        r.tokenizer = Some(tok);
    }
    if let Some(t) = &a.template {
        r.chat = Some(ChatTemplate::new(&read_text(t)?));
    }
    let model_name = model_name
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| a.common.model.clone());
    let scoring = match (&r.chat, &r.first) {
        (Some(_), Some((_, first))) => Scoring::Echo {
            appended: first.clone(),
            single_token: true,
        },
        (Some(_), None) => Scoring::Echo {
            appended: NO_RESPONSE.into(),
            single_token: false,
        },
        (None, _) => Scoring::TopLogprobs { first_token: None },
    };
    let task = Rc::new(Utility::new(scoring.clone()));
    let (prompts, output): (Vec<(ItemKey, Prompt)>, Output) = match &a.input {
        Some(input) => json_items(input, &r)?,
        None => run_items(&a, &r)?,
    };
    let items = task.items(prompts);
    let s = setup(&a.common)?;
    match &scoring {
        Scoring::Echo { .. } if a.common.dry_run => {
            println!(
                "(before the job, 2 requests probe that the server's echoed logprobs are aligned)"
            );
        }
        Scoring::Echo { .. } => {
            let p = r.prompt(PROBE_QUESTION, PROBE_PASSAGE, "the probe prompt")?;
            let Prompt::Rendered(p) = p else {
                return Err(err("the probe needs a rendered prompt"));
            };
            let report = block_on(probe(&s.env, &s.opts, &p)).map_err(|e| {
                err(format!(
                    "{}: refused: {e}",
                    s.env.provider.config().base_url
                ))
            })?;
            eprintln!(
                "ragscope judge: alignment probe passed: {:?} has logprob {} generated and {} echoed",
                report.token, report.generated, report.echoed
            );
        }
        Scoring::TopLogprobs { .. } => eprintln!(
            "ragscope judge: no --gguf or --template: reading the chat endpoint's top 20 \
             logprobs; where NO-RESPONSE's first token is not among them only an upper bound is \
             known (written as such)"
        ),
    }
    let c = &a.common;
    drive_rounds_in(
        c,
        s,
        task,
        items,
        &mut |_| Vec::new(),
        &|records: &[ItemRecord]| output.write(records, &model_name),
    )
}

/// The output file's shape.
enum Output {
    /// `qid docno relevant no_res_prob` (the item keys are the first three columns).
    Tsv,
    /// The UDCG reference JSON with models_info filled.
    Json(Value),
}

impl Output {
    fn write(&self, records: &[ItemRecord], model: &str) -> (String, Option<String>) {
        let bounds = records
            .iter()
            .filter(|r| reading(r).is_some_and(|(_, exact)| !exact))
            .count();
        let note = (bounds > 0).then(|| {
            format!(
                "{bounds} of {} probabilities are only upper bounds (NO-RESPONSE's first token \
                 was not among the top 20), written as {}; give --gguf or --template for exact \
                 values",
                records.len(),
                match self {
                    Output::Tsv => "<=p",
                    Output::Json(_) => "no_res_prob_upper_bound",
                }
            )
        });
        let text = match self {
            Output::Tsv => {
                let mut s = String::from("qid\tdocno\trelevant\tno_res_prob\n");
                for r in records {
                    if let Some((p, exact)) = reading(r) {
                        let key: Vec<&str> = r.key.0.iter().map(|(_, v)| v.as_str()).collect();
                        s.push_str(&format!(
                            "{}\t{}\n",
                            key.join("\t"),
                            format_probability(p, exact)
                        ));
                    }
                }
                s
            }
            Output::Json(data) => {
                let mut data = data.clone();
                for r in records {
                    let (Some((p, exact)), Some(e), Some(i)) = (
                        reading(r),
                        r.key.get("example").and_then(|v| v.parse::<usize>().ok()),
                        r.key.get("passage").and_then(|v| v.parse::<usize>().ok()),
                    ) else {
                        continue;
                    };
                    let field = if exact {
                        "no_res_prob"
                    } else {
                        "no_res_prob_upper_bound"
                    };
                    set_model_field(&mut data[e]["passages"][i], model, field, p);
                }
                serde_json::to_string_pretty(&data).unwrap_or_default() + "\n"
            }
        };
        (text, note)
    }
}

fn set_model_field(passage: &mut Value, model: &str, field: &str, p: f64) {
    let Some(obj) = passage.as_object_mut() else {
        return;
    };
    let info = obj
        .entry("models_info")
        .or_insert_with(|| Value::Object(Default::default()));
    if !info.is_object() {
        *info = Value::Object(Default::default());
    }
    let Some(info) = info.as_object_mut() else {
        return;
    };
    let entry = info
        .entry(model.to_string())
        .or_insert_with(|| Value::Object(Default::default()));
    if !entry.is_object() {
        *entry = Value::Object(Default::default());
    }
    if let Some(entry) = entry.as_object_mut() {
        entry.insert(field.into(), Value::from(p));
    }
}

type Items = (Vec<(ItemKey, Prompt)>, Output);

fn json_items(input: &Path, r: &Renderer) -> Result<Items, Failure> {
    let file = input.display().to_string();
    let data: Value = serde_json::from_str(&read_text(input)?).map_err(|e| {
        err(format!(
            "{file}: line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let examples = data
        .as_array()
        .ok_or_else(|| err(format!("{file}: expected a JSON list of examples")))?;
    let mut out = Vec::new();
    for (ei, ex) in examples.iter().enumerate() {
        let at = |what: &str| format!("{file}: example {ei}: {what}");
        let question = ex
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| err(at("missing string field \"question\"")))?;
        let passages = ex
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| err(at("missing list field \"passages\"")))?;
        for (pi, p) in passages.iter().enumerate() {
            let text = p
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| err(at(&format!("passage {pi}: missing string field \"text\""))))?;
            let key = ItemKey(vec![
                ("example".into(), ei.to_string()),
                ("passage".into(), pi.to_string()),
            ]);
            let prompt = r.prompt(question, text, &at(&format!("passage {pi}")))?;
            out.push((key, prompt));
        }
    }
    Ok((out, Output::Json(data)))
}

fn run_items(a: &Args, r: &Renderer) -> Result<Items, Failure> {
    let need = |o: &Option<PathBuf>, flag: &str| {
        o.clone()
            .ok_or_else(|| usage(format!("run mode needs {flag}")))
    };
    let topics_p = need(&a.topics, "--topics")?;
    let passages_p = need(&a.passages, "--passages")?;
    let qrels_p = need(&a.qrels, "--qrels")?;
    let run_p = need(&a.run, "--run")?;
    let topics = read_topics(&topics_p)?;
    let qrels = super::common::read_qrels(&qrels_p.to_string_lossy()).map_err(err)?;
    let ranked = read_run_top_k(&run_p, a.k)?;
    let wanted: HashSet<String> = ranked.iter().flat_map(|(_, d)| d.iter().cloned()).collect();
    let passages = read_passages(&passages_p, &wanted)?;
    let mut out = Vec::new();
    for (qid, docs) in &ranked {
        let question = topics.get(qid).ok_or_else(|| {
            err(format!(
                "{}: query {qid} of the run has no topic",
                topics_p.display()
            ))
        })?;
        for d in docs {
            let text = passages.get(d).ok_or_else(|| {
                err(format!(
                    "{}: docno {d} (query {qid}) is not in the passages file",
                    passages_p.display()
                ))
            })?;
            let rel = qrels
                .topic(qid)
                .and_then(|t| t.rel(d.as_bytes()))
                .is_some_and(|r| r > 0);
            let key = ItemKey(vec![
                ("qid".into(), qid.clone()),
                ("docno".into(), d.clone()),
                ("relevant".into(), u8::from(rel).to_string()),
            ]);
            let prompt = r.prompt(question, text, &format!("query {qid}, docno {d}"))?;
            out.push((key, prompt));
        }
    }
    Ok((out, Output::Tsv))
}
