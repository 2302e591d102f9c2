//! `cargo xtask bench udcg`: UDCG + the classic metrics + per-question correlations (the paper's
//! §7.2 study, no bootstrap) on synthetic context sets of 10 contexts × 5 passages per question,
//! at 10k → 100k → 1M → 5M passages. Prints medians of 5 runs and the cost per passage, which
//! should stay flat (linear scaling).

use ragscope_eval::rag::correlation::{study, StudyConfig};
use ragscope_eval::rag::synth::context_sets;
use std::time::Instant;

const CONTEXTS: usize = 10;
const K: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let config = StudyConfig {
        resamples: 0,
        ..StudyConfig::default()
    };
    println!(
        "{:>10} {:>12} {:>12} {:>14} {:>16} {:>12}",
        "questions", "passages", "median s", "passages/s", "ns per passage", "vs 100k"
    );
    let mut reference_ns = None;
    for questions in [200usize, 2_000, 20_000, 100_000] {
        let sets = context_sets(questions, CONTEXTS, K, 7);
        let passages = questions * CONTEXTS * K;
        let times: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                let result = study(&sets, &config).expect("synthetic sets correlate");
                std::hint::black_box(result);
                t.elapsed().as_secs_f64()
            })
            .collect();
        let s = median(times);
        let ns = s * 1e9 / passages as f64;
        if questions == 2_000 {
            reference_ns = Some(ns);
        }
        let ratio = reference_ns
            .map(|r| format!("{:.2}", ns / r))
            .unwrap_or_else(|| "-".into());
        println!(
            "{questions:>10} {passages:>12} {s:>12.4} {:>14.0} {ns:>16.1} {ratio:>12}",
            passages as f64 / s
        );
    }
}
