//! Pre-tokenizer regexes for byte-level BPE, as llama.cpp's `llm_tokenizer_bpe` selects them from
//! `tokenizer.ggml.pre`. Each regex in a list splits every chunk produced by the previous one;
//! text between matches is kept as its own chunk (llama.cpp's `unicode_regex_split`).

use fancy_regex::Regex;

const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A named pre-tokenizer: an ordered list of splitting regexes plus llama.cpp's per-name flags.
#[derive(Debug)]
pub struct PreTokenizer {
    name: String,
    regexes: Vec<Regex>,
    /// The whole pre-token is emitted as one token when the vocabulary has it (Llama 3).
    pub(crate) ignore_merges: bool,
    adds_bos: bool,
}

impl PreTokenizer {
    /// The `tokenizer.ggml.pre` values this crate implements.
    pub const NAMES: &'static [&'static str] = &[
        "default",
        "llama-bpe",
        "llama3",
        "llama-v3",
        "qwen2",
        "deepseek-r1-qwen",
        "smollm",
        "gpt-2",
        "phi-2",
        "mpt",
        "olmo",
        "starcoder",
        "refact",
        "codeshell",
        "stablelm2",
    ];

    pub fn from_name(name: &str) -> Option<Self> {
        let (patterns, ignore_merges, adds_bos): (&[&str], bool, bool) = match name {
            "default" => (
                &[r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"],
                false,
                false,
            ),
            "llama-bpe" | "llama3" | "llama-v3" => (&[LLAMA3], true, true),
            "qwen2" | "deepseek-r1-qwen" | "stablelm2" => (&[QWEN2], false, false),
            "smollm" | "starcoder" | "refact" | "codeshell" => (&[r"\p{N}", GPT2], false, false),
            "gpt-2" | "phi-2" | "mpt" | "olmo" => (&[GPT2], false, false),
            _ => return None,
        };
        let regexes = patterns
            .iter()
            .map(|p| Regex::new(p))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        Some(PreTokenizer {
            name: name.to_string(),
            regexes,
            ignore_merges,
            adds_bos,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn adds_bos_by_default(&self) -> bool {
        self.adds_bos
    }

    /// Splits `text` into pre-tokens (byte ranges).
    pub fn split(&self, text: &str) -> Vec<(usize, usize)> {
        let mut chunks = vec![(0, text.len())];
        for re in &self.regexes {
            let mut next = Vec::with_capacity(chunks.len() * 2);
            for &(s, e) in &chunks {
                let piece = &text[s..e];
                let mut last = 0;
                for m in re.find_iter(piece) {
                    // A regex error here means backtracking limits were hit; keep the rest whole.
                    let Ok(m) = m else { break };
                    if m.start() > last {
                        next.push((s + last, s + m.start()));
                    }
                    if m.end() > m.start() {
                        next.push((s + m.start(), s + m.end()));
                    }
                    last = m.end();
                }
                if last < piece.len() {
                    next.push((s + last, e));
                }
            }
            chunks = next;
        }
        chunks
    }
}
