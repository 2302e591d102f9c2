//! relstring: the relevance of the top documents as a string (trec_eval m_relstring.c).
use super::topic::{NOT_POOLED, POOLED_UNJUDGED};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "relstring",
    formula: "one character per rank: 0-9 = rel, '>' = rel > 9, '-' = not pooled, '.' = pooled unjudged",
    source: "trec_eval 10.0, m_relstring.c",
    explanation: "The relevance of the first N (default 10) retrieved documents at a glance (per topic only).",
    params: ParamKind::Values(&[10.0]),
    summary: Summary::Nothing,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(_: &TopicEval, _: &Params, _: &mut [f64]) {}

/// The first `len` relevance values of the ranking as characters.
pub fn relstring(t: &TopicEval, len: f64) -> String {
    let len = (len as i64).min(t.num_ret as i64).max(0) as usize;
    t.rels[..len]
        .iter()
        .map(|&r| match r {
            r if r > 9 => '>',
            r if r >= 0 => char::from(b'0' + r as u8),
            NOT_POOLED => '-',
            POOLED_UNJUDGED => '.',
            _ => '<',
        })
        .collect()
}
