//! Run and qrels parsing: trec_eval's reading rules, streaming at any chunk boundary,
//! and errors that point at file, line, column and text.

use ragscope_eval::formats::{ParseErrorKind, QrelsParser, RunParser};
use ragscope_eval::{parse_qrels, parse_run};

fn data(name: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval/"
    );
    std::fs::read(format!("{path}{name}")).expect("oracle data (../shared/data) must exist")
}

#[test]
fn run_reads_spaces_tabs_comments_exponents_and_extra_fields() {
    let text = b"# a comment\n  # indented comment\n\n1\tQ0 d1 1 1e-3 tagA extra fields\n1 Q0   d2 2 +.5 tagB\n2 Q0 d1 1 -7. tagC\r\n";
    let run = parse_run("r.txt", text).expect("valid run");
    assert_eq!(run.run_id(), "tagC");
    assert_eq!(run.topics().len(), 2);
    let t1 = run.topic("1").expect("topic 1");
    let scores: Vec<f64> = t1.docs().iter().map(|d| d.score).collect();
    assert_eq!(scores, vec![1e-3, 0.5]);
    assert_eq!(run.docno(&t1.docs()[1]), b"d2");
    assert_eq!(run.topic("2").expect("topic 2").docs()[0].score, -7.0);
}

#[test]
fn topics_are_in_strcmp_order() {
    let run = parse_run("r", b"2 Q0 a 1 1 t\n10 Q0 a 1 1 t\n1 Q0 a 1 1 t\n").expect("run");
    let qids: Vec<&str> = run.topics().iter().map(|t| t.qid()).collect();
    assert_eq!(qids, ["1", "10", "2"]);
}

#[test]
fn qrels_keep_graded_and_negative_relevance() {
    let q =
        parse_qrels("q", b"1 0 a 2\n1 0 b 0\n1 0 c -1\n1 0 d 1\n# c\n2 0 a 0\n").expect("qrels");
    let t = q.topic("1").expect("topic 1");
    assert_eq!(t.rel(b"a"), Some(2));
    assert_eq!(t.rel(b"c"), Some(-1));
    assert_eq!(t.rel(b"zz"), None);
    assert_eq!(t.levels(), &[(0, 1), (1, 1), (2, 1)]);
    assert_eq!(t.num_rel(1), 2);
    assert_eq!(t.num_rel(2), 1);
    assert_eq!(q.topic("2").expect("topic 2").num_rel(1), 0);
}

#[test]
fn every_chunk_boundary_gives_the_same_run() {
    // non-ASCII docnos so some boundaries fall inside a UTF-8 character
    let text = "q1 Q0 dé1 1 0.5 run\nq1 Q0 d€2 2 0.25 run\nq2 Q0 d3 1 3 run".as_bytes();
    let whole = parse_run("r", text).expect("whole");
    for cut in 0..=text.len() {
        let mut p = RunParser::new("r");
        p.feed(&text[..cut]).expect("first chunk");
        p.feed(&text[cut..]).expect("second chunk");
        let run = p.finish().expect("finish");
        assert_eq!(run.topics().len(), whole.topics().len());
        for (a, b) in run.topics().iter().zip(whole.topics()) {
            let da: Vec<(&[u8], f64)> = a.docs().iter().map(|d| (run.docno(d), d.score)).collect();
            let db: Vec<(&[u8], f64)> =
                b.docs().iter().map(|d| (whole.docno(d), d.score)).collect();
            assert_eq!(da, db, "cut at {cut}");
        }
    }
}

#[test]
fn byte_by_byte_feeding_parses_the_oracle_files() {
    let bytes = data("qrels.comment.test");
    let mut p = QrelsParser::new("qrels.comment.test");
    for chunk in bytes.chunks(7) {
        p.feed(chunk).expect("chunk");
    }
    let streamed = p.finish().expect("qrels");
    let whole = parse_qrels("q", &bytes).expect("qrels");
    assert_eq!(streamed.topics().len(), whole.topics().len());
    assert_eq!(streamed.topics().len(), 31);
    let run_bytes = data("results.comment.test");
    let mut p = RunParser::new("results.comment.test");
    for chunk in run_bytes.chunks(4093) {
        p.feed(chunk).expect("chunk");
    }
    let run = p.finish().expect("run");
    // `wc -l results.comment.test`: every line is a result
    assert_eq!(run.num_results(), 30100);
    assert_eq!(run.run_id(), "comment.test");
}

