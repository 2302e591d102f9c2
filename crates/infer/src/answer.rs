//! Greedy answers to a question from a context of passages: the paper's Figure 3 prompt (the
//! system prompt of the utilities, one "Document: …" line per passage) through the model's chat
//! template, then greedy decoding (stop at a newline by default).

use crate::error::{InferError, Result};
use crate::generate::{greedy, Generation, GreedyOptions};
use crate::model::Model;
use crate::tokenizer::chat::{ChatMessage, ChatTemplate};
use crate::tokenizer::Tokenizer;
use crate::utility::PromptTemplate;

pub struct Answerer<'m> {
    model: &'m Model,
    tokenizer: &'m Tokenizer,
    chat: ChatTemplate,
    prompt: PromptTemplate,
    pub options: GreedyOptions,
}

impl<'m> Answerer<'m> {
    /// Uses the model's own chat template (`tokenizer.chat_template`).
    pub fn new(
        model: &'m Model,
        tokenizer: &'m Tokenizer,
        prompt: PromptTemplate,
        options: GreedyOptions,
    ) -> Result<Self> {
        let source = tokenizer.chat_template().ok_or_else(|| {
            InferError::ChatTemplate(
                "the model file has no tokenizer.chat_template; pass one explicitly".to_string(),
            )
        })?;
        Ok(Self::with_chat_template(
            model,
            tokenizer,
            prompt,
            ChatTemplate::new(source),
            options,
        ))
    }

    pub fn with_chat_template(
        model: &'m Model,
        tokenizer: &'m Tokenizer,
        prompt: PromptTemplate,
        chat: ChatTemplate,
        options: GreedyOptions,
    ) -> Self {
        Answerer {
            model,
            tokenizer,
            chat,
            prompt,
            options,
        }
    }

    /// The chat-templated prompt for a question and its context's passage texts.
    pub fn prompt_text(&self, question: &str, passages: &[&str]) -> Result<String> {
        let messages = [
            ChatMessage::new("system", &self.prompt.system),
            ChatMessage::new("user", &self.prompt.user_message_docs(question, passages)),
        ];
        self.chat.render(
            &messages,
            true,
            self.tokenizer.bos_text(),
            self.tokenizer.eos_text(),
        )
    }

    /// A prompt rendered by the caller as the one user message (no system message: the
    /// lost-in-the-middle paper's prompts), through the chat template with a generation prompt.
    pub fn user_prompt_text(&self, user: &str) -> Result<String> {
        self.chat.render(
            &[ChatMessage::new("user", user)],
            true,
            self.tokenizer.bos_text(),
            self.tokenizer.eos_text(),
        )
    }

    /// Token ids of [`Answerer::user_prompt_text`].
    pub fn user_prompt_tokens(&self, user: &str) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode(&self.user_prompt_text(user)?, false, true))
    }

    /// Token ids of the prompt (special tokens parsed, nothing added; see `NoResponseScorer`).
    pub fn prompt_tokens(&self, question: &str, passages: &[&str]) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode(&self.prompt_text(question, passages)?, false, true))
    }

    /// Greedy answers for a batch of (question, passages) items.
    pub fn answer(&self, items: &[(&str, Vec<&str>)]) -> Result<Vec<Generation>> {
        let prompts = items
            .iter()
            .map(|(q, ps)| self.prompt_tokens(q, ps))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
        greedy(self.model, self.tokenizer, &refs, &self.options)
    }
}
