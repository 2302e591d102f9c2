//! Passage utilities for UDCG (Trappolini et al.; reference code GiovanniTRA/UDCG):
//!
//! * p(NO-RESPONSE | q, p): the paper's prompt (Figure 3) rendered through the model's chat
//!   template with a generation prompt, one forward pass, softmax at the last position, and the
//!   probability of the **first token** of the tokenization of "NO-RESPONSE".
//! * u(q, p) = R(q, p) · (1 − p(NO-RESPONSE | q, p)), R = +1 for a relevant passage, −1 otherwise.

use crate::error::{InferError, Result};
use crate::model::Model;
use crate::tokenizer::chat::{ChatMessage, ChatTemplate};
use crate::tokenizer::Tokenizer;

/// The paper's system prompt (Figure 3).
pub const PAPER_SYSTEM_PROMPT: &str = "You are given a question and you must respond based on the provided documents. Respond directly without providing any premise or explanation. If none of the documents contain the answer, please respond with NO-RESPONSE. Do not try to respond based on your own knowledge.";
/// The paper's user message; `{text}` and `{question}` are substituted.
pub const PAPER_USER_TEMPLATE: &str = "Document: {text}\nQuestion: {question}\nAnswer:";
pub const NO_RESPONSE: &str = "NO-RESPONSE";

/// System prompt and user message template.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PromptTemplate {
    pub system: String,
    /// Contains `{text}` and `{question}`.
    pub user: String,
}

impl Default for PromptTemplate {
    fn default() -> Self {
        PromptTemplate {
            system: PAPER_SYSTEM_PROMPT.to_string(),
            user: PAPER_USER_TEMPLATE.to_string(),
        }
    }
}

impl PromptTemplate {
    /// Reads a JSON object `{"system": "...", "user": "... {text} ... {question} ..."}`.
    pub fn from_json(source: &str, file: &str) -> Result<Self> {
        let t: PromptTemplate = serde_json::from_str(source).map_err(|e| InferError::Metadata {
            file: file.to_string(),
            key: "prompt template".to_string(),
            message: format!("line {}, column {}: {e}", e.line(), e.column()),
        })?;
        for field in ["{text}", "{question}"] {
            if !t.user.contains(field) {
                return Err(InferError::Metadata {
                    file: file.to_string(),
                    key: "user".to_string(),
                    message: format!("the user template must contain {field}"),
                });
            }
        }
        Ok(t)
    }

    /// The user message for one passage; both placeholders are replaced in one pass so that a
    /// passage containing "{question}" stays as written.
    pub fn user_message(&self, question: &str, text: &str) -> String {
        substitute(&self.user, question, text)
    }

    /// The user message for a context of several passages: the template's line holding
    /// `{text}` is repeated once per passage (the paper's "Document: {text}" line becomes one
    /// "Document: …" line per document, as the UDCG reference code writes each document).
    pub fn user_message_docs(&self, question: &str, texts: &[&str]) -> String {
        let Some(at) = self.user.find("{text}") else {
            return substitute(&self.user, question, "");
        };
        let line_start = self.user[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.user[at..]
            .find('\n')
            .map_or(self.user.len(), |i| at + i);
        let line = &self.user[line_start..line_end];
        let docs: Vec<String> = texts
            .iter()
            .map(|t| substitute(line, question, t))
            .collect();
        format!(
            "{}{}{}",
            substitute(&self.user[..line_start], question, ""),
            docs.join("\n"),
            substitute(&self.user[line_end..], question, "")
        )
    }
}

/// Replaces `{text}` and `{question}` in one pass.
fn substitute(template: &str, question: &str, text: &str) -> String {
    let mut out = String::with_capacity(template.len() + question.len() + text.len());
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{text}") {
            out.push_str(text);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{question}") {
            out.push_str(question);
            rest = after;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Softmax probability of `target` from one position's logits (in f64).
pub fn token_probability(logits: &[f32], target: u32) -> f64 {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
    let sum: f64 = logits.iter().map(|&v| (v as f64 - max).exp()).sum();
    logits
        .get(target as usize)
        .map_or(0.0, |&v| (v as f64 - max).exp() / sum)
}

/// u = R · (1 − p), R = +1 when relevant, −1 otherwise.
pub fn utility(relevant: bool, p_no_response: f64) -> f64 {
    let r = if relevant { 1.0 } else { -1.0 };
    r * (1.0 - p_no_response)
}

/// Computes p(NO-RESPONSE | question, passage) with a local model.
pub struct NoResponseScorer<'m> {
    model: &'m Model,
    tokenizer: &'m Tokenizer,
    chat: ChatTemplate,
    prompt: PromptTemplate,
    target: u32,
}

impl<'m> NoResponseScorer<'m> {
    /// Uses the model's own chat template (`tokenizer.chat_template`).
    pub fn new(model: &'m Model, tokenizer: &'m Tokenizer, prompt: PromptTemplate) -> Result<Self> {
        let source = tokenizer.chat_template().ok_or_else(|| {
            InferError::ChatTemplate(
                "the model file has no tokenizer.chat_template; pass one explicitly".to_string(),
            )
        })?;
        Self::with_chat_template(model, tokenizer, prompt, ChatTemplate::new(source))
    }

