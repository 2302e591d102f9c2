//! Both parsers split the common line shape in one pass over a block of whole lines and send
//! every other line to their general path (lines.rs `block_fields`). Fed one byte at a time,
//! every line takes the general path instead, so the two feedings must agree on everything:
//! topics, docnos, scores to the bit, line numbers, run id, and every error (line, column,
//! text, reason). Inputs mix the shapes that sit on the fast path's edges: tabs, `\r`,
//! vertical tabs and form feeds, control bytes that are not whitespace, comments, blank and
//! indented lines, exponents, long docnos, too few and too many fields, duplicates.

use proptest::prelude::*;
use ragscope_eval::formats::ParseErrorKind;
use ragscope_eval::formats::{
    read_run_input, Input, Qrels, QrelsParser, ReadError, Run, RunParser,
};
use ragscope_eval::ParseError;

fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-c]{1,3}",
        2 => "doc[0-9]{1,14}",
        2 => "-?[0-9]{1,4}(\\.[0-9]{0,8})?",
        1 => "[0-9]\\.[0-9]e-?[0-9]",
        1 => "[+-]?[0-9]{10,18}",
        1 => "x\u{1}y|\u{7f}|é|#|Q0|nan|inf",
    ]
}

fn sep() -> impl Strategy<Value = String> {
    prop_oneof![8 => Just(" ".to_string()), 2 => Just("\t".to_string()), 1 => "[ \t\r\u{b}\u{c}]{1,3}"]
}

fn line(max_fields: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec((field(), sep()), 0..max_fields),
        prop_oneof![6 => Just(""), 1 => Just(" "), 1 => Just("#"), 1 => Just("\t")],
        prop_oneof![6 => Just(""), 1 => Just("\r"), 1 => Just(" \t")],
    )
        .prop_map(|(fields, lead, trail)| {
            let mut s = lead.to_string();
            for (i, (f, sep)) in fields.iter().enumerate() {
                if i > 0 {
                    s.push_str(sep);
                }
                s.push_str(f);
            }
            s.push_str(trail);
            s
        })
}

/// A text of mostly well-formed lines of `fields` fields from a few topics and docnos (so
/// duplicates happen), with some lines drawn from `line` instead.
fn text(fields: usize) -> impl Strategy<Value = String> {
    let good = (0..3u8, 0..40u16, 0..1000u32).prop_map(move |(q, d, s)| {
        let mut parts = vec![format!("q{q}"), "Q0".into(), format!("doc{d}")];
        if fields == 6 {
            parts.extend([s.to_string(), format!("{}.{}", s / 7, s % 97), "tag".into()]);
        } else {
            parts.push(((s % 5) as i32 - 1).to_string());
        }
        parts.join(" ")
    });
    prop::collection::vec(prop_oneof![6 => good, 1 => line(fields + 2)], 0..30)
        .prop_map(|lines| lines.join("\n"))
}

type FlatRun = (String, Vec<(String, Vec<(Vec<u8>, u64, u64)>)>);

fn flat_run(run: Result<Run, ParseError>) -> Result<FlatRun, ParseError> {
    let run = run?;
    let topics = run
        .topics()
        .iter()
        .map(|t| {
            let docs = t
                .docs()
                .iter()
                .enumerate()
                .map(|(i, d)| (run.docno(d).to_vec(), d.score.to_bits(), t.line(i)))
                .collect();
            (t.qid().to_string(), docs)
        })
        .collect();
    Ok((run.run_id().to_string(), topics))
}

type FlatQrels = Vec<(String, Vec<(Vec<u8>, i32)>, Vec<(i32, u64)>)>;

fn flat_qrels(qrels: Result<Qrels, ParseError>) -> Result<FlatQrels, ParseError> {
    Ok(qrels?
        .topics()
        .iter()
        .map(|t| {
            let judgments = t.judgments().map(|(d, r)| (d.to_vec(), r)).collect();
            (t.qid().to_string(), judgments, t.levels().to_vec())
        })
        .collect())
}

fn run_fed(bytes: &[u8], chunk: usize) -> Result<Run, ParseError> {
    let mut p = RunParser::new("r");
    for c in bytes.chunks(chunk.max(1)) {
        p.feed(c)?;
    }
    p.finish()
}

fn whole(bytes: &[u8]) -> Result<Run, ParseError> {
    read_run_input("r", Input::Whole(bytes.to_vec().into())).map_err(|e| match e {
        ReadError::Parse(e) => e,
        ReadError::Io(e) => panic!("{e}"),
    })
}

fn qrels_fed(bytes: &[u8], chunk: usize) -> Result<Qrels, ParseError> {
    let mut p = QrelsParser::new("q");
    for c in bytes.chunks(chunk.max(1)) {
        p.feed(c)?;
    }
    p.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn run_fast_path_equals_the_general_path(text in text(6), chunk in 2usize..64, newline in any::<bool>()) {
        let mut bytes = text.into_bytes();
        if newline {
            bytes.push(b'\n');
        }
        let general = flat_run(run_fed(&bytes, 1));
        prop_assert_eq!(&flat_run(run_fed(&bytes, bytes.len())), &general);
        prop_assert_eq!(&flat_run(run_fed(&bytes, chunk)), &general);
        // held whole (as a mapped file is): parsed in slices, same everything
        prop_assert_eq!(&flat_run(whole(&bytes)), &general);
        // the duplicate check (partly done while parsing) against a model: a parsed run has
        // no docno twice in a topic; a refused one names a real repeat and its first line
        match &general {
            Ok((_, topics)) => {
                for (qid, docs) in topics {
                    let mut seen = std::collections::HashSet::new();
                    for (docno, _, line) in docs {
                        prop_assert!(seen.insert(docno.clone()), "{} twice in {} (line {})", String::from_utf8_lossy(docno), qid, line);
                    }
                }
            }
            Err(e) => {
                if let ParseErrorKind::DuplicateDocno { first_line, .. } = &e.kind {
                    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
                    let fields = |n: u64| -> Vec<Vec<u8>> {
                        lines[n as usize - 1]
                            .split(|b| b" \t\r\x0b\x0c".contains(b))
                            .filter(|f| !f.is_empty())
                            .map(|f| f.to_vec())
                            .collect()
                    };
                    let (a, b) = (fields(*first_line), fields(e.line));
                    prop_assert!(*first_line < e.line);
                    prop_assert_eq!((&a[0], &a[2]), (&b[0], &b[2]));
                }
            }
        }
    }

    #[test]
    fn qrels_fast_path_equals_the_general_path(text in text(4), chunk in 2usize..64, newline in any::<bool>()) {
        let mut bytes = text.into_bytes();
        if newline {
            bytes.push(b'\n');
        }
        let general = flat_qrels(qrels_fed(&bytes, 1));
        prop_assert_eq!(&flat_qrels(qrels_fed(&bytes, bytes.len())), &general);
        prop_assert_eq!(&flat_qrels(qrels_fed(&bytes, chunk)), &general);
    }
}
