//! What `ragscope judge utility` and the app's Judges panel share around the utility task
//! ([`super::utility`]): the paper's prompt rendered with the model's chat template (from a
//! GGUF's metadata or a template file) the way the local engine renders it, the choice of
//! scoring that follows from what the user gave, the items of a UDCG reference JSON, and
//! `ragscope utility`'s output formats (the utilities TSV, or the JSON with `models_info`
//! filled) with upper bounds written as bounds.

use super::utility::{format_probability, reading, Prompt, Scoring, PROBE_PASSAGE, PROBE_QUESTION};
use super::ItemKey;
use crate::runner::ItemRecord;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::utility::{PromptTemplate, NO_RESPONSE};
use ragscope_infer::{ChatMessage, ChatTemplate, Tokenizer};
use serde_json::Value;

/// Renders the paper's prompt for a server, as the local engine (`ragscope utility`) does.
pub struct ServerPrompts {
    prompt: PromptTemplate,
    chat: Option<ChatTemplate>,
    tokenizer: Option<Tokenizer>,
    /// The first token of NO-RESPONSE (id, text), from the tokenizer.
    first: Option<(u32, String)>,
    /// The GGUF's `general.name`, when one was read.
    pub gguf_name: Option<String>,
}

impl ServerPrompts {
    /// No local template: the chat endpoint's `top_logprobs` (exact or an upper bound).
    pub fn chat_only(prompt: PromptTemplate) -> Self {
        ServerPrompts {
            prompt,
            chat: None,
            tokenizer: None,
            first: None,
            gguf_name: None,
        }
    }

    /// A template file's text: the rendered prompt, then the whole word NO-RESPONSE (no
    /// tokenizer tells its first token), echoed.
    pub fn with_template(prompt: PromptTemplate, template: &str) -> Self {
        ServerPrompts {
            chat: Some(ChatTemplate::new(template)),
            ..Self::chat_only(prompt)
        }
    }

    /// The served model's GGUF (its metadata only): tokenizer and chat template, unless
    /// `template` replaces the latter. `file` names the GGUF in errors.
    pub fn from_gguf(
        prompt: PromptTemplate,
        g: &GgufFile,
        file: &str,
        template: Option<&str>,
    ) -> Result<Self, String> {
        let tok = Tokenizer::from_gguf(g).map_err(|e| e.to_string())?;
        let id = *tok
            .encode(NO_RESPONSE, false, false)
            .first()
            .ok_or_else(|| format!("{file}: \"{NO_RESPONSE}\" tokenizes to nothing"))?;
        let chat = match (template, tok.chat_template()) {
            (Some(t), _) => ChatTemplate::new(t),
            (None, Some(t)) => ChatTemplate::new(t),
            (None, None) => {
                return Err(format!(
                    "{file}: no tokenizer.chat_template; give a template file"
                ))
            }
        };
        let gguf_name = g
            .get_str("general.name")
            .map_err(|e| e.to_string())?
            .filter(|n| !n.trim().is_empty())
            .map(str::to_string);
        Ok(ServerPrompts {
            prompt,
            chat: Some(chat),
            first: Some((id, tok.decode(&[id]))),
            tokenizer: Some(tok),
            gguf_name,
        })
    }

    /// How the probability is read, given what the user gave.
    pub fn scoring(&self) -> Scoring {
        match (&self.chat, &self.first) {
            (Some(_), Some((_, first))) => Scoring::Echo {
                appended: first.clone(),
                single_token: true,
            },
            (Some(_), None) => Scoring::Echo {
                appended: NO_RESPONSE.into(),
                single_token: false,
            },
            (None, _) => Scoring::TopLogprobs { first_token: None },
        }
    }

    /// What is sent for one passage (`item` names it in errors). With a tokenizer, the rendered
    /// prompt is the exact token sequence the local engine scores: checked by encoding it with
    /// the token appended; a leading BOS is left to the server when the model adds one itself
    /// (else it would be doubled).
    pub fn prompt(&self, question: &str, text: &str, item: &str) -> Result<Prompt, String> {
        self.prompt_of_user(self.prompt.user_message(question, text), item)
    }

    /// [`ServerPrompts::prompt`] of a whole context: one "Document: …" line per passage, as
    /// the local engine's answer prompt (`PromptTemplate::user_message_docs`), whose
    /// p(NO-RESPONSE) is the context's.
    pub fn prompt_docs(
        &self,
        question: &str,
        texts: &[&str],
        item: &str,
    ) -> Result<Prompt, String> {
        self.prompt_of_user(self.prompt.user_message_docs(question, texts), item)
    }

    fn prompt_of_user(&self, user: String, item: &str) -> Result<Prompt, String> {
        let Some(chat) = &self.chat else {
            return Ok(Prompt::Chat {
                system: self.prompt.system.clone(),
                user,
            });
        };
        let (bos, eos) = match &self.tokenizer {
            Some(t) => (t.bos_text(), t.eos_text()),
            None => ("", ""),
        };
        let messages = [
            ChatMessage::new("system", &self.prompt.system),
            ChatMessage::new("user", &user),
        ];
        let rendered = chat
            .render(&messages, true, bos, eos)
            .map_err(|e| format!("{item}: {e}"))?;
        let (Some(tok), Some((id, first))) = (&self.tokenizer, &self.first) else {
            return Ok(Prompt::Rendered(rendered));
        };
        let mut ids = tok.encode(&rendered, false, true);
        ids.push(*id);
        if tok.encode(&format!("{rendered}{first}"), false, true) != ids {
            return Err(format!(
                "{item}: the prompt followed by {first:?} does not tokenize as the prompt's \
                 tokens then that token; the echo cannot score it"
            ));
        }
        let sent = match rendered.strip_prefix(bos) {
            Some(rest) if tok.add_bos() && !bos.is_empty() => rest.to_string(),
            _ => rendered,
        };
        Ok(Prompt::Rendered(sent))
    }

