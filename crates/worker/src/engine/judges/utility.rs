//! The utility task in the worker (`ragscope judge utility` in the app): p(NO-RESPONSE) of each
//! passage of a loaded UDCG JSON, or of a run's top k, from an OpenAI-compatible server. The
//! prompt rendering, the scoring choice, the probe and the output formats are crates/judge's
//! (`task::utility`, `task::utility_io`), shared with the CLI; this file feeds them the loaded
//! files and the chat template the user gave (a GGUF's metadata read here, or a template file).

use super::super::Workspace;
use super::tasks::BuiltTask;
use crate::engine::inference::{file_stem, name_key};
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::utility::{PromptTemplate, NO_RESPONSE};
use ragscope_infer::{ByteSource, Tokenizer};
use ragscope_judge::task::utility::{reading, Prompt, Utility};
use ragscope_judge::task::utility_io::{run_key, udcg_json_items, ServerPrompts, UtilityOutput};
use ragscope_judge::{ItemKey, ItemRecord};
use ragscope_protocol::compute::ComputeSource;
use ragscope_protocol::judges::{GgufTemplateInfo, JudgeResponse, ProviderChoice, UtilityTemplate};
use std::collections::HashMap;
use std::rc::Rc;

/// The note's advice on exact values, in the app's words.
const EXACT_HINT: &str = "pick the model's GGUF or a template file";
/// The same for Gemini, which gives only its top 20 (no echo).
const GEMINI_HINT: &str =
    "use an OpenAI-compatible server serving the model, with its GGUF or a template file,";

/// A row of the utilities TSV the RAG views load: qid, docno, relevance.
type ViewRow = (String, String, Option<bool>);

impl Workspace {
    /// Reads the metadata of a GGUF (never its tensors) for the utility task's chat template
    /// and tokenizer, and keeps it under `id` (replacing the one read before).
    pub fn read_judge_gguf(&mut self, id: u32, name: &str, src: &dyn ByteSource) -> JudgeResponse {
        let result = GgufFile::read(src, name)
            .map_err(|e| e.to_string())
            .and_then(|g| {
                let prompts = ServerPrompts::from_gguf(PromptTemplate::default(), &g, name, None)?;
                let tok = Tokenizer::from_gguf(&g).map_err(|e| e.to_string())?;
                let first = tok
                    .encode(NO_RESPONSE, false, false)
                    .first()
                    .map(|&t| tok.decode(&[t]))
                    .unwrap_or_default();
                let chars = tok.chat_template().map_or(0, |t| t.chars().count());
                let info = GgufTemplateInfo {
                    id,
                    file_name: name.to_string(),
                    model_name: prompts.gguf_name.clone(),
                    summary: format!(
                        "chat template of {chars} characters, {} tokens; the first token of \
                         {NO_RESPONSE} is {first:?}",
                        tok.n_vocab()
                    ),
                };
                self.judge_files.gguf = Some((id, name.to_string(), g));
                Ok(info)
            });
        JudgeResponse::GgufRead { id, result }
    }

    pub(crate) fn server_prompts(
        &self,
        template: &UtilityTemplate,
    ) -> Result<ServerPrompts, String> {
        let prompt = PromptTemplate::default();
        Ok(match template {
            UtilityTemplate::None => ServerPrompts::chat_only(prompt),
            UtilityTemplate::Text { text, .. } => ServerPrompts::with_template(prompt, text),
            UtilityTemplate::Gguf { id, name } => {
                let (_, file, g) = self
                    .judge_files
                    .gguf
                    .as_ref()
                    .filter(|(g, _, _)| g == id)
                    .ok_or_else(|| format!("the GGUF {name} is no longer read: pick it again"))?;
                ServerPrompts::from_gguf(prompt, g, file, None)?
            }
        })
    }

