//! Scoring a run while it is parsed (natively, for a run file held whole; see
//! [`crate::formats::parse_handing_out`]): the thread that parses the qrels then scores the
//! topics the run's parser hands out.
//!
//! The output is the stored path's byte for byte, errors included: everything that could fail
//! before scoring is checked first ([`Plan`]; otherwise the run is stored as before), a drained
//! topic's repeated docno is reported by the parser's `finish` in qid order, scores are printed
//! in qrels order whatever order they came in, and a run whose topics interleave (a drained
//! topic comes back) is parsed again the stored way.

use super::Scored;
#[cfg(not(target_arch = "wasm32"))]
use {
    super::measures::Selected,
    super::{Args, Context, RelInfo, TopicBuffers, TrecEvalError},
    crate::formats::{parse_handing_out, Input as Opened, Parsed, Run, SharedBytes},
    crate::measures::RankingOptions,
};

/// The values of the topics scored while the run was parsed.
pub(super) struct Streamed {
    scored: Scored,
    /// Per qrels topic, its place in `scored` (in the order the topics were scored).
    at: Vec<Option<usize>>,
    /// Topics scored so far (on wasm32 nothing is scored while parsed).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    count: usize,
}

impl Streamed {
    /// Appends the values (and relstring) of qrels topic `topic` to `out` if it was scored
    /// here; `false` if not.
    pub(super) fn copy_to(&self, topic: usize, width: usize, out: &mut Scored) -> bool {
        let Some(k) = self.at.get(topic).copied().flatten() else {
            return false;
        };
        out.values
            .extend_from_slice(&self.scored.values[k * width..(k + 1) * width]);
        if let Some(text) = self.scored.relstrings.get(k) {
            out.relstrings.push(text.clone());
        }
        true
    }
}

/// What scoring needs, settled before the run is read. `None` where the stored path must run:
/// other rel_info or results formats, `-Z` (its file is read after the run), or measures that
/// fail to initialise (their error comes after the run's).
#[cfg(not(target_arch = "wasm32"))]
pub(super) struct Plan<'a> {
    selected: &'a [Selected],
    opts: &'a RankingOptions,
}

#[cfg(not(target_arch = "wasm32"))]
impl<'a> Plan<'a> {
    pub(super) fn new(
        args: &Args,
        plain_qrels: bool,
        selected: Option<&'a [Selected]>,
        opts: &'a RankingOptions,
    ) -> Option<Plan<'a>> {
        let results_format = args.results_format.as_deref().unwrap_or("trec_results");
        if !plain_qrels || results_format != "trec_results" || args.zscore_file.is_some() {
            return None;
        }
        Some(Plan {
            selected: selected?,
            opts,
        })
    }
}

/// Parses the qrels (held whole) on a second thread, which then scores the run's topics as the
/// parser here hands them out. Returns what the stored path's qrels and run reading return,
/// the run with only the topics not scored yet, and the scores of the others.
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::type_complexity)]
pub(super) fn read_and_score(
    (qrels_name, qrels_bytes): (&str, SharedBytes),
    (run_name, run_bytes): (&str, SharedBytes),
    args: &Args,
    plan: &Plan,
) -> (
    Result<RelInfo, TrecEvalError>,
    Result<(Run, Option<Streamed>), TrecEvalError>,
) {
    let prepare = || {
        let qrels = super::parse_rel_info_whole(qrels_name, &qrels_bytes, super::RelFormat::Qrels);
        let scoring = match &qrels {
            Ok(info) if super::check_formats(info, plan.selected).is_ok() => {
                let streamed = Streamed {
                    scored: Scored::default(),
                    at: vec![None; info.topics.len()],
                    count: 0,
                };
                Some((streamed, TopicBuffers::new(plan.selected)))
            }
            _ => None,
        };
        (qrels, scoring)
    };
    let score = |(qrels, scoring): &mut (Result<RelInfo, TrecEvalError>, Option<_>), part: &Run| {
        let scored = match (qrels, scoring.as_mut()) {
            (Ok(info), Some(scoring)) => score_part(args, info, plan, scoring, part),
            _ => false,
        };
        if !scored {
            *scoring = None;
        }
        scored
    };
    let ((qrels, scoring), parsed) = parse_handing_out(run_name, &run_bytes, prepare, score);
    let streamed = scoring.map(|(streamed, _)| streamed);
    let run = match (&qrels, parsed, streamed) {
        (Err(_), _, _) => Err(TrecEvalError::after_qrels_error()),
        (Ok(_), Parsed::Failed(e), _) => Err(super::bad_run(run_name, e)),
        (Ok(_), Parsed::Rest(rest), Some(streamed)) => Ok((rest, Some(streamed))),
        // Topics were handed out and not scored (their topics did not fit the measures: that
        // error comes first), or a handed-out topic came back: the run is parsed again and
        // kept whole, so every error and score is the stored path's.
        _ => super::read_opened_run(run_name, Ok(Opened::Whole(run_bytes))).map(|run| (run, None)),
    };
    (qrels, run)
}

/// Scores each topic handed out (those of the qrels; others are ignored, as trec_eval does).
/// `false` once a topic fails to score (it cannot with plain qrels): the run is then parsed
/// again and scored the stored way, which reports it in qrels order.
#[cfg(not(target_arch = "wasm32"))]
fn score_part(
    args: &Args,
    qrels: &RelInfo,
    plan: &Plan,
    (streamed, buffers): &mut (Streamed, TopicBuffers),
    part: &Run,
) -> bool {
    let ctx = Context {
        args,
        qrels,
        selected: plan.selected,
        opts: plan.opts,
        zscores: None,
        width: plan.selected.iter().map(|s| s.names.len()).sum(),
        streamed: None,
    };
    for topic in part.topics() {
        let qid = topic.qid().as_bytes();
        let Ok(index) = qrels
            .topics
            .binary_search_by(|(q, _)| q.as_bytes().cmp(qid))
        else {
            continue;
        };
        let scored = super::score_topic(
            &ctx,
            index,
            part,
            Some(topic),
            buffers,
            &mut streamed.scored,
        );
        if scored.is_err() {
            return false;
        }
        streamed.at[index] = Some(streamed.count);
        streamed.count += 1;
    }
    true
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
