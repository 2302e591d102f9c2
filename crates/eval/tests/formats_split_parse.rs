//! Large chunks are parsed on two threads natively (RunParser::feed): the result and the
//! error positions must equal a serial parse's (small chunks stay serial).

use ragscope_eval::formats::{read_run_input, Input, ParseErrorKind, ReadError, Run, RunParser};

/// A run of `topics` × `docs` lines with tied scores, interleaving topics to make merging
/// non-trivial; about 30 bytes a line.
fn run_text(topics: usize, docs: usize) -> Vec<u8> {
    let mut s = String::new();
    for d in 0..docs {
        for t in 0..topics {
            s.push_str(&format!(
                "q{t} Q0 doc{}-{d} {d} {} tag{}\n",
                (d * 7919) % 1000,
                (d % 13) as f64 / 4.0,
                t % 3
            ));
        }
    }
    s.into_bytes()
}

fn parse_in_chunks(
    name: &str,
    bytes: &[u8],
    chunk: usize,
) -> Result<Run, ragscope_eval::ParseError> {
    let mut p = RunParser::new(name);
    for c in bytes.chunks(chunk) {
        p.feed(c)?;
    }
    p.finish()
}

/// Parsed as a mapped file is: held whole, fed in slices.
fn whole(name: &str, bytes: Vec<u8>) -> Result<Run, ragscope_eval::ParseError> {
    read_run_input(name, Input::Whole(bytes.into())).map_err(|e| match e {
        ReadError::Parse(e) => e,
        ReadError::Io(e) => panic!("{e}"),
    })
}

/// (qid, [(docno, score bits)]) per topic.
type Flat = Vec<(String, Vec<(Vec<u8>, u64)>)>;

fn flatten(run: &Run) -> Flat {
    run.topics()
        .iter()
        .map(|t| {
            let docs = t
                .docs()
                .iter()
                .map(|d| (run.docno(d).to_vec(), d.score.to_bits()))
                .collect();
            (t.qid().to_string(), docs)
        })
        .collect()
}

#[test]
fn big_chunks_parse_like_small_ones() {
    let bytes = run_text(37, 12_000); // ~440k lines, ~13 MB
    let serial = parse_in_chunks("r", &bytes, 64 * 1024).unwrap();
    for chunk in [300 * 1024, 1 << 20, bytes.len()] {
        let split = parse_in_chunks("r", &bytes, chunk).unwrap();
        assert_eq!(split.run_id(), serial.run_id());
        assert_eq!(split.num_results(), serial.num_results());
        assert!(flatten(&split) == flatten(&serial), "chunk {chunk}");
    }
    let whole = whole("r", bytes).unwrap();
    assert_eq!(whole.run_id(), serial.run_id());
    assert!(flatten(&whole) == flatten(&serial), "held whole");
}

/// Topics one after the other, as runs are written (each checked for duplicates while it is
/// parsed), with the last line left without its newline.
fn contiguous_text(topics: usize, docs: usize) -> Vec<u8> {
    let mut s = String::new();
    for t in 0..topics {
        for d in 0..docs {
            s.push_str(&format!("{t} Q0 d{t}x{d} {d} {}.5 run\n", docs - d));
        }
    }
    s.pop();
    s.into_bytes()
}

#[test]
fn a_duplicate_inside_one_stretch_is_found_whole_and_chunked() {
    let (topics, docs) = (300, 1000); // ~8 MB, several 4 MiB chunks and a split per chunk
    let clean = contiguous_text(topics, docs);
    let parsed = whole("r", clean.clone()).unwrap();
    assert_eq!(parsed.num_results(), topics * docs);
    assert!(flatten(&parsed) == flatten(&parse_in_chunks("r", &clean, 4 << 20).unwrap()));
    // the 700th result of one topic repeats its 3rd docno: in the first half of the file,
    // and in the second (parsed by the other thread)
    for topic in [5usize, 250] {
        let mut text = String::from_utf8(clean.clone()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let at = topic * docs + 699;
        lines[at] = format!("{topic} Q0 d{topic}x2 700 0.25 run");
        text = lines.join("\n");
        let bytes = text.into_bytes();
        for result in [
            whole("dup.run", bytes.clone()),
            parse_in_chunks("dup.run", &bytes, 4 << 20),
            parse_in_chunks("dup.run", &bytes, 1000),
        ] {
            let err = result.unwrap_err();
            assert_eq!(err.line, at as u64 + 1, "{err}");
            match err.kind {
                ParseErrorKind::DuplicateDocno { qid, first_line } => {
                    assert_eq!(qid, topic.to_string());
                    assert_eq!(first_line, (topic * docs + 3) as u64);
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

#[test]
fn an_error_in_the_second_half_names_its_line() {
    let mut bytes = run_text(3, 30_000);
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let bad_line = lines - 10; // far into the second half of any split
    let mut at = 0;
    for _ in 0..bad_line - 1 {
        at += bytes[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    }
    let end = at + bytes[at..].iter().position(|&b| b == b'\n').unwrap();
    bytes.splice(at..end, b"q1 Q0 docX 1 notanumber tag".iter().copied());
    for chunk in [64 * 1024, bytes.len()] {
        let err = parse_in_chunks("bad.run", &bytes, chunk).unwrap_err();
        assert_eq!(err.line, bad_line as u64, "chunk {chunk}: {err}");
        assert!(err.to_string().contains("notanumber"), "{err}");
    }
}

#[test]
fn a_duplicate_across_halves_is_found_with_both_lines() {
    let mut bytes = run_text(2, 20_000);
    bytes.extend_from_slice(b"q0 Q0 doc0-0 1 1.0 tag\n");
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    let err = parse_in_chunks("dup.run", &bytes, bytes.len()).unwrap_err();
    let serial = parse_in_chunks("dup.run", &bytes, 64 * 1024).unwrap_err();
    assert_eq!(err.to_string(), serial.to_string());
    assert_eq!(err.line, lines);
}
