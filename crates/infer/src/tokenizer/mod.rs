//! Tokenizers built from GGUF metadata, matching llama.cpp's `llama-vocab.cpp` token for token:
//! byte-level BPE (`tokenizer.ggml.model = gpt2`) with the pre-tokenizers real models use, and
//! SentencePiece-style BPE (`llama`) with `<0xXX>` byte fallback. Special and control tokens are
//! split out of the text first (llama.cpp's `tokenizer_st_partition`).

mod bpe;
pub mod chat;
mod pretokenize;
mod special;
mod spm;

use crate::error::{InferError, Result};
use crate::gguf::{GgufFile, MetadataValue};
use std::collections::HashMap;

pub use pretokenize::PreTokenizer;

/// llama.cpp's token attributes, from `tokenizer.ggml.token_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Undefined,
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

impl TokenKind {
    fn from_type(t: i64) -> Self {
        match t {
            1 => TokenKind::Normal,
            2 => TokenKind::Unknown,
            3 => TokenKind::Control,
            4 => TokenKind::UserDefined,
            5 => TokenKind::Unused,
            6 => TokenKind::Byte,
            _ => TokenKind::Undefined,
        }
    }
}

/// Tokens llama.cpp always treats as end-of-generation and therefore forces to CONTROL, even when a
/// converter marked them normal (llama-vocab.cpp, "auto-detect special tokens by text").
const FORCED_CONTROL: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "<|end_of_text|>",
    "<end_of_utterance>",
];

/// The byte of a SentencePiece byte token `<0xXX>`.
fn spm_byte(text: &str) -> Option<u8> {
    let hex = text.strip_prefix("<0x")?.strip_suffix('>')?;
    u8::from_str_radix(hex, 16).ok()
}

#[derive(Debug)]
enum Model {
    Bpe(Box<bpe::Bpe>),
    Spm(spm::Spm),
}

/// A tokenizer read from a GGUF file's `tokenizer.ggml.*` metadata.
#[derive(Debug)]
pub struct Tokenizer {
    model: Model,
    tokens: Vec<String>,
    kinds: Vec<TokenKind>,
    token_to_id: HashMap<String, u32>,
    special_cache: Vec<u32>,
    bos: Option<u32>,
    eos: Option<u32>,
    add_bos: bool,
    add_eos: bool,
    chat_template: Option<String>,
}

