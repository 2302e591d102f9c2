//! The fast evaluation path against a plain, obviously-correct per-topic implementation,
//! on random runs full of tied scores and random graded / negative qrels.

use std::collections::BTreeMap;

use proptest::prelude::*;
use ragscope_eval::{evaluate, parse_qrels, parse_run, Measure};

#[derive(Debug, Clone)]
struct Case {
    /// qid -> [(docno, score)]
    run: BTreeMap<String, Vec<(String, f64)>>,
    /// qid -> [(docno, rel)]
    qrels: BTreeMap<String, Vec<(String, i32)>>,
}

fn case() -> impl Strategy<Value = Case> {
    let topic_ids = proptest::sample::subsequence(vec!["1", "2", "10", "q"], 1..=4);
    topic_ids
        .prop_flat_map(|qids| {
            let per_topic = qids
                .iter()
                .map(|q| {
                    let docs = proptest::sample::subsequence((0..40).collect::<Vec<u32>>(), 0..30);
                    let scores = proptest::collection::vec(
                        prop_oneof![
                            Just(0.0),
                            Just(0.5),
                            Just(1.0),
                            Just(2.0),
                            Just(-1.0),
                            0.0..3.0f64
                        ],
                        30,
                    );
                    let judged =
                        proptest::sample::subsequence((0..40).collect::<Vec<u32>>(), 1..25);
                    let rels = proptest::collection::vec(-1i32..=3, 25);
                    let in_run = any::<bool>();
                    (Just(q.to_string()), docs, scores, judged, rels, in_run)
                })
                .collect::<Vec<_>>();
            per_topic
        })
        .prop_map(|topics| {
            let mut run = BTreeMap::new();
            let mut qrels = BTreeMap::new();
            for (qid, docs, scores, judged, rels, in_run) in topics {
                if in_run || run.is_empty() {
                    run.insert(
                        qid.clone(),
                        docs.iter()
                            .zip(&scores)
                            .map(|(d, s)| (format!("d{d}"), *s))
                            .collect(),
                    );
                }
                qrels.insert(
                    qid,
                    judged
                        .iter()
                        .zip(&rels)
                        .map(|(d, r)| (format!("d{d}"), *r))
                        .collect(),
                );
            }
            Case { run, qrels }
        })
}

fn run_text(c: &Case) -> String {
    let mut s = String::new();
    for (q, docs) in &c.run {
        for (i, (d, score)) in docs.iter().enumerate() {
            s.push_str(&format!("{q} Q0 {d} {} {score} tag\n", i + 1));
        }
    }
    if s.is_empty() {
        s.push_str("zz Q0 dz 1 1 tag\n");
    }
    s
}

fn qrels_text(c: &Case) -> String {
    let mut s = String::new();
    for (q, docs) in &c.qrels {
        for (d, rel) in docs {
            s.push_str(&format!("{q}\t0\t{d}\t{rel}\n"));
        }
    }
    s
}

