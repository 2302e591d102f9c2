//! Classic IR measures on one context with binary relevance (`is_relevant`), for the paper's
//! Table 3 baselines. Plain kernels over a relevance slice in context order; the lead later
//! unifies them with the trec_eval registry (same definitions as trec_eval with rel ∈ {0,1}).
//!
//! `judged_relevant` is the number of relevant passages judged for the question (trec_eval's
//! num_rel): it normalises nDCG and AP. Within a question it is a constant, so it never changes
//! the per-question correlations of the study.

/// nDCG@k = DCG/IDCG with gain rel ∈ {0,1} and discount log2(rank+1) (Järvelin & Kekäläinen
/// 2002; trec_eval `ndcg_cut`): IDCG puts min(judged_relevant, k) relevant passages first.
/// 0 when the question has no relevant passage.
pub fn ndcg(relevant: &[bool], judged_relevant: usize) -> f64 {
    let k = relevant.len();
    let ideal: f64 = (0..judged_relevant.min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    if ideal == 0.0 {
        return 0.0;
    }
    let dcg: f64 = relevant
        .iter()
        .enumerate()
        .filter(|(_, r)| **r)
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    dcg / ideal
}

/// Reciprocal rank of the first relevant passage, 0 when none (trec_eval `recip_rank`).
pub fn reciprocal_rank(relevant: &[bool]) -> f64 {
    relevant
        .iter()
        .position(|r| *r)
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Average precision: Σ over relevant ranks i of P@i, divided by `judged_relevant`
/// (trec_eval `map` on the context as the ranking). 0 when the question has no relevant passage.
pub fn average_precision(relevant: &[bool], judged_relevant: usize) -> f64 {
    if judged_relevant == 0 {
        return 0.0;
    }
    let mut found = 0usize;
    let mut sum = 0.0;
    for (i, r) in relevant.iter().enumerate() {
        if *r {
            found += 1;
            sum += found as f64 / (i + 1) as f64;
        }
    }
    sum / judged_relevant as f64
}

/// Precision@k = relevant passages / k (k = context length).
pub fn precision(relevant: &[bool]) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    relevant.iter().filter(|r| **r).count() as f64 / relevant.len() as f64
}

/// HITS@k (success@k): 1 if any passage of the context is relevant.
pub fn hits(relevant: &[bool]) -> f64 {
    f64::from(u8::from(relevant.iter().any(|r| *r)))
}
