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
