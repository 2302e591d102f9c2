//! `cargo bench -p ragscope-eval --bench end_to_end`: parse + evaluate a synthetic
//! 1,000-topic × 1,000-document run (≈36 MB) with graded qrels, timing each phase.
//! The target: nDCG@10, MAP, MRR, P@10, R@100 end to end in ≲ 0.1 s.

use std::time::Instant;

use ragscope_eval::{evaluate, parse_qrels, parse_run, Measure};

/// A small deterministic generator so the benchmark needs no files.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn synthetic() -> (Vec<u8>, Vec<u8>) {
    let mut rng = Lcg(7);
    let mut run = String::with_capacity(40_000_000);
    let mut qrels = String::new();
    for t in 0..1000 {
        for r in 0..1000 {
            // unique within the topic: the rank is folded into the number
            let d = (rng.next() % 10_000) * 1000 + r;
            let score = (rng.next() % 20_000_000) as f64 / 1e6;
            run.push_str(&format!("{t} Q0 doc{d} {} {score:.6} bm25\n", r + 1));
            if rng.next().is_multiple_of(7) {
                qrels.push_str(&format!("{t} 0 doc{d} {}\n", rng.next() % 4));
            }
        }
        for _ in 0..20 {
            qrels.push_str(&format!("{t} 0 unret{} 1\n", rng.next()));
        }
    }
    (run.into_bytes(), qrels.into_bytes())
}

fn main() {
    let (run_bytes, qrels_bytes) = synthetic();
    let measures: Vec<Measure> = ["nDCG@10", "MAP", "MRR", "P@10", "R@100"]
        .iter()
        .map(|m| m.parse().expect("measure"))
        .collect();
    for round in 0..5 {
        let t0 = Instant::now();
        let qrels = parse_qrels("qrels", &qrels_bytes).expect("qrels");
        let t1 = Instant::now();
        let run = parse_run("run", &run_bytes).expect("run");
        let t2 = Instant::now();
        let results = evaluate(&qrels, &run, &measures);
        let t3 = Instant::now();
        println!(
            "round {round}: {:.1} MB run, qrels {:.1} ms, run {:.1} ms, evaluate {:.1} ms, total {:.1} ms (MAP {:.4})",
            run_bytes.len() as f64 / 1e6,
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            (t3 - t2).as_secs_f64() * 1e3,
            (t3 - t0).as_secs_f64() * 1e3,
            results.mean(&measures[1]).unwrap_or(0.0)
        );
    }
}
