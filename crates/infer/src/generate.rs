//! Greedy decoding on the CPU engine: one prefill per prompt (the same pass utilities use, keeping
//! its KV cache), then one batched decoding step per new token for every prompt still running.
//! The next token is the arg-max of the logits (the first on ties, as llama.cpp's greedy
//! sampler); a prompt stops at an end-of-generation token, at a stop string, at
//! `max_new_tokens`, or when its context window is full.

use crate::error::Result;
use crate::model::{KvCache, Model};
use crate::tokenizer::Tokenizer;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreedyOptions {
    pub max_new_tokens: usize,
    /// Generation stops once the text contains one of these; the text is cut before it.
    pub stop: Vec<String>,
}

impl Default for GreedyOptions {
    /// 64 tokens, stop at a newline: the lost-in-the-middle scorer keeps only the first line of
    /// an answer, so nothing after it could change the outcome.
    fn default() -> Self {
        GreedyOptions {
            max_new_tokens: 64,
            stop: vec!["\n".to_string()],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// An end-of-generation token (not included in the tokens).
    Eos,
    /// A stop string appeared (the token that completed it is included; the text is cut).
    Stop,
    MaxTokens,
    /// The context window is full.
    Context,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub tokens: Vec<u32>,
    pub text: String,
    pub reason: StopReason,
}

/// Index of the largest logit, the first one on ties.
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &v) in logits.iter().enumerate() {
        if v > logits[best] {
            best = i;
        }
    }
    best as u32
}

struct Running {
    tokens: Vec<u32>,
    bytes: Vec<u8>,
    done: Option<StopReason>,
    /// Bytes of the text up to the first stop string, once one appeared.
    cut: Option<usize>,
}

/// Position of the first stop string in `bytes`, searching only where a string ending in the
/// last `new` bytes could start.
fn find_stop(bytes: &[u8], new: usize, stop: &[String]) -> Option<usize> {
    stop.iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let s = s.as_bytes();
            let from = bytes.len().saturating_sub(new + s.len() - 1);
            bytes[from..]
                .windows(s.len())
                .position(|w| w == s)
                .map(|p| from + p)
        })
        .min()
}

/// The stopping rules of greedy decoding, shared by the CPU engine and the GPU backend: each
/// step, every running sequence gets its next token (the arg-max, computed by the engine) and
/// this decides whether it stops or is fed back.
pub struct Decoding<'a> {
    tokenizer: &'a Tokenizer,
    options: &'a GreedyOptions,
    context: usize,
    runs: Vec<Running>,
}

impl<'a> Decoding<'a> {
    pub fn new(
        tokenizer: &'a Tokenizer,
        options: &'a GreedyOptions,
        context: usize,
        n: usize,
    ) -> Self {
        Decoding {
            tokenizer,
            options,
            context,
            runs: (0..n)
                .map(|_| Running {
                    tokens: Vec::new(),
                    bytes: Vec::new(),
                    done: None,
                    cut: None,
                })
                .collect(),
        }
    }

    /// Takes the next token of each sequence in `active` (`tokens[i]` for `active[i]`, whose
    /// cache holds `cached(active[i])` positions); returns the sequences still running and the
    /// tokens to feed them, in the same order.
    pub fn accept(
        &mut self,
        active: &[usize],
        tokens: &[u32],
        cached: impl Fn(usize) -> usize,
    ) -> (Vec<usize>, Vec<u32>) {
        let mut next = Vec::with_capacity(active.len());
        let mut still = Vec::with_capacity(active.len());
        for (&s, &tok) in active.iter().zip(tokens) {
            let run = &mut self.runs[s];
            if self.options.max_new_tokens == 0 {
                run.done = Some(StopReason::MaxTokens);
                continue;
            }
            if self.tokenizer.is_end_of_generation(tok) {
                run.done = Some(StopReason::Eos);
                continue;
            }
            run.tokens.push(tok);
            let before = run.bytes.len();
            self.tokenizer.token_bytes(tok, &mut run.bytes);
            if let Some(at) = find_stop(&run.bytes, run.bytes.len() - before, &self.options.stop) {
                run.cut = Some(at);
                run.done = Some(StopReason::Stop);
            } else if run.tokens.len() >= self.options.max_new_tokens {
                run.done = Some(StopReason::MaxTokens);
            } else if cached(s) >= self.context {
                run.done = Some(StopReason::Context);
            } else {
                next.push(tok);
                still.push(s);
            }
        }
        (still, next)
    }

    /// Tokens generated so far by sequence `s`.
    pub fn generated(&self, s: usize) -> usize {
        self.runs[s].tokens.len()
    }

    pub fn finish(self) -> Vec<Generation> {
        self.runs
            .into_iter()
            .map(|r| {
                let end = r.cut.unwrap_or(r.bytes.len());
                Generation {
                    text: String::from_utf8_lossy(&r.bytes[..end]).into_owned(),
                    tokens: r.tokens,
                    reason: r.done.unwrap_or(StopReason::MaxTokens),
                }
            })
            .collect()
    }
}

/// Greedy answers for a batch of tokenized prompts, on the model's backend when it decodes (the
/// GPU backend), else on the CPU engine.
pub fn greedy(
    model: &Model,
    tokenizer: &Tokenizer,
    prompts: &[&[u32]],
    options: &GreedyOptions,
) -> Result<Vec<Generation>> {
    if let Some(b) = model.backend() {
        model.check_prompts(prompts, &[])?;
        if let Some(out) = b.greedy(model, tokenizer, prompts, options) {
            return out;
        }
    }
    greedy_cpu(model, tokenizer, prompts, options)
}

/// Greedy answers on the CPU engine, whatever backend is set.
pub fn greedy_cpu(
    model: &Model,
    tokenizer: &Tokenizer,
    prompts: &[&[u32]],
    options: &GreedyOptions,
) -> Result<Vec<Generation>> {
    let (first, mut caches) = model.prefill_cached(prompts)?;
    let mut dec = Decoding::new(
        tokenizer,
        options,
        model.config.context_length,
        prompts.len(),
    );
    let mut logits = first.last_logits;
    // Sequences still running, as indices into the prompts, and their logits in the same order.
    let mut active: Vec<usize> = (0..prompts.len()).collect();
    while !active.is_empty() {
        let best: Vec<u32> = logits.iter().map(|l| argmax(l)).collect();
        let (still, next) = dec.accept(&active, &best, |s| caches[s].len());
        if still.is_empty() {
            break;
        }
        let mut step: Vec<&mut KvCache> = Vec::with_capacity(still.len());
        let mut wanted = still.iter().peekable();
        for (s, cache) in caches.iter_mut().enumerate() {
            if wanted.peek() == Some(&&s) {
                wanted.next();
                step.push(cache);
            }
        }
        logits = model.decode_step(&mut step, &next)?;
        active = still;
    }
    Ok(dec.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_the_first_maximum() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[-1.0]), 0);
    }

    #[test]
    fn stop_strings_are_found_across_token_boundaries() {
        let stop = vec!["\n".to_string(), "##".to_string()];
        assert_eq!(find_stop(b"Paris\n", 1, &stop), Some(5));
        assert_eq!(find_stop(b"a#", 1, &stop), None);
        assert_eq!(find_stop(b"a##", 1, &stop), Some(1));
        assert_eq!(find_stop(b"abc", 3, &[String::new()]), None);
    }
}
