//! pytrec_eval's per-topic values from ragscope's trec_eval engine: the families and parameter
//! parsing of `ragscope trec-eval -m`, the ranking of `ragscope_eval::measures::topic`.

use ragscope_eval::measures::topic::ranked_rels;
use ragscope_eval::measures::{Input, RankingOptions, TopicEval};
use ragscope_eval::trec_eval::{init_measures, mark_measures, Selected};
use ragscope_eval::{Qrels, Run};

/// The families for trec_eval `-m` requests (`P.5,10`, `ndcg_cut`, `official`), in trec_eval's
/// table order, each with the names of its values (`P_5`, `P_10`). Only plain-qrels families:
/// pytrec_eval reads no judgment groups or preferences.
pub fn select(requests: &[String]) -> Result<Vec<Selected>, String> {
    // pytrec_eval computes nothing for no measures; trec_eval's `-m` would default to official
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let (marked, params) = mark_measures(requests).map_err(|e| e.message.trim().to_string())?;
    let selected = init_measures(&marked, &params).map_err(|e| e.message.trim().to_string())?;
    if let Some(u) = selected.iter().find(|s| s.family.name == "utility") {
        if u.params.fractions().len() != 4 {
            return Err("utility takes 4 coefficients (utility.a,b,c,d)".to_string());
        }
    }
    if let Some(s) = selected.iter().find(|s| s.family.input != Input::Qrels) {
        return Err(format!(
            "unsupported measure {} (it reads judgment groups or preferences)",
            s.family.name
        ));
    }
    Ok(selected)
}

/// Values of one scored topic, in the order of the selected families' names.
pub struct TopicValues {
    pub qid: String,
    pub values: Vec<f64>,
}

/// Scores every qrels topic that the run has (`run`) or lists with no documents
/// (`empty_in_run`, sorted), as pytrec_eval does: the topics of both, nothing else.
pub fn score(
    qrels: &Qrels,
    run: Option<&Run>,
    empty_in_run: &[String],
    selected: &[Selected],
    opts: &RankingOptions,
) -> Vec<TopicValues> {
    let mut scratch = Vec::new();
    let mut rels = Vec::new();
    let mut out = Vec::new();
    for qt in qrels.topics() {
        let qid = qt.qid();
        match run.and_then(|r| r.topic(qid).map(|t| (r, t))) {
            Some((run, rt)) => ranked_rels(run, rt, qt, opts, &mut scratch, &mut rels),
            // pytrec_eval scores such a topic as an empty ranking, as here, but leaves its
            // interpolated precisions uninitialised (NaN or 0.0) and crashes on `all_trec`;
            // here they are trec_eval's values for an empty ranking (REFERENCE.md §14)
            None if empty_in_run
                .binary_search_by(|q| q.as_str().cmp(qid))
                .is_ok() =>
            {
                rels.clear()
            }
            None => continue,
        }
        let t = TopicEval::new(
            &rels,
            qt.levels(),
            opts.relevance_level,
            opts.judged_only,
            opts.num_docs_in_coll,
        );
        let values = compute(&t, selected);
        out.push(TopicValues {
            qid: qid.to_string(),
            values,
        });
    }
    out
}

/// Every selected family's values on one topic, in order, with pytrec_eval's conventions.
pub fn compute(t: &TopicEval, selected: &[Selected]) -> Vec<f64> {
    let width: usize = selected.iter().map(|s| s.names.len()).sum();
    let mut values = Vec::with_capacity(width);
    for s in selected {
        let start = values.len();
        values.resize(start + s.names.len(), 0.0);
        (s.family.compute)(t, &s.params, &mut values[start..]);
        match s.family.name {
            // pytrec_eval gives its string-valued measures as 0.0
            "runid" | "relstring" => values[start..].iter_mut().for_each(|v| *v = 0.0),
            // and counts each topic once
            "num_q" => values[start] = 1.0,
            _ => {}
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_name_the_values_as_pytrec_eval_keys() {
        let s = select(&["P.5,10".to_string(), "ndcg_cut.3".to_string()]).unwrap();
        let names: Vec<&str> = s
            .iter()
            .flat_map(|s| s.names.iter())
            .map(|n| n.as_str())
            .collect();
        assert_eq!(names, ["P_5", "P_10", "ndcg_cut_3"]);
        assert!(select(&["nope".to_string()]).is_err());
        assert!(select(&["prefs_simp".to_string()]).is_err());
    }

    #[test]
    fn only_topics_of_both_are_scored() {
        let qrels = ragscope_eval::parse_qrels("q", b"1 0 a 1\n2 0 b 1\n3 0 c 1\n").unwrap();
        let run = ragscope_eval::parse_run("r", b"1 Q0 a 1 1 r\n4 Q0 a 1 1 r\n").unwrap();
        let s = select(&["P.1".to_string()]).unwrap();
        let out = score(
            &qrels,
            Some(&run),
            &["3".to_string()],
            &s,
            &RankingOptions::default(),
        );
        let got: Vec<(&str, f64)> = out.iter().map(|t| (t.qid.as_str(), t.values[0])).collect();
        assert_eq!(got, [("1", 1.0), ("3", 0.0)]);
    }
}