    /// The alignment probe's prompt (echo scoring only; `None` on the chat path, which has no
    /// probe).
    pub fn probe_prompt(&self) -> Result<Option<String>, String> {
        if self.chat.is_none() {
            return Ok(None);
        }
        match self.prompt(PROBE_QUESTION, PROBE_PASSAGE, "the probe prompt")? {
            Prompt::Rendered(p) => Ok(Some(p)),
            Prompt::Chat { .. } => Err("the probe needs a rendered prompt".into()),
        }
    }
}

/// The message of a server whose probe failed (the CLI's and the app's).
pub fn refused(base_url: &str, error: &str) -> String {
    format!("{base_url}: refused: {error}")
}

/// A run-mode item's key: `qid`, `docno`, `relevant` (1/0), the utilities TSV's first columns.
pub fn run_key(qid: &str, docno: &str, relevant: bool) -> ItemKey {
    ItemKey(vec![
        ("qid".into(), qid.to_string()),
        ("docno".into(), docno.to_string()),
        ("relevant".into(), u8::from(relevant).to_string()),
    ])
}

/// A passage of a UDCG reference JSON, with its key (`example`, `passage`: indices).
pub struct UdcgPassage {
    pub key: ItemKey,
    pub prompt: Prompt,
    /// `example_id` (else the example's index), `doc_id` (else the passage's index), and
    /// `is_relevant` when the passage has it: what a utilities TSV row needs.
    pub qid: String,
    pub docno: String,
    pub relevant: Option<bool>,
}

/// Every passage of a UDCG reference JSON, in file order, and the parsed file (to be filled);
/// errors name the file, example and passage.
pub fn udcg_json_items(
    file: &str,
    text: &str,
    prompts: &ServerPrompts,
) -> Result<(Vec<UdcgPassage>, Value), String> {
    let data: Value = serde_json::from_str(text)
        .map_err(|e| format!("{file}: line {}, column {}: {e}", e.line(), e.column()))?;
    let examples = data
        .as_array()
        .ok_or_else(|| format!("{file}: expected a JSON list of examples"))?;
    let mut out = Vec::new();
    for (ei, ex) in examples.iter().enumerate() {
        let at = |what: &str| format!("{file}: example {ei}: {what}");
        let question = ex
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| at("missing string field \"question\""))?;
        let passages = ex
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| at("missing list field \"passages\""))?;
        let qid = ex
            .get("example_id")
            .and_then(Value::as_str)
            .map_or_else(|| ei.to_string(), str::to_string);
        for (pi, p) in passages.iter().enumerate() {
            let text = p
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| at(&format!("passage {pi}: missing string field \"text\"")))?;
            out.push(UdcgPassage {
                key: ItemKey(vec![
                    ("example".into(), ei.to_string()),
                    ("passage".into(), pi.to_string()),
                ]),
                prompt: prompts.prompt(question, text, &at(&format!("passage {pi}")))?,
                qid: qid.clone(),
                docno: p
                    .get("doc_id")
                    .and_then(Value::as_str)
                    .map_or_else(|| pi.to_string(), str::to_string),
                relevant: p.get("is_relevant").and_then(Value::as_bool),
            });
        }
    }
    Ok((out, data))
}

/// `ragscope utility`'s output file shapes.
#[derive(Clone, Debug)]
pub enum UtilityOutput {
    /// `qid docno relevant no_res_prob` (the run-mode item keys are the first three columns).
    Tsv,
    /// The UDCG reference JSON with `models_info[model]` filled.
    Json(Value),
}

impl UtilityOutput {
    /// The file and, when some probabilities are only upper bounds, a note saying so. Bounds
    /// are written `<=p` (TSV) or `no_res_prob_upper_bound` (JSON), never as a plain value.
    pub fn write(&self, records: &[ItemRecord], model: &str) -> (String, Option<String>) {
        self.write_hinted(records, model, "give --gguf or --template")
    }

    /// [`Self::write`] with the note's advice on getting exact values (`hint`, e.g. the app's
    /// "pick the model's GGUF or a template file").
    pub fn write_hinted(
        &self,
        records: &[ItemRecord],
        model: &str,
        hint: &str,
    ) -> (String, Option<String>) {
        let bounds = records
            .iter()
            .filter(|r| reading(r).is_some_and(|(_, exact)| !exact))
            .count();
        let note = (bounds > 0).then(|| {
            format!(
                "{bounds} of {} probabilities are only upper bounds (NO-RESPONSE's first token \
                 was not among the top 20), written as {}; {hint} for exact values",
                records.len(),
                match self {
                    UtilityOutput::Tsv => "<=p",
                    UtilityOutput::Json(_) => "no_res_prob_upper_bound",
                }
            )
        });
        let text = match self {
            UtilityOutput::Tsv => {
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
            UtilityOutput::Json(data) => {
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

/// Sets `models_info[model][field] = p` on one passage of a UDCG reference JSON, making the
/// objects on the way (shared with `ragscope utility`, which writes `no_res_prob`).
pub fn set_model_field(passage: &mut Value, model: &str, field: &str, p: f64) {
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
