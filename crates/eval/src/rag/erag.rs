//! eRAG (Salemi & Zamani, "Evaluating Retrieval Quality in Retrieval-Augmented Generation",
//! SIGIR 2024): each passage is scored by the downstream metric of the answer the LLM generates
//! from that passage alone (a value in [0, 1]); a context is then scored by an IR aggregate of
//! those per-passage scores over the cutoff.

/// eRAG precision: mean of the per-passage downstream scores of the context (cutoff = context
/// length); 0 for an empty context.
pub fn erag_precision(scores: &[f64]) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    scores.iter().sum::<f64>() / scores.len() as f64
}

/// eRAG success: maximum per-passage downstream score in the context; 0 for an empty context.
pub fn erag_success(scores: &[f64]) -> f64 {
    scores.iter().copied().fold(0.0, f64::max)
}

/// Per-query eRAG over a ranked list of docnos cut at k, for the measure registry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryErag {
    /// Mean downstream score of the top k (denominator k, like P@k).
    pub precision: f64,
    /// Best downstream score in the top k.
    pub success: f64,
    /// Docnos in the top k without a downstream score (they count as 0; callers report them).
    pub unscored: usize,
}

pub fn erag_at_k<S: AsRef<str>>(
    ranked_docnos: &[S],
    scores: &std::collections::HashMap<String, f64>,
    k: usize,
) -> QueryErag {
    let (mut sum, mut best, mut unscored) = (0.0, 0.0f64, 0);
    for docno in ranked_docnos.iter().take(k) {
        match scores.get(docno.as_ref()) {
            Some(s) => {
                sum += s;
                best = best.max(*s);
            }
            None => unscored += 1,
        }
    }
    QueryErag {
        precision: if k == 0 { 0.0 } else { sum / k as f64 },
        success: best,
        unscored,
    }
}