fn string_array<'a>(g: &'a GgufFile, key: &str) -> Result<Option<Vec<&'a str>>> {
    match g.get(key) {
        None => Ok(None),
        Some(MetadataValue::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().ok_or_else(|| {
                    InferError::metadata(
                        &g.file,
                        key,
                        format!("element {i} is a {}, expected a string", v.type_name()),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(v) => Err(InferError::metadata(
            &g.file,
            key,
            format!("expected an array of strings, found {}", v.type_name()),
        )),
    }
}

fn number_array(g: &GgufFile, key: &str, n: usize) -> Result<Option<Vec<f64>>> {
    match g.get(key) {
        None => Ok(None),
        Some(MetadataValue::Array(items)) => {
            if items.len() < n {
                return Err(InferError::metadata(
                    &g.file,
                    key,
                    format!("has {} entries for {n} tokens", items.len()),
                ));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_f64().ok_or_else(|| {
                        InferError::metadata(
                            &g.file,
                            key,
                            format!("element {i} is a {}, expected a number", v.type_name()),
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()
                .map(Some)
        }
        Some(v) => Err(InferError::metadata(
            &g.file,
            key,
            format!("expected an array, found {}", v.type_name()),
        )),
    }
}

impl Tokenizer {
    /// Builds the tokenizer llama.cpp would build for this file.
    pub fn from_gguf(g: &GgufFile) -> Result<Self> {
        let model_name = g
            .get_str("tokenizer.ggml.model")?
            .ok_or_else(|| InferError::metadata(&g.file, "tokenizer.ggml.model", "missing"))?;
        let tokens: Vec<String> = string_array(g, "tokenizer.ggml.tokens")?
            .ok_or_else(|| InferError::metadata(&g.file, "tokenizer.ggml.tokens", "missing"))?
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                if t.is_empty() {
                    format!("[EMPTY_{i}]")
                } else {
                    t.to_string()
                }
            })
            .collect();
        let n = tokens.len();
        if n == 0 || n > u32::MAX as usize {
            return Err(InferError::metadata(
                &g.file,
                "tokenizer.ggml.tokens",
                format!("{n} tokens"),
            ));
        }
        let mut token_to_id = HashMap::with_capacity(n);
        for (i, t) in tokens.iter().enumerate() {
            if let Some(prev) = token_to_id.insert(t.clone(), i as u32) {
                return Err(InferError::metadata(
                    &g.file,
                    "tokenizer.ggml.tokens",
                    format!("duplicate token {t:?} at ids {prev} and {i}"),
                ));
            }
        }
        let mut kinds: Vec<TokenKind> = match number_array(g, "tokenizer.ggml.token_type", n)? {
            Some(types) => types
                .iter()
                .take(n)
                .map(|&t| TokenKind::from_type(t as i64))
                .collect(),
            None => vec![TokenKind::Normal; n],
        };
        for text in FORCED_CONTROL {
            if let Some(&id) = token_to_id.get(*text) {
                kinds[id as usize] = TokenKind::Control;
            }
        }
        let scores = number_array(g, "tokenizer.ggml.scores", n)?;

        // Defaults per vocabulary kind, then per pre-tokenizer, then explicit metadata wins.
        let (model, default_bos, default_eos, mut add_bos) = match model_name {
            "gpt2" => {
                let pre_name = g.get_str("tokenizer.ggml.pre")?.unwrap_or("default");
                let pre = PreTokenizer::from_name(pre_name).ok_or_else(|| {
                    InferError::metadata(
                        &g.file,
                        "tokenizer.ggml.pre",
                        format!(
                            "unsupported pre-tokenizer '{pre_name}' (supported: {})",
                            PreTokenizer::NAMES.join(", ")
                        ),
                    )
                })?;
                let merges = string_array(g, "tokenizer.ggml.merges")?.ok_or_else(|| {
                    InferError::metadata(
                        &g.file,
                        "tokenizer.ggml.merges",
                        "missing (required for gpt2 tokenizers)",
                    )
                })?;
                let add_bos = pre.adds_bos_by_default();
                let bpe = bpe::Bpe::new(pre, &merges)
                    .map_err(|e| InferError::metadata(&g.file, "tokenizer.ggml.pre", e))?;
                (Model::Bpe(Box::new(bpe)), Some(11u32), Some(11u32), add_bos)
            }
            "llama" => {
                let add_space_prefix = g
                    .get_bool("tokenizer.ggml.add_space_prefix")?
                    .unwrap_or(true);
                let scores = scores.unwrap_or_else(|| vec![0.0; n]);
                (
                    Model::Spm(spm::Spm::new(
                        scores.iter().map(|&s| s as f32).collect(),
                        add_space_prefix,
                    )),
                    Some(1u32),
                    Some(2u32),
                    true,
                )
            }
            other => {
                return Err(InferError::metadata(
                    &g.file,
                    "tokenizer.ggml.model",
                    format!("unsupported tokenizer model '{other}' (supported: gpt2, llama)"),
                ))
            }
        };
        let in_range = |id: Option<u32>| id.filter(|&i| (i as usize) < n);
        let read_id = |key: &str, default: Option<u32>| -> Result<Option<u32>> {
            Ok(match g.get_u64(key)? {
                Some(id) if (id as usize) < n => Some(id as u32),
                _ => in_range(default),
            })
        };
        let bos = read_id("tokenizer.ggml.bos_token_id", default_bos)?;
        let eos = read_id("tokenizer.ggml.eos_token_id", default_eos)?;
        if let Some(v) = g.get_bool("tokenizer.ggml.add_bos_token")? {
            add_bos = v;
        }
        let add_eos = g.get_bool("tokenizer.ggml.add_eos_token")?.unwrap_or(false);
        if add_bos && bos.is_none() {
            return Err(InferError::metadata(
                &g.file,
                "tokenizer.ggml.add_bos_token",
                "is true but there is no BOS token",
            ));
        }
        if add_eos && eos.is_none() {
            return Err(InferError::metadata(
                &g.file,
                "tokenizer.ggml.add_eos_token",
                "is true but there is no EOS token",
            ));
        }
        let special_cache = special::special_cache(&tokens, &kinds);
        let chat_template = g.get_str("tokenizer.chat_template")?.map(str::to_string);
        Ok(Tokenizer {
            model,
            tokens,
            kinds,
            token_to_id,
            special_cache,
            bos,
            eos,
            add_bos,
            add_eos,
            chat_template,
        })
    }

    /// Token ids for `text`, like `llama_tokenize(text, add_special, parse_special)`:
    /// `add_special` adds BOS/EOS as the model asks; `parse_special` recognises control tokens
    /// written in the text (user-defined tokens are always recognised).
    pub fn encode(&self, text: &str, add_special: bool, parse_special: bool) -> Vec<u32> {
        let fragments = special::partition(
            text,
            &self.special_cache,
            &self.tokens,
            &self.kinds,
            parse_special,
        );
        let mut out = Vec::new();
        if add_special && self.add_bos {
            out.extend(self.bos);
        }
        match &self.model {
            Model::Bpe(bpe) => {
                for f in &fragments {
                    match *f {
                        special::Fragment::Text(s, e) => {
                            bpe.encode(&text[s..e], &self.token_to_id, &mut out)
                        }
                        special::Fragment::Token(id) => out.push(id),
                    }
                }
            }
            Model::Spm(spm) => {
                let mut prev_special = true;
                for f in &fragments {
                    match *f {
                        special::Fragment::Text(s, e) => {
                            spm.encode(&text[s..e], prev_special, &self.token_to_id, &mut out);
                            prev_special = false;
                        }
                        special::Fragment::Token(id) => {
                            out.push(id);
                            prev_special = true;
                        }
                    }
                }
            }
        }
        if add_special && self.add_eos {
            out.extend(self.eos);
        }
        out
    }

    pub fn n_vocab(&self) -> usize {
        self.tokens.len()
    }

    pub fn token_text(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    pub fn token_kind(&self, id: u32) -> Option<TokenKind> {
        self.kinds.get(id as usize).copied()
    }

    pub fn token_id(&self, text: &str) -> Option<u32> {
        self.token_to_id.get(text).copied()
    }

    pub fn bos(&self) -> Option<u32> {
        self.bos
    }

    pub fn eos(&self) -> Option<u32> {
        self.eos
    }

    pub fn add_bos(&self) -> bool {
        self.add_bos
    }

    /// Text of the BOS/EOS tokens, as chat templates receive them (`bos_token`, `eos_token`).
    pub fn bos_text(&self) -> &str {
        self.bos.and_then(|i| self.token_text(i)).unwrap_or("")
    }

    pub fn eos_text(&self) -> &str {
        self.eos.and_then(|i| self.token_text(i)).unwrap_or("")
    }

    /// Whether generation ends at this token (llama.cpp's `llama_vocab_is_eog`): the EOS token
    /// or one of the end-of-turn tokens llama.cpp detects by their text.
    pub fn is_end_of_generation(&self, id: u32) -> bool {
        Some(id) == self.eos
            || self
                .token_text(id)
                .is_some_and(|t| FORCED_CONTROL.contains(&t))
    }

    /// Appends the bytes token `id` stands for, as llama.cpp's `llama_token_to_piece` with
    /// `special = false`: control tokens write nothing, user-defined ones their text, byte
    /// tokens their byte, unknown ones U+2585; SentencePiece's U+2581 becomes a space.
    pub fn token_bytes(&self, id: u32, out: &mut Vec<u8>) {
        let (Some(text), Some(kind)) = (self.token_text(id), self.token_kind(id)) else {
            return;
        };
        match kind {
            TokenKind::Control | TokenKind::Unused | TokenKind::Undefined => {}
            TokenKind::Unknown => out.extend_from_slice("\u{2585}".as_bytes()),
            TokenKind::UserDefined => out.extend_from_slice(text.as_bytes()),
            TokenKind::Byte => match (&self.model, spm_byte(text)) {
                (Model::Spm(_), Some(b)) => out.push(b),
                (Model::Bpe(bpe), _) => bpe.decode_token(text, out),
                (Model::Spm(_), None) => out.extend_from_slice(text.as_bytes()),
            },
            TokenKind::Normal => match &self.model {
                Model::Bpe(bpe) => bpe.decode_token(text, out),
                Model::Spm(_) => out.extend_from_slice(text.replace('\u{2581}', " ").as_bytes()),
            },
        }
    }

    /// The text of a token sequence (pieces concatenated, invalid UTF-8 replaced), as
    /// llama-cpp-python's `detokenize`.
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut bytes = Vec::new();
        for &id in ids {
            self.token_bytes(id, &mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The `tokenizer.chat_template` metadata, if the file has one.
    pub fn chat_template(&self) -> Option<&str> {
        self.chat_template.as_deref()
    }
}
