//! Splitting special tokens out of raw text before the model tokenizer runs, as llama.cpp's
//! `tokenizer_st_partition` does: longest special tokens first, each one splitting every
//! remaining text fragment at all of its (non-overlapping, left-to-right) occurrences.

use super::TokenKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fragment {
    /// Byte range of the input text.
    Text(usize, usize),
    Token(u32),
}

/// Control, user-defined and unknown tokens, longest text first (ties keep id order).
pub(crate) fn special_cache(tokens: &[String], kinds: &[TokenKind]) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..tokens.len() as u32)
        .filter(|&i| {
            matches!(
                kinds[i as usize],
                TokenKind::Control | TokenKind::UserDefined | TokenKind::Unknown
            )
        })
        .collect();
    ids.sort_by_key(|&i| std::cmp::Reverse(tokens[i as usize].len()));
    ids
}

pub(crate) fn partition(
    text: &str,
    cache: &[u32],
    tokens: &[String],
    kinds: &[TokenKind],
    parse_special: bool,
) -> Vec<Fragment> {
    let mut frags = if text.is_empty() {
        Vec::new()
    } else {
        vec![Fragment::Text(0, text.len())]
    };
    for &id in cache {
        let kind = kinds[id as usize];
        if !parse_special && matches!(kind, TokenKind::Control | TokenKind::Unknown) {
            continue;
        }
        let needle = tokens[id as usize].as_str();
        if needle.is_empty() {
            continue;
        }
        let mut next = Vec::with_capacity(frags.len());
        for f in frags {
            match f {
                Fragment::Token(_) => next.push(f),
                Fragment::Text(mut s, e) => {
                    while let Some(pos) = text[s..e].find(needle) {
                        let m = s + pos;
                        if m > s {
                            next.push(Fragment::Text(s, m));
                        }
                        next.push(Fragment::Token(id));
                        s = m + needle.len();
                    }
                    if s < e {
                        next.push(Fragment::Text(s, e));
                    }
                }
            }
        }
        frags = next;
    }
    frags
}
