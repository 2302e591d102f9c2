//! `ScoresWhileParsing` must give what `evaluate_with` gives on the finished run, bit for bit,
//! whatever the chunks, the order of the lines and the topics the qrels and the run share; and
//! it must really score early, or the equality would only test `finish`.

use proptest::prelude::*;
use ragscope_eval::{
    evaluate_with, parse_qrels, EvalOptions, Measure, Results, RunParser, ScoresWhileParsing,
};

fn measures() -> Vec<Measure> {
    [
        "MAP", "MRR", "nDCG@10", "P@5", "R@100", "bpref", "Rprec", "nDCG", "P@10",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect()
}

/// Results with every value as bits, so NaN equals NaN.
fn bits(r: &Results) -> (String, Vec<String>, Vec<Vec<u64>>, Vec<usize>) {
    (
        r.run.clone(),
        r.topics.clone(),
        r.values
            .iter()
            .map(|c| c.iter().map(|v| v.to_bits()).collect())
            .collect(),
        r.unjudged.clone(),
    )
}

/// Feeds `run` in `chunks`, scoring passed topics after each; returns the early count too.
fn while_parsing(
    qrels: &ragscope_eval::Qrels,
    run: &[u8],
    chunks: &[usize],
    opts: &EvalOptions,
) -> Option<(Results, Results, usize)> {
    let measures = measures();
    let mut parser = RunParser::new("run");
    let mut early = ScoresWhileParsing::new(&measures, opts);
    let mut at = 0;
    let mut sizes = chunks.iter().cycle();
    while at < run.len() {
        let end = run
            .len()
            .min(at + sizes.next().copied().unwrap_or(run.len()).max(1));
        parser.feed(&run[at..end]).ok()?;
        early.score_passed(qrels, &parser);
        at = end;
    }
    let scored_early = early.scored_early();
    let parsed = parser.finish().ok()?;
    let expected = evaluate_with(qrels, &parsed, &measures, opts);
    Some((early.finish(qrels, &parsed), expected, scored_early))
}

fn qrels_text(topics: usize) -> String {
    let mut s = String::new();
    // every third topic is not judged; a topic only in the qrels too
    for t in (0..topics).filter(|t| t % 3 != 2).chain([topics + 1]) {
        for d in 0..40 {
            s.push_str(&format!("q{t} 0 d{d} {}\n", ((d * 7 + t) % 4) as i64 - 1));
        }
    }
    s
}

/// Topic by topic, as runs are written; ties in the scores.
fn run_by_topic(topics: usize, docs: usize) -> String {
    let mut s = String::new();
    for t in 0..topics {
        for d in 0..docs {
            let docno = (d * 13 + t) % 160;
            s.push_str(&format!("q{t} Q0 d{docno} {d} {} tag\n", (docs - d) / 3));
        }
    }
    s
}

#[test]
fn a_run_written_topic_by_topic_is_scored_early_and_equals_evaluate() {
    let qrels = parse_qrels("qrels", qrels_text(30).as_bytes()).unwrap();
    let run = run_by_topic(30, 50);
    for opts in [
        EvalOptions::default(),
        EvalOptions {
            complete: true,
            ..EvalOptions::default()
        },
    ] {
        let (got, expected, early) = while_parsing(&qrels, run.as_bytes(), &[700], &opts).unwrap();
        assert_eq!(bits(&got), bits(&expected));
        // 20 of the 30 topics are judged; all but the last judged one pass before the end
        assert!(early >= 18, "only {early} topics scored early");
    }
}

#[test]
fn a_topic_that_comes_back_is_scored_again() {
    let qrels = parse_qrels("qrels", qrels_text(3).as_bytes()).unwrap();
    // q0's first results are all non-relevant; after q1, q0 comes back with relevant ones
    let head = "q0 Q0 d2 1 9 t\nq0 Q0 d6 2 8 t\n";
    let middle = "q1 Q0 d0 1 9 t\nq1 Q0 d1 2 8 t\n";
    let tail = "q0 Q0 d1 3 7 t\nq0 Q0 d5 4 6 t\nq1 Q0 d9 3 1 t\n";
    let measures = measures();
    let opts = EvalOptions::default();
    let mut parser = RunParser::new("run");
    let mut early = ScoresWhileParsing::new(&measures, &opts);
    for part in [head, middle, tail] {
        parser.feed(part.as_bytes()).unwrap();
        early.score_passed(&qrels, &parser);
    }
    assert_eq!(early.scored_early(), 1, "q0 was scored when q1 began");
    let run = parser.finish().unwrap();
    let expected = evaluate_with(&qrels, &run, &measures, &opts);
    let got = early.finish(&qrels, &run);
    assert_eq!(bits(&got), bits(&expected));
    // and q0's early score (before its relevant results) was not what it ends with
    assert!(expected.values[0][0] > 0.0);
}

#[test]
fn chunks_parsed_on_two_threads_give_the_same_scores() {
    // natively a chunk of 256 KiB or more is split between two threads
    let qrels = parse_qrels("qrels", qrels_text(400).as_bytes()).unwrap();
    let run = run_by_topic(400, 100);
    assert!(run.len() > 600 * 1024);
    let (got, expected, _) = while_parsing(
        &qrels,
        run.as_bytes(),
        &[300 * 1024],
        &EvalOptions::default(),
    )
    .unwrap();
    assert_eq!(bits(&got), bits(&expected));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_lines_in_any_chunks_give_evaluates_scores(
        lines in prop::collection::vec((0usize..8, 0usize..60, 0u8..12), 1..300),
        chunks in prop::collection::vec(1usize..400, 1..6),
        complete in any::<bool>(),
    ) {
        let qrels = parse_qrels("qrels", qrels_text(8).as_bytes()).unwrap();
        // mostly grouped by topic (sorted by topic), sometimes not
        let mut lines = lines;
        if lines.len() % 4 != 0 {
            lines.sort_by_key(|l| l.0);
        }
        let mut seen = std::collections::HashSet::new();
        let run: String = lines
            .iter()
            .filter(|(t, d, _)| seen.insert((*t, *d)))
            .map(|(t, d, s)| format!("q{t} Q0 d{d} 0 {} r\n", f64::from(*s) / 4.0))
            .collect();
        let opts = EvalOptions { complete, ..EvalOptions::default() };
        let (got, expected, _) = while_parsing(&qrels, run.as_bytes(), &chunks, &opts).unwrap();
        prop_assert_eq!(bits(&got), bits(&expected));
    }
}
