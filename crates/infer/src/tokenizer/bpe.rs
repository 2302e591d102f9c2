//! Byte-level BPE (GPT-2 family) as llama.cpp's `llm_tokenizer_bpe_session`: pre-tokenize, map
//! each byte to its printable GPT-2 character, then merge the lowest-ranked adjacent pair
//! (leftmost on ties) until no listed merge applies.

use super::pretokenize::PreTokenizer;
use std::collections::HashMap;

#[derive(Debug)]
pub(crate) struct Bpe {
    pre: PreTokenizer,
    /// Merge rank keyed by "left right".
    ranks: HashMap<String, u32>,
    byte_chars: [char; 256],
    /// The inverse of `byte_chars`, for decoding.
    char_bytes: HashMap<char, u8>,
}

/// GPT-2's reversible byte → character map: printable Latin-1 bytes map to themselves, the other
/// bytes to U+0100 onwards in byte order.
fn byte_chars() -> [char; 256] {
    let mut map = ['\0'; 256];
    let mut n = 0u32;
    for b in 0..256u32 {
        let printable =
            (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        let cp = if printable {
            b
        } else {
            n += 1;
            255 + n
        };
        map[b as usize] = char::from_u32(cp).unwrap_or('\u{FFFD}');
    }
    map
}

impl Bpe {
    pub(crate) fn new(pre: PreTokenizer, merges: &[&str]) -> Result<Self, String> {
        let mut ranks = HashMap::with_capacity(merges.len());
        for (i, m) in merges.iter().enumerate() {
            // llama.cpp splits at the first space after position 0 (a merge may start with ' ').
            let (a, b) = match m.bytes().skip(1).position(|b| b == b' ') {
                Some(p) => (&m[..p + 1], &m[p + 2..]),
                None => ("", ""),
            };
            ranks.entry(format!("{a} {b}")).or_insert(i as u32);
        }
        let byte_chars = byte_chars();
        let char_bytes = (0..=255u8).map(|b| (byte_chars[b as usize], b)).collect();
        Ok(Bpe {
            pre,
            ranks,
            byte_chars,
            char_bytes,
        })
    }

    /// The bytes a normal token stands for (llama.cpp's `llama_decode_text`): each character maps
    /// back to its byte; a character outside the byte map is kept as UTF-8.
    pub(crate) fn decode_token(&self, text: &str, out: &mut Vec<u8>) {
        for ch in text.chars() {
            match self.char_bytes.get(&ch) {
                Some(&b) => out.push(b),
                None => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
    }

    pub(crate) fn encode(&self, text: &str, vocab: &HashMap<String, u32>, out: &mut Vec<u32>) {
        for (s, e) in self.pre.split(text) {
            let word: String = text[s..e]
                .bytes()
                .map(|b| self.byte_chars[b as usize])
                .collect();
            if self.pre.ignore_merges {
                if let Some(&id) = vocab.get(&word) {
                    out.push(id);
                    continue;
                }
            }
            for sym in self.merge(&word) {
                match vocab.get(sym) {
                    Some(&id) => out.push(id),
                    None => {
                        // llama.cpp falls back to single-byte strings of the encoded symbol and
                        // silently drops bytes it cannot find.
                        for b in sym.bytes() {
                            if let Some(&id) =
                                std::str::from_utf8(&[b]).ok().and_then(|s| vocab.get(s))
                            {
                                out.push(id);
                            }
                        }
                    }
                }
            }
        }
    }

    fn merge<'w>(&self, word: &'w str) -> Vec<&'w str> {
        let mut bounds: Vec<usize> = word.char_indices().map(|(i, _)| i).collect();
        bounds.push(word.len());
        let mut key = String::new();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for i in 0..bounds.len().saturating_sub(2) {
                let a = &word[bounds[i]..bounds[i + 1]];
                let b = &word[bounds[i + 1]..bounds[i + 2]];
                key.clear();
                key.push_str(a);
                key.push(' ');
                key.push_str(b);
                if let Some(&r) = self.ranks.get(key.as_str()) {
                    if best.is_none_or(|(br, _)| r < br) {
                        best = Some((r, i));
                    }
                }
            }
            match best {
                Some((_, i)) => {
                    bounds.remove(i + 1);
                }
                None => break,
            }
        }
        bounds.windows(2).map(|w| &word[w[0]..w[1]]).collect()
    }
}
