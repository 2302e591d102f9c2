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

/// eRAG-P@k's registry entry. Like UDCG it is computed by [`crate::evaluate_with`] from the
/// ranking's docnos and [`crate::EvalOptions::erag`], never from relevance levels.
pub static ERAG_P_FAMILY: crate::measures::Family = crate::measures::Family {
    name: "eRAG-P",
    formula: "eRAG-P@k = (1/k)·Σ_{i≤k} m(LLM(q, {p_i}), gold(q)), m = the downstream metric \
              (normalised substring match, exact match or ROUGE-L F1) of the answer generated \
              from passage p_i alone",
    source: "Salemi & Zamani, \"Evaluating Retrieval Quality in Retrieval-Augmented \
             Generation\", SIGIR 2024 (eRAG, precision aggregation)",
    explanation: "How many of the top-k passages make the reader LLM answer right on their own: \
                  the mean of each passage's downstream score (the answer generated from that \
                  passage alone, scored against the gold answers). Needs an eRAG outcomes file \
                  (ragscope answer --erag).",
    params: crate::measures::ParamKind::None,
    summary: crate::measures::Summary::Mean,
    per_query: true,
    integer: false,
    input: crate::measures::Input::Qrels,
    prefs_kernel: None,
    compute: never_from_relevance_levels,
};

/// eRAG-success@k's registry entry (see [`ERAG_P_FAMILY`]).
pub static ERAG_SUCCESS_FAMILY: crate::measures::Family = crate::measures::Family {
    name: "eRAG-success",
    formula: "eRAG-success@k = max_{i≤k} m(LLM(q, {p_i}), gold(q)) (0 for an empty list)",
    source: "Salemi & Zamani, \"Evaluating Retrieval Quality in Retrieval-Augmented \
             Generation\", SIGIR 2024 (eRAG, success aggregation)",
    explanation: "Whether some top-k passage alone makes the reader LLM answer right: the best \
                  per-passage downstream score. Needs an eRAG outcomes file (ragscope answer \
                  --erag).",
    params: crate::measures::ParamKind::None,
    summary: crate::measures::Summary::Mean,
    per_query: true,
    integer: false,
    input: crate::measures::Input::Qrels,
    prefs_kernel: None,
    compute: never_from_relevance_levels,
};

fn never_from_relevance_levels(
    _: &crate::measures::TopicEval,
    _: &crate::measures::Params,
    out: &mut [f64],
) {
    out.fill(f64::NAN);
}

/// eRAG@k of one ranked list of docnos (rank order, already cut by `-M`) against one question's
/// outcomes; a docno the outcomes cannot score counts 0 and is counted in `unscored`.
pub fn score_docnos<'a>(
    k: usize,
    ranked_docnos: impl IntoIterator<Item = &'a [u8]>,
    question: Option<&super::erag_outcomes::EragQuestion>,
    metric: super::answer_match::DownstreamMetric,
) -> QueryErag {
    let (mut sum, mut best, mut unscored) = (0.0, 0.0f64, 0);
    for docno in ranked_docnos.into_iter().take(k) {
        let s = std::str::from_utf8(docno)
            .ok()
            .and_then(|d| question?.score(d, metric));
        match s {
            Some(s) => {
                sum += s;
                best = best.max(s);
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
