//! What `ragscope calibrate` reads besides qrels and runs (those have their own targets): the
//! `# ragscope-sample:` design marker, the `--weights` file (item and query form), and the
//! judge's nugget assignments and pairwise games turned into calibration units and a PPI
//! estimate. None may panic. The first byte picks the input, the rest is the file.
//!
//! The marker and weights readers live in the CLI binary (crates/cli has no library), so the
//! module is compiled in here from its source file.
//!
//! Contract checked: an error starts with the file name and a line number where the reader
//! knows one (`name:line: reason`); weights kept are positive and finite; units have one judge
//! value per id; an estimate's interval contains it.
#![no_main]

#[path = "../../crates/cli/src/commands/calibrate_inputs.rs"]
#[allow(dead_code)]
mod calibrate_inputs;

use libfuzzer_sys::fuzz_target;
use ragscope_eval::answers::games::Games;
use ragscope_eval::answers::nugget_scores::{score_run, Compat, SCORE_NAMES};
use ragscope_eval::answers::{nuggetizer, open_rag_eval, ragelo_csv, ragelo_jsonl};
use ragscope_eval::calibration::units::{nugget_units, pairwise_units, Units};
use ragscope_eval::calibration::{ppi, Sample};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 6 {
        0 => {
            if let Err(e) = calibrate_inputs::design("h.qrels", &text) {
                assert_place(&e, "h.qrels:");
            }
        }
        1 | 2 => match calibrate_inputs::weights("w.txt", &text, which % 6 == 1) {
            Ok(w) => assert!(w.values().all(|v| v.is_finite() && *v > 0.0), "{w:?}"),
            Err(e) => assert_place(&e, "w.txt:"),
        },
        3 => {
            let Ok(answers) = nuggetizer::parse_assignments("a.jsonl", rest) else {
                return;
            };
            let Ok(runs) = nuggetizer::group_runs("a.jsonl", "a", answers) else {
                return;
            };
            nugget_estimates(runs.iter().map(|r| score_run(r, Compat::Paper)).collect());
        }
        4 => {
            let Ok(scored) = open_rag_eval::read_results("r.csv", rest) else {
                return;
            };
            if let Ok(runs) = open_rag_eval::assigned_runs("r.csv", "r", &scored) {
                nugget_estimates(runs.iter().map(|r| score_run(r, Compat::Paper)).collect());
            }
        }
        _ => {
            // As `ragscope calibrate --pairwise` reads both files (crates/cli elo::read_games).
            let evaluations = if ragelo_jsonl::looks_like(&text) {
                ragelo_jsonl::parse("p.jsonl", &text)
            } else {
                ragelo_csv::parse_pairwise("p.csv", &text)
            };
            let Ok(evaluations) = evaluations else {
                return;
            };
            let games = Games::from_evaluations(&evaluations);
            // The file as both judge and human: every game is labelled.
            for (i, first) in games.agents.iter().enumerate().take(4) {
                for second in games.agents[i + 1..].iter().take(4) {
                    if let Ok(u) = pairwise_units(&games, &games, first, second) {
                        assert_eq!(u.num_labelled(), u.judge.len());
                        estimate(&u);
                    }
                }
            }
        }
    }
});

/// Each run scored by itself as judge and human, then the first topics' halves as the human's.
fn nugget_estimates(scores: Vec<ragscope_eval::answers::nugget_scores::RunScores>) {
    for s in scores.iter().take(3) {
        for name in SCORE_NAMES {
            let Some(mut u) = nugget_units(s, s, name) else {
                continue;
            };
            assert_eq!(u.ids.len(), u.judge.len());
            assert_eq!(u.ids.len(), u.human.len());
            estimate(&u);
            for h in u.human.iter_mut().skip(1).step_by(2) {
                *h = None;
            }
            estimate(&u);
        }
    }
}

/// The PPI++ estimate over the labelled units and all judge values, as `calibrate` computes it.
fn estimate(u: &Units) {
    let (y, yhat) = u.labelled();
    if y.len() < 2 {
        return;
    }
    let unlabelled: Vec<f64> = u
        .human
        .iter()
        .zip(&u.judge)
        .filter_map(|(h, j)| h.is_none().then_some(*j))
        .collect();
    let sample = Sample {
        y: &y,
        yhat: &yhat,
        yhat_unlabelled: &unlabelled,
        w: None,
        w_unlabelled: None,
    };
    if let Ok(e) = ppi(&sample, None, 0.05) {
        if e.low.is_finite() && e.high.is_finite() {
            assert!(e.low <= e.estimate && e.estimate <= e.high, "{e:?}");
        }
    }
}

fn assert_place(e: &str, prefix: &str) {
    let after = e
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("no file name: {e}"));
    let digits = after.chars().take_while(char::is_ascii_digit).count();
    assert!(
        digits > 0 && after[digits..].starts_with(": "),
        "no line number: {e}"
    );
}
