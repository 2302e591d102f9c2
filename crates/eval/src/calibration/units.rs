//! The units `ragscope calibrate` averages over, each with the judge's value and, where a human
//! labelled it, the human's.
//!
//! - Item (`--unit item`, for P@k and P(rel=r)@k): every (topic, document) a run ranks 1..k, on
//!   the topics the judge qrels hold. Ŷ = 1 if the judge's grade is ≥ r (a document the judge
//!   did not grade counts 0, as trec_eval counts it), Y = 1 if the human's grade is ≥ r, for the
//!   items the human qrels grade. The mean over items is P@k when every topic has k results.
//! - Query (`--unit query`, any measure): every topic of the run the judge qrels hold. Ŷ_q is
//!   the measure with the judge's qrels, Y_q with the human's, both computed by
//!   [`crate::evaluate`] (the code behind `ragscope eval`). A topic counts as labelled only if
//!   the human graded every document of the run's top k, so Y_q never scores a document the
//!   human did not see as non-relevant.

use crate::formats::{Qrels, Run};
use crate::measures::topic::rank;
use crate::measures::Measure;

/// Units of one run: `ids[i]` ("qid docno" or "qid"), the judge's value `judge[i]` and the
/// human's `human[i]` where labelled.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Units {
    pub ids: Vec<String>,
    pub judge: Vec<f64>,
    pub human: Vec<Option<f64>>,
    /// Items whose document the judge did not grade (scored 0).
    pub judge_missing: usize,
}

impl Units {
    /// (Y, Ŷ) of the labelled units, in unit order.
    pub fn labelled(&self) -> (Vec<f64>, Vec<f64>) {
        self.human
            .iter()
            .zip(&self.judge)
            .filter_map(|(h, j)| h.map(|h| (h, *j)))
            .unzip()
    }

    pub fn num_labelled(&self) -> usize {
        self.human.iter().filter(|h| h.is_some()).count()
    }
}

/// Item units of `run`'s top `k`, labels binarised at grade `level` (see the module doc).
pub fn item_units(run: &Run, judge: &Qrels, human: &Qrels, k: usize, level: i32) -> Units {
    let mut units = Units::default();
    let mut scratch = Vec::new();
    for topic in run.topics() {
        let Some(judged) = judge.topic(topic.qid()) else {
            continue;
        };
        let labels = human.topic(topic.qid());
        rank(run, topic, k, &mut scratch);
        for &(_, i) in &scratch {
            let docno = run.docno(&topic.docs()[i as usize]);
            let judge_rel = judged.rel(docno).filter(|r| *r >= 0);
            if judge_rel.is_none() {
                units.judge_missing += 1;
            }
            let binary = |r: i32| f64::from(u8::from(r >= level));
            units.judge.push(judge_rel.map_or(0.0, binary));
            units.human.push(
                labels
                    .and_then(|t| t.rel(docno))
                    .filter(|r| *r >= 0)
                    .map(binary),
            );
            units.ids.push(format!(
                "{} {}",
                topic.qid(),
                String::from_utf8_lossy(docno)
            ));
        }
    }
    units
}

/// Query units of `run` for `measure`; a topic is labelled when the human graded all of the
/// run's top `k` (see the module doc).
pub fn query_units(run: &Run, judge: &Qrels, human: &Qrels, measure: &Measure, k: usize) -> Units {
    let measures = std::slice::from_ref(measure);
    let by_judge = crate::evaluate(judge, run, measures);
    let by_human = crate::evaluate(human, run, measures);
    let human_value: std::collections::HashMap<&str, f64> = by_human.per_query(measure).collect();
    let mut units = Units::default();
    let mut scratch = Vec::new();
    for (qid, value) in by_judge.per_query(measure) {
        let labelled = match (human.topic(qid), run.topic(qid)) {
            (Some(labels), Some(topic)) => {
                rank(run, topic, k, &mut scratch);
                scratch.iter().all(|&(_, i)| {
                    labels
                        .rel(run.docno(&topic.docs()[i as usize]))
                        .is_some_and(|r| r >= 0)
                })
            }
            _ => false,
        };
        units.ids.push(qid.to_string());
        units.judge.push(value);
        units
            .human
            .push(labelled.then(|| human_value.get(qid).copied()).flatten());
    }
    units
}

/// Query units of a nugget-scored run: the topics the judge's assignments score, Ŷ_q the
/// judge's `score` (A, A_strict, V, V_strict, W, W_strict or L; see
/// [`crate::answers::nugget_scores`]) and Y_q the human's for the topics the human's
/// assignments of the same run hold. `None` for an unknown score name.
pub fn nugget_units(
    judge: &crate::answers::nugget_scores::RunScores,
    human: &crate::answers::nugget_scores::RunScores,
    score: &str,
) -> Option<Units> {
    let human_value: std::collections::HashMap<&str, Option<f64>> = human
        .topics
        .iter()
        .map(|t| (t.qid.as_str(), t.scores.get(score)))
        .collect();
    let mut units = Units::default();
    for t in &judge.topics {
        units.ids.push(t.qid.clone());
        units.judge.push(t.scores.get(score)?);
        units
            .human
            .push(human_value.get(t.qid.as_str()).copied().flatten());
    }
    Some(units)
}

/// Units of a pairwise win rate: every game the judge played between agents `first` and
/// `second` (either order, one unit per game), valued as `first`'s score (win 1, tie ½, loss
/// 0, RAGElo's mapping; see [`crate::answers::games`]); the human's value for the games the
/// human judged with the same query and order. Ids are "qid agent_a agent_b". `Err` names a
/// game the human judged twice (its value would be ambiguous).
pub fn pairwise_units(
    judge: &crate::answers::games::Games,
    human: &crate::answers::games::Games,
    first: &str,
    second: &str,
) -> Result<Units, String> {
    use crate::answers::games::Games;
    let key = |g: &Games, game: &crate::answers::games::Game| {
        (
            g.queries[game.query].clone(),
            g.agents[game.a].clone(),
            g.agents[game.b].clone(),
        )
    };
    let mut human_verdict = std::collections::HashMap::new();
    for game in &human.games {
        let k = key(human, game);
        if human_verdict.insert(k.clone(), game.verdict).is_some() {
            return Err(format!(
                "the game of '{}' against '{}' on query '{}' is judged twice",
                k.1, k.2, k.0
            ));
        }
    }
    let mut units = Units::default();
    for game in &judge.games {
        let (qid, a, b) = key(judge, game);
        let score = |v: crate::answers::games::Verdict| {
            if a == first {
                v.score_a()
            } else {
                v.swapped().score_a()
            }
        };
        if !((a == first && b == second) || (a == second && b == first)) {
            continue;
        }
        units.judge.push(score(game.verdict));
        let h = human_verdict.get(&(qid.clone(), a.clone(), b.clone()));
        units.human.push(h.map(|v| score(*v)));
        units.ids.push(format!("{qid} {a} {b}"));
    }
    Ok(units)
}
