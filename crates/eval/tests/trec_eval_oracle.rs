//! Byte-identical output against trec_eval 10.0's own regression suite
//! (`../shared/data/trec_eval`, expected outputs and command lines in SOURCE.txt).

use std::path::PathBuf;

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval"
    ));
    assert!(
        dir.is_dir(),
        "trec_eval oracle data missing at {}",
        dir.display()
    );
    dir
}

/// Command lines from SOURCE.txt: (expected output file, argv without the program name).
fn cases() -> Vec<(String, Vec<String>)> {
    let source = std::fs::read_to_string(data_dir().join("SOURCE.txt")).expect("SOURCE.txt");
    source
        .lines()
        .filter_map(|line| {
            let (out, cmd) = line.split_once(" trec_eval ")?;
            let out = out.trim();
            if !out.starts_with("out.") {
                return None;
            }
            Some((
                out.to_string(),
                cmd.split_whitespace().map(String::from).collect(),
            ))
        })
        .collect()
}

/// How the files reach trec_eval: read whole into memory and streamed to the parsers (the
/// run stored, then scored), or mapped as the CLI does (the run scored while it is parsed,
/// where the command line allows).
#[derive(Clone, Copy, Debug)]
enum Files {
    Read,
    Mapped,
}

fn run_case(
    files: Files,
    args: &[String],
) -> Result<String, ragscope_eval::trec_eval::TrecEvalError> {
    let dir = data_dir();
    match files {
        Files::Read => ragscope_eval::trec_eval::run(args, &mut |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| e.to_string())
        }),
        Files::Mapped => ragscope_eval::trec_eval::run_inputs(args, &mut |name: &str| {
            ragscope_eval::formats::open_input(&dir.join(name).to_string_lossy())
                .map_err(|e| e.to_string())
        }),
    }
}

#[test]
fn every_supported_command_line_matches_byte_for_byte() {
    check_every_command_line(Files::Read);
}

#[test]
fn every_supported_command_line_matches_with_mapped_files() {
    check_every_command_line(Files::Mapped);
}

fn check_every_command_line(files: Files) {
    let cases = cases();
    assert!(cases.len() >= 14, "SOURCE.txt lists {} cases", cases.len());
    let mut checked = 0;
    let mut failures = Vec::new();
    for (out, args) in &cases {
        let expected = std::fs::read_to_string(data_dir().join(out)).expect("expected output");
        match run_case(files, args) {
            Ok(actual) if actual == expected => checked += 1,
            Ok(actual) => {
                let diff: Vec<String> = expected
                    .lines()
                    .zip(actual.lines())
                    .filter(|(e, a)| e != a)
                    .take(8)
                    .map(|(e, a)| format!("  expected {e:?}\n  actual   {a:?}"))
                    .collect();
                failures.push(format!(
                    "{out} ({}): {} vs {} lines\n{}",
                    args.join(" "),
                    expected.lines().count(),
                    actual.lines().count(),
                    diff.join("\n")
                ));
            }
            Err(e) => failures.push(format!("{out} ({}): error {e:?}", args.join(" "))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(checked, 15, "number of command lines checked");
}
