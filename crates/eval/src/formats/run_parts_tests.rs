//! A run cut at [`topic_boundary`], its parts parsed and scored apart and their scores joined
//! ([`Results::join_disjoint`], as the web worker joins its part's and its helper's), must
//! equal the whole file's scores when the parts share no topic; and when the whole file is
//! refused, the parts must not both be accepted as disjoint (so a caller that falls back to
//! the whole parse then reports its error).

use super::test_runs::*;
use super::{parse_qrels, parse_run, topic_boundary};
use crate::{evaluate, Measure, Results};
use proptest::prelude::*;

const MEASURES: &[&str] = &[
    "MAP", "MRR", "nDCG@3", "P@2", "R@5", "bpref", "NumRet", "Rprec",
];

fn measures() -> Vec<Measure> {
    MEASURES.iter().map(|m| m.parse().unwrap()).collect()
}

/// A run's scores, as debug text.
type Parsed = String;

/// The whole file's and the joined parts' scores; `None` for the joined side when a part is
/// refused or the parts share a topic (a caller then parses the whole).
fn whole_and_joined(
    text: &[u8],
    cut: usize,
    qrels: &[u8],
) -> (Result<Parsed, String>, Option<Parsed>) {
    let Ok(qrels) = parse_qrels("qrels", qrels) else {
        // no judgments at all: nothing to score, the parse alone is compared
        return whole_and_joined(text, cut, b"q0 0 d0 1\n");
    };
    let ms = measures();
    let scored = |r: &Results| format!("{r:?}");
    let whole = parse_run("run", text)
        .map(|r| scored(&evaluate(&qrels, &r, &ms)))
        .map_err(|e| e.to_string());
    let (head, tail) = text.split_at(cut);
    let joined = match (parse_run("run", head), parse_run("run", tail)) {
        (Ok(a), Ok(b)) => {
            let qids = |r: &crate::formats::Run| {
                r.topics()
                    .iter()
                    .map(|t| t.qid().to_string())
                    .collect::<std::collections::HashSet<_>>()
            };
            // Scores hold only judged topics: disjoint runs have disjoint scores, not the
            // other way round.
            qids(&a).is_disjoint(&qids(&b)).then(|| {
                let (ra, rb) = (evaluate(&qrels, &a, &ms), evaluate(&qrels, &b, &ms));
                scored(
                    &ra.join_disjoint(rb)
                        .expect("disjoint runs, disjoint scores"),
                )
            })
        }
        _ => None,
    };
    (whole, joined)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn a_run_cut_at_a_topic_boundary_joins_into_the_whole(
        blocks in blocks(),
        judged in judged(),
        at in 0.0f64..1.0,
    ) {
        let text = run_text(&blocks);
        let qrels = qrels_text(&judged);
        let from = ((text.len() as f64 * at) as usize).min(text.len());
        let Some(offset) = topic_boundary(&text[from..]) else {
            return Ok(());
        };
        let cut = from + offset;
        prop_assert!(cut > from && text[cut - 1] == b'\n', "not a line start");
        let (whole, joined) = whole_and_joined(&text, cut, &qrels);
        match (whole, joined) {
            (Ok(whole), Some(joined)) => prop_assert_eq!(whole, joined),
            (Err(e), Some(_)) => prop_assert!(false, "the whole file is refused ({e}), its parts were not"),
            (_, None) => {}
        }
    }
}

