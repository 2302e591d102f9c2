//! RAGElo's CSV and JSONL readers and the per-topic score reader must never panic; games they
//! accept must rate without panicking (Elo, both modes) and keep Elo zero-sum.
//! The first byte picks the parser: 0 CSV, 1 answers_eval JSONL, 2 per-topic scores.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_eval::answers::elo::{elo, EloCompat, EloParams};
use ragscope_eval::answers::games::Games;
use ragscope_eval::answers::{bradley_terry, ragelo_csv, ragelo_jsonl, topic_scores};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let evaluations = match choice % 3 {
        0 => match ragelo_csv::parse("fuzz.csv", text) {
            Ok(ragelo_csv::RageloFile::PairwiseEvaluations(e)) => e,
            _ => return,
        },
        1 => match ragelo_jsonl::parse("fuzz.jsonl", text) {
            Ok(e) => e,
            Err(_) => return,
        },
        _ => {
            let _ = topic_scores::parse("fuzz", text, None);
            return;
        }
    };
    let games = Games::from_evaluations(&evaluations);
    for compat in [EloCompat::Exact, EloCompat::Ragelo] {
        let params = EloParams {
            tournaments: 2,
            compat,
            ..EloParams::default()
        };
        let ratings = elo(&games, &params);
        if compat == EloCompat::Exact {
            let mean = ratings.iter().map(|r| r.rating).sum::<f64>() / ratings.len() as f64;
            assert!((mean - 1000.0).abs() < 1e-6, "{mean}");
        }
    }
    let _ = bradley_terry::bradley_terry(&games, 1000.0, 3, 0);
});