/// The plain definition of every measure, one topic at a time.
fn reference(
    measure: &str,
    level: i32,
    ranking: &[(String, f64)],
    judged: &[(String, i32)],
) -> f64 {
    let mut ranked: Vec<&(String, f64)> = ranking.iter().collect();
    // score descending, then docno descending (trec_eval's tie rule)
    ranked.sort_by(|a, b| b.1.partial_cmp(&a.1).expect("no NaN").then(b.0.cmp(&a.0)));
    let rel_of = |d: &str| judged.iter().find(|(j, _)| j == d).map(|(_, r)| *r);
    let rels: Vec<Option<i32>> = ranked.iter().map(|(d, _)| rel_of(d)).collect();
    let is_rel = |r: &Option<i32>| matches!(r, Some(x) if *x >= level);
    let big_r = judged.iter().filter(|(_, r)| *r >= level).count() as f64;
    let rel_in = |k: usize| rels.iter().take(k).filter(|r| is_rel(r)).count() as f64;
    let (name, k) = match measure.split_once('@') {
        Some((n, k)) => (n, k.parse::<usize>().expect("cutoff")),
        None => (measure, usize::MAX),
    };
    match name {
        "P" => rel_in(k) / k as f64,
        "R" => {
            if big_r > 0.0 {
                rel_in(k) / big_r
            } else {
                0.0
            }
        }
        "Success" => {
            if rel_in(k) > 0.0 {
                1.0
            } else {
                0.0
            }
        }
        "MAP" => {
            if big_r == 0.0 {
                return 0.0;
            }
            let mut found = 0.0;
            let mut sum = 0.0;
            for (i, r) in rels.iter().take(k).enumerate() {
                if is_rel(r) {
                    found += 1.0;
                    sum += found / (i + 1) as f64;
                }
            }
            sum / big_r
        }
        "MRR" => rels
            .iter()
            .position(is_rel)
            .map(|i| 1.0 / (i + 1) as f64)
            .unwrap_or(0.0),
        "Rprec" => {
            if big_r > 0.0 {
                rel_in(big_r as usize) / big_r
            } else {
                0.0
            }
        }
        "nDCG" => {
            let gain = |r: i32| if r > 0 { r as f64 } else { 0.0 };
            let dcg: f64 = rels
                .iter()
                .take(k)
                .enumerate()
                .map(|(i, r)| gain(r.unwrap_or(0)) / ((i + 2) as f64).log2())
                .fold(0.0, |a, b| a + b);
            let mut ideal: Vec<i32> = judged.iter().map(|(_, r)| *r).filter(|r| *r > 0).collect();
            ideal.sort_unstable_by(|a, b| b.cmp(a));
            let idcg: f64 = ideal
                .iter()
                .take(k)
                .enumerate()
                .map(|(i, r)| gain(*r) / ((i + 2) as f64).log2())
                .fold(0.0, |a, b| a + b);
            if idcg > 0.0 {
                dcg / idcg
            } else {
                0.0
            }
        }
        "bpref" => {
            let n = judged.iter().filter(|(_, r)| *r >= 0 && *r < level).count() as f64;
            let mut nonrel_above: f64 = 0.0;
            let mut sum = 0.0;
            for r in &rels {
                match r {
                    Some(x) if *x >= level => {
                        sum += if nonrel_above > 0.0 {
                            1.0 - nonrel_above.min(big_r) / n.min(big_r)
                        } else {
                            1.0
                        };
                    }
                    Some(x) if *x >= 0 => nonrel_above += 1.0,
                    _ => {}
                }
            }
            if big_r > 0.0 {
                sum / big_r
            } else {
                0.0
            }
        }
        other => panic!("no reference for {other}"),
    }
}

const MEASURES: &[&str] = &[
    "P@5",
    "P@1",
    "R@10",
    "Success@3",
    "MAP",
    "MAP@5",
    "MRR",
    "Rprec",
    "nDCG",
    "nDCG@10",
    "nDCG@3",
    "bpref",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn fast_path_equals_reference(c in case(), level in 1i32..=2) {
        let qrels = parse_qrels("q", qrels_text(&c).as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let run = parse_run("r", run_text(&c).as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let measures: Vec<Measure> = MEASURES
            .iter()
            .map(|t| {
                let mut m: Measure = t.parse().expect("measure");
                if !t.starts_with("nDCG") {
                    m.rel = Some(level);
                }
                m
            })
            .collect();
        let results = evaluate(&qrels, &run, &measures);
        // a topic without result lines is not in the run file at all
        let expected_topics: Vec<&String> = c
            .qrels
            .keys()
            .filter(|q| c.run.get(*q).is_some_and(|docs| !docs.is_empty()))
            .collect();
        prop_assert_eq!(results.topics.iter().collect::<Vec<_>>(), expected_topics);
        for (m, text) in measures.iter().zip(MEASURES) {
            let lvl = if text.starts_with("nDCG") { 1 } else { level };
            for (qid, got) in results.per_query(m) {
                let want = reference(text, lvl, &c.run[qid], &c.qrels[qid]);
                prop_assert!((got - want).abs() < 1e-12, "{} on {}: fast {} reference {}", m, qid, got, want);
            }
        }
    }
}