/// A run written topic by topic, cut anywhere: a boundary is found unless the cut is in the
/// last topic's lines (or the line before them), and the joined parts' scores equal the
/// whole's (the run id, the last line's tag, included).
#[test]
fn a_run_written_topic_by_topic_is_joined_at_every_cut() {
    let text = contiguous_run(9, 12);
    let qrels = qrels_of(9);
    let last_topic = text.windows(4).position(|w| w == b"\nq8 ").expect("q8") + 1;
    let line_before = text[..last_topic - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    // every byte of the short lines; every 97th of q2's 66 kB docno
    for from in (0..text.len())
        .filter(|&f| f % 97 == 0 || text[f..].len() < 60_000 && f > 66_100 || f < 900)
    {
        match topic_boundary(&text[from..]) {
            Some(offset) => {
                assert!(
                    from < last_topic,
                    "a boundary in the last topic, from {from}"
                );
                let (whole, joined) = whole_and_joined(&text, from + offset, &qrels);
                let whole = whole.expect("the generated run parses");
                assert_eq!(Some(whole), joined, "cut at {}", from + offset);
            }
            None => assert!(from >= line_before, "no boundary from {from}"),
        }
    }
}

/// A topic that comes back after the cut: the parts share it, and the join refuses.
#[test]
fn a_topic_on_both_sides_is_refused() {
    let text = b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 3 t\nq1 Q0 c 3 1 u\n";
    let cut = topic_boundary(text).expect("q2 starts a new topic");
    assert_eq!(&text[cut..cut + 2], b"q2");
    let (whole, joined) = whole_and_joined(text, cut, b"q1 0 a 1\nq2 0 a 1\n");
    assert!(whole.is_ok());
    assert_eq!(joined, None);
}

/// Only whole lines count: a window that ends inside a line, or before the qid changes, has
/// no boundary; comments and blank lines are skipped over.
#[test]
fn the_boundary_needs_a_whole_line_with_another_qid() {
    assert_eq!(
        topic_boundary(b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a"),
        None
    );
    assert_eq!(
        topic_boundary(b"1 3 t\nq1 Q0 b 2 2 t\n# c\n\n  q1 Q0 c 1 1 t\n"),
        None
    );
    let text = b"1 3 t\n# c\nq1 Q0 b 2 2 t\n\n  q1 Q0 c 1 1 t\n# d\n\tq2 Q0 a 1 1 t\n";
    let cut = topic_boundary(text).expect("q2");
    assert_eq!(&text[cut..cut + 3], b"\tq2");
}

/// Runs compare by what a parse gives: the same lines fed in any slices are equal; another
/// score, docno, line number, tag or name is not.
#[test]
fn runs_are_equal_by_what_they_hold() {
    let text = contiguous_run(5, 6);
    let parsed = |text: &[u8], slice: usize| {
        let mut parser = super::RunParser::new("run");
        for piece in text.chunks(slice) {
            parser.feed(piece).expect("the generated run parses");
        }
        parser.finish().expect("the generated run parses")
    };
    let whole = parse_run("run", &text).unwrap();
    for slice in [1, 7, 64, 1000, text.len()] {
        assert!(parsed(&text, slice) == whole, "slices of {slice}");
    }
    let line = String::from_utf8(text.clone()).unwrap();
    let first = line.lines().next().unwrap().to_string();
    let fields: Vec<&str> = first.split_whitespace().collect();
    let changed = |new_first: String| {
        let mut lines: Vec<String> = line.lines().map(str::to_string).collect();
        lines[0] = new_first;
        parse_run("run", format!("{}\n", lines.join("\n")).as_bytes()).unwrap()
    };
    let score = format!(
        "{} {} {} {} 99.5 {}",
        fields[0], fields[1], fields[2], fields[3], fields[5]
    );
    let docno = format!(
        "{} {} other {} {} {}",
        fields[0], fields[1], fields[3], fields[4], fields[5]
    );
    assert!(changed(first.clone()) == whole, "the same lines");
    assert!(changed(score) != whole, "a score");
    assert!(changed(docno) != whole, "a docno");
    assert!(
        changed(format!("# a comment\n{first}")) != whole,
        "line numbers"
    );
    let mut tagged = text.clone();
    tagged.truncate(tagged.len() - 1);
    tagged.extend_from_slice(b"x\n");
    assert!(parse_run("run", &tagged).unwrap() != whole, "the last tag");
    assert!(parse_run("other", &text).unwrap() != whole, "the name");
}