    pub fn with_chat_template(
        model: &'m Model,
        tokenizer: &'m Tokenizer,
        prompt: PromptTemplate,
        chat: ChatTemplate,
    ) -> Result<Self> {
        let ids = tokenizer.encode(NO_RESPONSE, false, false);
        let target = *ids.first().ok_or_else(|| {
            InferError::Tokenizer(format!("\"{NO_RESPONSE}\" tokenizes to nothing"))
        })?;
        Ok(NoResponseScorer {
            model,
            tokenizer,
            chat,
            prompt,
            target,
        })
    }

    /// The token whose probability is reported.
    pub fn target_token(&self) -> u32 {
        self.target
    }

    /// The chat-templated prompt text for one passage.
    pub fn prompt_text(&self, question: &str, text: &str) -> Result<String> {
        let messages = [
            ChatMessage::new("system", &self.prompt.system),
            ChatMessage::new("user", &self.prompt.user_message(question, text)),
        ];
        self.chat.render(
            &messages,
            true,
            self.tokenizer.bos_text(),
            self.tokenizer.eos_text(),
        )
    }

    /// Token ids of the prompt: special tokens in the rendered template are parsed, nothing is
    /// added (the template writes BOS itself when the model wants it), as transformers'
    /// `apply_chat_template(tokenize=True)` does.
    pub fn prompt_tokens(&self, question: &str, text: &str) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode(&self.prompt_text(question, text)?, false, true))
    }

    /// p(NO-RESPONSE) for each (question, passage text) pair, run as one batch.
    pub fn score(&self, items: &[(&str, &str)]) -> Result<Vec<f64>> {
        let prompts = items
            .iter()
            .map(|(q, t)| self.prompt_tokens(q, t))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
        let out = self.model.prefill(&refs)?;
        Ok(out
            .last_logits
            .iter()
            .map(|l| token_probability(l, self.target))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_message_substitutes_once() {
        let t = PromptTemplate::default();
        let m = t.user_message("Q{text}?", "a {question} b");
        assert_eq!(m, "Document: a {question} b\nQuestion: Q{text}?\nAnswer:");
    }

    #[test]
    fn utility_sign_follows_relevance() {
        assert_eq!(utility(true, 0.25), 0.75);
        assert_eq!(utility(false, 0.25), -0.75);
    }

    #[test]
    fn prompt_template_json_needs_both_fields() {
        assert!(PromptTemplate::from_json(r#"{"system":"s","user":"{text}"}"#, "t.json").is_err());
        assert!(PromptTemplate::from_json(
            r#"{"system":"s","user":"{text} {question}"}"#,
            "t.json"
        )
        .is_ok());
        let e = PromptTemplate::from_json("{", "t.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.json") && e.contains("line 1"), "{e}");
    }
}
