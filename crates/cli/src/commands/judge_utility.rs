//! `ragscope judge utility`: p(NO-RESPONSE | question, passage) from an OpenAI-compatible server
//! (vLLM, llama.cpp), OpenAI or Gemini (top logprobs only) — the inputs and outputs of `ragscope utility`, the options, log and exit
//! codes of `judge umbrela`.
//!
//! With `--gguf` (or `--template`) the paper's prompt is rendered here with the model's chat
//! template, the first token of NO-RESPONSE is appended and its echoed logprob read from
//! `/completions` — exact, after a probe that the server's echo is aligned (the task and the
//! probe live in `ragscope_judge::task::utility`). Without either, the chat endpoint's top 20
//! logprobs give the value when the token is listed and an upper bound otherwise, written as
//! `<=p` (TSV) or `no_res_prob_upper_bound` (JSON), never as a plain number. Gemini gives the top 20 through
//! `responseLogprobs` (for the models that serve them); it has no `/completions`, so `--gguf`
//! and `--template` are refused for it, and Anthropic (no log-probabilities at all) is refused.

use super::judge::{drive_rounds_in, setup, usage, CommonArgs};
use super::utility::{read_passages, read_run_top_k, read_topics, Failure, PassageInputs};
use futures::executor::block_on;
use ragscope_infer::gguf::GgufFile;
use ragscope_judge::task::utility::{probe, Prompt, Scoring, Utility};
use ragscope_judge::task::utility_io::{
    refused, run_key, udcg_json_items, ServerPrompts, UtilityOutput,
};
use ragscope_judge::{ItemKey, ItemRecord, ProviderKind};
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
bound, written `<=p` in the TSV and `no_res_prob_upper_bound` in the JSON. Gemini (--provider \
gemini) serves these top 20 through responseLogprobs, for the models that have them; exact echo \
needs an OpenAI-compatible server.\n\n\
JSON mode:  ragscope judge utility --provider openai-compatible --base-url URL --model M --gguf M.gguf INPUT.json -o OUT.json --log LOG.jsonl\n\
Run mode:   ... --topics T.tsv --passages P.jsonl --qrels Q --run R --k 5 -o U.tsv --log LOG.jsonl"
)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub inputs: PassageInputs,
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
}

fn err(m: impl Into<String>) -> Failure {
    Failure::Error(m.into())
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| err(format!("{}: {e}", path.display())))
}

pub(super) fn run(a: Args) -> Result<ExitCode, Failure> {
    a.inputs.check_mode()?;
    let kind: ProviderKind = a.common.provider.parse().map_err(Failure::Usage)?;
    check_provider(kind, a.gguf.is_some(), a.template.is_some())?;
    if a.inputs.k == 0 {
        return Err(usage("--k must be at least 1"));
    }
    let prompt = a.inputs.prompt()?;
    let gguf = match &a.gguf {
        Some(path) => Some((GgufFile::open(path)?.0, path.display().to_string())),
        None => None,
    };
    let template = match &a.template {
        Some(t) => Some(read_text(t)?),
        None => None,
    };
    let r = match (&gguf, &template) {
        (Some((g, file)), t) => {
            ServerPrompts::from_gguf(prompt, g, file, t.as_deref()).map_err(|e| {
                if e.contains("no tokenizer.chat_template") {
                    usage(format!(
                        "{file}: no tokenizer.chat_template; give --template T.jinja"
                    ))
                } else {
                    err(e)
                }
            })?
        }
        (None, Some(t)) => ServerPrompts::with_template(prompt, t),
        (None, None) => ServerPrompts::chat_only(prompt),
    };
    let model_name = a
        .model_name
        .clone()
        .or_else(|| r.gguf_name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| a.common.model.clone());
    let scoring = r.scoring();
    let task = Rc::new(Utility::new(scoring.clone()));
    let (prompts, output): Items = match &a.inputs.input {
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
            let p = r
                .probe_prompt()?
                .ok_or_else(|| err("the probe needs a rendered prompt"))?;
            let report = block_on(probe(&s.env, &s.opts, &p))
                .map_err(|e| err(refused(&s.env.provider.config().base_url, &e)))?;
            eprintln!(
                "ragscope judge: alignment probe passed: {:?} has logprob {} generated and {} echoed",
                report.token, report.generated, report.echoed
            );
        }
        Scoring::TopLogprobs { .. } => eprintln!(
            "ragscope judge: {}; where NO-RESPONSE's first token is not among them only an \
             upper bound is known (written as such)",
            if kind == ProviderKind::Gemini {
                "Gemini: reading the first answer token's top 20 logprobs (responseLogprobs)"
            } else {
                "no --gguf or --template: reading the chat endpoint's top 20 logprobs"
            }
        ),
    }
    let c = &a.common;
    drive_rounds_in(
        c,
        s,
        task,
        items,
        &mut |_| Vec::new(),
        &|records: &[ItemRecord]| match kind {
            ProviderKind::Gemini => output.write_hinted(records, &model_name, GEMINI_HINT),
            _ => output.write(records, &model_name),
        },
    )
}

/// The note's advice on exact values when Gemini gave bounds (it has no echo).
const GEMINI_HINT: &str =
    "use an OpenAI-compatible server serving the model with --gguf or --template";

/// The providers that give log-probabilities, and the way each gives them: echo (`--gguf`,
/// `--template`) needs `/completions`, which Gemini does not have; Anthropic gives none; and a
/// GGUF's chat template fits only that model, which OpenAI's API does not serve.
fn check_provider(kind: ProviderKind, gguf: bool, template: bool) -> Result<(), Failure> {
    let echo = gguf || template;
    match kind {
        ProviderKind::Anthropic => Err(usage(
            "--provider anthropic: Anthropic's Messages API returns no log-probabilities; use \
             an OpenAI-compatible server, OpenAI or Gemini",
        )),
        ProviderKind::Gemini if echo => Err(usage(
            "--provider gemini: --gguf and --template read exact values from /completions with \
             echo, which Gemini does not serve; leave them out to read Gemini's top 20 logprobs \
             (a value, or an upper bound)",
        )),
        ProviderKind::OpenAi if gguf => Err(usage(
            "--provider openai: --gguf renders the prompt with that model's own chat template, \
             and OpenAI's API serves only OpenAI's models; serve the GGUF with an \
             OpenAI-compatible server (vLLM, llama.cpp) and use --provider openai-compatible \
             --base-url URL, or leave --gguf out to read the chat endpoint's top 20 logprobs",
        )),
        _ => Ok(()),
    }
}

type Items = (Vec<(ItemKey, Prompt)>, UtilityOutput);

fn json_items(input: &Path, r: &ServerPrompts) -> Result<Items, Failure> {
    let (passages, data) =
        udcg_json_items(&input.display().to_string(), &read_text(input)?, r).map_err(err)?;
    let items = passages.into_iter().map(|p| (p.key, p.prompt)).collect();
    Ok((items, UtilityOutput::Json(data)))
}

fn run_items(a: &Args, r: &ServerPrompts) -> Result<Items, Failure> {
    let [topics_p, passages_p, qrels_p, run_p] = a.inputs.run_files()?;
    let topics = read_topics(&topics_p)?;
    let qrels = super::common::read_qrels(&qrels_p.to_string_lossy()).map_err(err)?;
    let ranked = read_run_top_k(&run_p, a.inputs.k)?;
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
            let key = run_key(qid, d, rel);
            let prompt = r
                .prompt(question, text, &format!("query {qid}, docno {d}"))
                .map_err(err)?;
            out.push((key, prompt));
        }
    }
    Ok((out, UtilityOutput::Tsv))
}
