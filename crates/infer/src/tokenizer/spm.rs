//! SentencePiece-style BPE (`tokenizer.ggml.model = llama`) as llama.cpp's
//! `llm_tokenizer_spm_session`: spaces become U+2581, a space is prefixed after BOS/special
//! tokens, adjacent symbols merge by highest token score (leftmost on ties), and symbols that are
//! not tokens are emitted as `<0xXX>` byte tokens.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

#[derive(Debug)]
pub(crate) struct Spm {
    scores: Vec<f32>,
    add_space_prefix: bool,
}

#[derive(Clone, Copy)]
struct Symbol {
    prev: isize,
    next: isize,
    start: usize,
    len: usize,
}

struct Bigram {
    left: usize,
    right: usize,
    score: f32,
    size: usize,
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Bigram {}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Bigram {
    // Max-heap: higher score first, then the leftmost pair.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
    }
}

impl Spm {
    pub(crate) fn new(scores: Vec<f32>, add_space_prefix: bool) -> Self {
        Spm {
            scores,
            add_space_prefix,
        }
    }

    pub(crate) fn encode(
        &self,
        fragment: &str,
        prev_special: bool,
        vocab: &HashMap<String, u32>,
        out: &mut Vec<u32>,
    ) {
        let mut text = String::with_capacity(fragment.len() + 3);
        if self.add_space_prefix && prev_special {
            text.push(' ');
        }
        text.push_str(fragment);
        let text = text.replace(' ', "\u{2581}");
        if text.is_empty() {
            return;
        }
        let mut symbols: Vec<Symbol> = Vec::new();
        let offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for (k, &start) in offsets.iter().enumerate() {
            let end = offsets.get(k + 1).copied().unwrap_or(text.len());
            symbols.push(Symbol {
                prev: k as isize - 1,
                next: if end == text.len() {
                    -1
                } else {
                    k as isize + 1
                },
                start,
                len: end - start,
            });
        }
        let mut heap = BinaryHeap::new();
        let try_add = |l: isize, r: isize, symbols: &[Symbol], heap: &mut BinaryHeap<Bigram>| {
            if l < 0 || r < 0 {
                return;
            }
            let (l, r) = (l as usize, r as usize);
            let piece = &text[symbols[l].start..symbols[l].start + symbols[l].len + symbols[r].len];
            if let Some(&id) = vocab.get(piece) {
                if let Some(&score) = self.scores.get(id as usize) {
                    heap.push(Bigram {
                        left: l,
                        right: r,
                        score,
                        size: piece.len(),
                    });
                }
            }
        };
        for i in 1..symbols.len() {
            try_add(i as isize - 1, i as isize, &symbols, &mut heap);
        }
        while let Some(bg) = heap.pop() {
            let (l, r) = (symbols[bg.left], symbols[bg.right]);
            if l.len == 0 || r.len == 0 || l.len + r.len != bg.size {
                continue;
            }
            symbols[bg.left].len += r.len;
            symbols[bg.right].len = 0;
            symbols[bg.left].next = r.next;
            if r.next >= 0 {
                symbols[r.next as usize].prev = bg.left as isize;
            }
            let left = symbols[bg.left];
            try_add(left.prev, bg.left as isize, &symbols, &mut heap);
            try_add(bg.left as isize, left.next, &symbols, &mut heap);
        }
        // A merged symbol is always a vocabulary token (pairs are only queued when their text is
        // one), so llama.cpp's re-segmentation reduces to: token, or else its bytes.
        let mut i: isize = 0;
        while i >= 0 {
            let s = symbols[i as usize];
            let piece = &text[s.start..s.start + s.len];
            match vocab.get(piece) {
                Some(&id) => out.push(id),
                None => self.bytes(piece, vocab, out),
            }
            i = s.next;
        }
    }

    fn bytes(&self, piece: &str, vocab: &HashMap<String, u32>, out: &mut Vec<u32>) {
        for b in piece.bytes() {
            let hex = format!("<0x{b:02X}>");
            if let Some(&id) = vocab.get(&hex) {
                out.push(id);
            } else if let Some(&id) = std::str::from_utf8(&[b]).ok().and_then(|s| vocab.get(s)) {
                out.push(id);
            }
        }
    }
}
