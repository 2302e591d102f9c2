//! A run's tail parsed apart (the browser's second worker) and absorbed as bytes
//! (`RunParser::finish_part` / `absorb_part`) gives the serial parse's run: topics, docnos,
//! scores, the line of every result, the run id and the duplicate check's verdict. Damaged
//! part bytes are an error, never a panic.

use proptest::prelude::*;
use ragscope_eval::formats::{ParseError, Run, RunParser};

fn serial(bytes: &[u8]) -> Result<Run, ParseError> {
    let mut p = RunParser::new("r");
    p.feed(bytes)?;
    p.finish()
}

/// The head `..cut` fed here in chunks of `chunk`, the tail parsed by another parser.
fn split_at(bytes: &[u8], cut: usize, chunk: usize) -> Result<Run, ParseError> {
    let mut head = RunParser::new("r");
    for c in bytes[..cut].chunks(chunk.max(1)) {
        head.feed(c)?;
    }
    let mut tail = RunParser::new("r");
    tail.feed(&bytes[cut..])?;
    let part = tail
        .finish_part()
        .map_err(|mut e| {
            // as the browser does: re-read serially for the exact error; here only its line
            e.line = u64::MAX;
            e
        })?
        .to_bytes();
    head.absorb_part(&part).expect("a fresh part reads back");
    head.finish()
}

/// (qid, [(docno, score bits, line)]) per topic, and the run id.
type Flat = (Vec<(String, Vec<(Vec<u8>, u64, u64)>)>, String);

fn flatten(run: &Run) -> Flat {
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
    (topics, run.run_id().to_string())
}

/// Line starts of `bytes` (the cuts a worker may choose), and its end.
fn cuts(bytes: &[u8]) -> Vec<usize> {
    let mut out = vec![0];
    out.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    out
}

fn text(lines: &[(u8, u8, u8, &str)], final_newline: bool) -> Vec<u8> {
    let mut s = String::new();
    for (i, (q, d, score, tag)) in lines.iter().enumerate() {
        if i % 7 == 3 {
            s.push_str("# a comment\n");
        }
        s.push_str(&format!("q{q} Q0 D{d} {i} {score}.{i} {tag}\n"));
    }
    if !final_newline {
        s.pop();
    }
    s.into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn a_part_absorbed_equals_the_serial_parse(
        lines in prop::collection::vec((0u8..5, 0u8..40, 0u8..9, prop::sample::select(vec!["a", "b", "run-x"])), 1..60),
        final_newline in any::<bool>(),
        pick in any::<prop::sample::Index>(),
        chunk in 1usize..50,
    ) {
        let bytes = text(&lines, final_newline);
        let all = cuts(&bytes);
        let cut = all[pick.index(all.len())].min(bytes.len());
        let whole = serial(&bytes);
        let split = split_at(&bytes, cut, chunk);
        match (whole, split) {
            (Ok(a), Ok(b)) => prop_assert_eq!(flatten(&a), flatten(&b)),
            // a duplicate docno: the same error, found after the merge or in a part
            (Err(a), Err(b)) if b.line != u64::MAX => prop_assert_eq!(a.to_string(), b.to_string()),
            (Err(a), Err(_)) => prop_assert!(a.line as usize > bytes[..cut].iter().filter(|&&b| b == b'\n').count(), "{}", a),
            (a, b) => prop_assert!(false, "serial {:?}, split {:?}", a.map(|r| flatten(&r)), b.map(|r| flatten(&r))),
        }
    }

    #[test]
    fn damaged_part_bytes_are_an_error_not_a_panic(
        lines in prop::collection::vec((0u8..5, 0u8..40, 0u8..9, Just("t")), 1..30),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut_at in any::<prop::sample::Index>(),
    ) {
        let bytes = text(&lines, true);
        let mut tail = RunParser::new("r");
        tail.feed(&bytes).unwrap();
        let Ok(part) = tail.finish_part().map(|p| p.to_bytes()) else { return Ok(()) };
        let mut damaged = part.clone();
        for (at, value) in flips {
            let i = at.index(damaged.len());
            damaged[i] ^= value | 1;
        }
        let mut head = RunParser::new("r");
        // whatever it reads back, nothing panics later either
        if head.absorb_part(&damaged).is_ok() {
            if let Ok(run) = head.finish() {
                for t in run.topics() {
                    for (i, d) in t.docs().iter().enumerate() {
                        let _ = (run.docno(d), t.line(i));
                    }
                }
            }
        }
        let truncated = &part[..cut_at.index(part.len())];
        prop_assert!(RunParser::new("r").absorb_part(truncated).is_err());
    }
}

#[test]
fn a_large_run_split_in_the_middle_parses_as_a_whole() {
    let mut s = String::new();
    for t in 0..200 {
        for d in 0..500 {
            s.push_str(&format!(
                "{t} Q0 doc{}-{d} {d} {}.25 tagged\n",
                (d * 31) % 997,
                500 - d
            ));
        }
    }
    let bytes = s.into_bytes();
    let mid = bytes.len() / 2;
    let cut = mid + bytes[mid..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let a = serial(&bytes).unwrap();
    let b = split_at(&bytes, cut, 1 << 20).unwrap();
    assert_eq!(flatten(&a), flatten(&b));
    assert_eq!(a.num_results(), 100_000);
}

#[test]
fn an_error_in_the_tail_is_numbered_from_the_tail_and_a_cut_inside_a_line_is_refused() {
    // the tail's last line has no newline: finish_part reads it
    let bytes = b"1 Q0 a 1 1 t\n1 Q0 b 2 x t";
    let mut tail = RunParser::new("r");
    tail.feed(&bytes[13..]).unwrap();
    let err = tail.finish_part().unwrap_err();
    assert_eq!(err.line, 1, "{err}");
    let whole = serial(bytes).unwrap_err();
    assert_eq!(whole.line, 2, "{whole}");

    let mut ok = RunParser::new("r");
    ok.feed(b"1 Q0 c 1 1 t\n").unwrap();
    let part = ok.finish_part().unwrap().to_bytes();
    let mut head = RunParser::new("r");
    head.feed(b"1 Q0 a 1 1 t").unwrap();
    let err = head.absorb_part(&part).unwrap_err();
    assert!(err.to_string().contains("newline"), "{err}");
}