    /// The utility task: its items, the probe's prompt (echo scoring), and an output in
    /// `ragscope utility`'s format plus the exact values as a utilities TSV for the RAG views.
    /// `model` names the utilities when the GGUF has no `general.name`.
    pub(super) fn build_utility(
        &self,
        source: &ComputeSource,
        template: &UtilityTemplate,
        model: &str,
        provider: ProviderChoice,
    ) -> Result<BuiltTask, String> {
        let prompts = self.server_prompts(template)?;
        let hint = match provider {
            ProviderChoice::Gemini => GEMINI_HINT,
            _ => EXACT_HINT,
        };
        let model_name = prompts
            .gguf_name
            .clone()
            .unwrap_or_else(|| model.to_string());
        let task = Rc::new(Utility::new(prompts.scoring()));
        let mut rows: HashMap<ItemKey, ViewRow> = HashMap::new();
        let (pairs, output, stem): (Vec<(ItemKey, Prompt)>, UtilityOutput, String) = match source {
            ComputeSource::Udcg(id) => {
                let (name, text) = self
                    .udcg_sources
                    .get(id)
                    .ok_or("that UDCG JSON file is no longer loaded")?;
                let (passages, data) = udcg_json_items(name, text, &prompts)?;
                let mut pairs = Vec::with_capacity(passages.len());
                for p in passages {
                    rows.insert(p.key.clone(), (p.qid, p.docno, p.relevant));
                    pairs.push((p.key, p.prompt));
                }
                (
                    pairs,
                    UtilityOutput::Json(data),
                    file_stem(name).to_string(),
                )
            }
            ComputeSource::Run { run, k } => {
                let (name, items) = self.run_items(*run, *k)?;
                let mut pairs = Vec::with_capacity(items.len());
                for i in items {
                    let key = run_key(&i.qid, &i.docno, i.relevant);
                    let item = format!("query {}, docno {}", i.qid, i.docno);
                    let prompt = prompts.prompt(&i.question, &i.text, &item)?;
                    rows.insert(key.clone(), (i.qid, i.docno, Some(i.relevant)));
                    pairs.push((key, prompt));
                }
                (pairs, UtilityOutput::Tsv, name)
            }
            ComputeSource::Passages { .. } => {
                return Err("the Learn page's passages are scored locally, not by a judge".into())
            }
        };
        let ext = match output {
            UtilityOutput::Tsv => "tsv",
            UtilityOutput::Json(_) => "json",
        };
        let items = task.items(pairs);
        let probe = prompts.probe_prompt()?;
        let column = name_key(&model_name);
        let view_name = format!("utilities-{column}-{stem}.tsv");
        let rows = Rc::new(rows);
        let finish = {
            let (rows, column) = (rows.clone(), column.clone());
            Box::new(move |records: &[ItemRecord]| {
                let (text, note) = output.write_hinted(records, &model_name, hint);
                let (_, left_out) = view_tsv(records, &rows, &column);
                let mut notes: Vec<String> = note.into_iter().collect();
                if left_out > 0 {
                    notes.push(format!(
                        "{left_out} passages are not in the RAG views (only exact values with \
                         a relevance label are)"
                    ));
                }
                (text, (!notes.is_empty()).then(|| notes.join(". ")))
            })
        };
        let view = Box::new(move |records: &[ItemRecord]| {
            (view_name.clone(), view_tsv(records, &rows, &column).0)
        });
        Ok(BuiltTask {
            task,
            items,
            next_round: None,
            finish,
            view: Some(view),
            skipped: Vec::new(),
            probe,
            stem: "utilities",
            ext,
        })
    }
}

/// The exact values as `qid docno relevant no_res_prob model` (the compute-locally result's
/// format, which the RAG views read), and how many successful passages it leaves out (bounds,
/// or no relevance label).
fn view_tsv(
    records: &[ItemRecord],
    rows: &HashMap<ItemKey, ViewRow>,
    model: &str,
) -> (String, usize) {
    let mut tsv = String::from("qid\tdocno\trelevant\tno_res_prob\tmodel\n");
    let mut left_out = 0;
    for r in records {
        let Some((p, exact)) = reading(r) else {
            continue;
        };
        match rows.get(&r.key) {
            Some((qid, docno, Some(rel))) if exact => tsv.push_str(&format!(
                "{qid}\t{docno}\t{}\t{p}\t{model}\n",
                u8::from(*rel)
            )),
            _ => left_out += 1,
        }
    }
    (tsv, left_out)
}