#[test]
fn errors_point_at_line_column_and_text() {
    let e = parse_run("r.txt", b"1 Q0 a 1 1 t\n1 Q0 b 2 abc t\n").expect_err("bad score");
    assert_eq!((e.file.as_str(), e.line, e.column), ("r.txt", 2, 10));
    assert_eq!(e.text, "abc");
    assert_eq!(e.kind, ParseErrorKind::BadScore);
    assert_eq!(e.to_string(), "r.txt:2:10: score 'abc' is not a number");

    let e = parse_run("r.txt", b"1 Q0 a 1 1\n").expect_err("five fields");
    assert!(matches!(
        e.kind,
        ParseErrorKind::WrongFieldCount { found: 5, .. }
    ));

    let e = parse_run("r.txt", b"1 Q0 a 1 1 t\n1 Q0 a 2 0.5 t\n").expect_err("duplicate");
    assert_eq!(e.line, 2);
    assert!(
        matches!(e.kind, ParseErrorKind::DuplicateDocno { first_line: 1, .. }),
        "{e}"
    );

    let e = parse_qrels("q.txt", b"1 0 a 1\n1 0 b x1\n").expect_err("bad rel");
    assert_eq!((e.line, e.column, e.text.as_str()), (2, 7, "x1"));
    assert_eq!(e.kind, ParseErrorKind::BadRelevance);

    let e = parse_qrels("q.txt", b"1 0 a 1 extra\n").expect_err("five fields");
    assert!(matches!(
        e.kind,
        ParseErrorKind::WrongFieldCount { found: 5, .. }
    ));

    let e = parse_qrels("q.txt", b"1 0 a 1\n1 0 a 0\n").expect_err("duplicate");
    assert!(matches!(
        e.kind,
        ParseErrorKind::DuplicateDocno { first_line: 1, .. }
    ));

    for empty in [&b""[..], b"\n\n", b"# only a comment\n"] {
        assert_eq!(
            parse_run("r", empty).expect_err("empty").kind,
            ParseErrorKind::Empty
        );
        assert_eq!(
            parse_qrels("q", empty).expect_err("empty").kind,
            ParseErrorKind::Empty
        );
    }
}

#[test]
fn nan_scores_are_refused() {
    let e = parse_run("r", b"1 Q0 a 1 nan t\n").expect_err("nan");
    assert_eq!(e.kind, ParseErrorKind::BadScore);
}

mod never_panic {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400), cut in 0usize..400) {
            let cut = cut.min(bytes.len());
            let mut p = ragscope_eval::RunParser::new("r");
            let _ = p.feed(&bytes[..cut]).and_then(|_| p.feed(&bytes[cut..]));
            let _ = p.finish();
            let mut q = ragscope_eval::QrelsParser::new("q");
            let _ = q.feed(&bytes[..cut]).and_then(|_| q.feed(&bytes[cut..]));
            let _ = q.finish();
        }

        #[test]
        fn line_shaped_text(lines in proptest::collection::vec("[ -~\t]{0,40}", 0..20)) {
            let text = lines.join("\n");
            let _ = ragscope_eval::parse_run("r", text.as_bytes());
            let _ = ragscope_eval::parse_qrels("q", text.as_bytes());
        }
    }
}

/// Results keep their file line through comments, blank lines and interleaved topics (lines
/// are kept per stretch of consecutive lines, not per result), and docnos of any length
/// (the long ones have their length in the arena) read back whole.
#[test]
fn run_lines_and_long_docnos_survive_the_compact_entries() {
    let long = "d".repeat(70_000);
    let just_short = "e".repeat(65_534);
    let at_limit = "f".repeat(65_535);
    let text = format!(
        "1 Q0 a 1 3 t\n\
         # a comment\n\
         1 Q0 {long} 2 2 t\n\
         2 Q0 b 1 1 t\n\
         1 Q0 {just_short} 3 1 t\n\
         \n\
         \n\
         2 Q0 {at_limit} 2 0.5 t\n\
         1 Q0 c 4 0.5 t\n\
         1 Q0 d 5 0.25 t\n"
    );
    let run = parse_run("r.txt", text.as_bytes()).expect("a valid run");
    let lines = |qid: &str| -> Vec<(String, u64)> {
        let t = run.topic(qid).expect("topic");
        t.docs()
            .iter()
            .enumerate()
            .map(|(i, d)| {
                (
                    String::from_utf8_lossy(run.docno(d)).into_owned(),
                    t.line(i),
                )
            })
            .collect()
    };
    assert_eq!(
        lines("1"),
        [
            ("a".to_string(), 1),
            (long.clone(), 3),
            (just_short.clone(), 5),
            ("c".to_string(), 9),
            ("d".to_string(), 10)
        ]
    );
    assert_eq!(lines("2"), [("b".to_string(), 4), (at_limit.clone(), 8)]);

    // a repeat names both lines, across a comment and another topic's lines
    let repeat = format!("{text}2 Q0 x 3 0.1 t\n1 Q0 {long} 6 0.1 t\n");
    let e = parse_run("r.txt", repeat.as_bytes()).expect_err("duplicate");
    assert_eq!(e.line, 12);
    assert!(
        matches!(e.kind, ParseErrorKind::DuplicateDocno { first_line: 3, .. }),
        "{e}"
    );
}
