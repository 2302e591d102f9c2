//! ROUGE-L F1 of one candidate against one reference: the per-item kernel of eRAG's ROUGE-L
//! downstream metric (the UDCG paper's baseline; Trappolini et al. 2025, §7.1).
//!
//! Formula (Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", 2004, §3.1, with
//! β = 1 as Google's `rouge-score` package computes `rougeL`):
//!
//! ```text
//! P = LCS(c, r) / |c|    R = LCS(c, r) / |r|    F1 = 2·P·R / (P + R)   (0 when LCS = 0)
//! ```
//!
//! over tokens as `rouge_score.tokenize` makes them without stemming: lowercase, every run of
//! characters other than `[a-z0-9]` is a separator, empty tokens dropped (so non-ASCII letters
//! separate tokens too). Checked against the PyPI `rouge-score` 0.1.2 package
//! (tests/oracle/rouge/generate.py).

/// `rouge_score`'s default tokenizer.
pub fn tokens(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Length of the longest common subsequence of two token lists (two-row dynamic programme).
pub fn lcs_len(a: &[String], b: &[String]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// ROUGE-L F1 of `candidate` against `reference`; 0 when either has no token.
pub fn rouge_l_f1(candidate: &str, reference: &str) -> f64 {
    let (c, r) = (tokens(candidate), tokens(reference));
    let l = lcs_len(&c, &r) as f64;
    if l == 0.0 {
        return 0.0;
    }
    let (p, rec) = (l / c.len() as f64, l / r.len() as f64);
    2.0 * p * rec / (p + rec)
}
