//! `cargo run --release -p ragscope-eval --example phases -- QRELS RUN [ROUNDS]`: CPU time of
//! each phase of an evaluation (qrels, run, scoring, the whole trec_eval path) on real files,
//! best of ROUNDS, to see which phase a change moves. Prints only; never asserted.
//!
//! CPU time is this thread's (Linux `/proc/thread-self/schedstat`, in ns): on the shared, loaded
//! development machine wall time says little. Run it with `RAGSCOPE_THREADS=1` so every phase
//! but trec_eval's qrels thread runs here.

use ragscope_eval::formats::{read_qrels, read_run};
use ragscope_eval::{evaluate, Measure};

/// This thread's CPU time so far, or 0 where the kernel does not say.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(qrels_path), Some(run_path)) = (args.first(), args.get(1)) else {
        return Err("usage: phases QRELS RUN [ROUNDS]".into());
    };
    let rounds: usize = args.get(2).map_or(Ok(5), |r| r.parse())?;
    let measures: Vec<Measure> = ["nDCG@10", "MAP", "MRR", "P@10", "R@100"]
        .iter()
        .map(|m| m.parse())
        .collect::<Result<_, _>>()?;
    let trec_args: Vec<String> = [
        "-m",
        "ndcg_cut.10",
        "-m",
        "map",
        "-m",
        "recip_rank",
        "-m",
        "P.10",
        "-m",
        "recall.100",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([qrels_path.clone(), run_path.clone()])
    .collect();
    let mut best = [f64::MAX; 4];
    for _ in 0..rounds {
        let t0 = cpu_ns();
        let qrels = read_qrels(qrels_path, std::fs::File::open(qrels_path)?)?;
        let t1 = cpu_ns();
        let run = read_run(run_path, std::fs::File::open(run_path)?)?;
        let t2 = cpu_ns();
        let results = evaluate(&qrels, &run, &measures);
        let t3 = cpu_ns();
        drop((qrels, run, results));
        let t4 = cpu_ns();
        let out = ragscope_eval::trec_eval::run_streaming(&trec_args, &mut |name: &str| {
            std::fs::File::open(name)
                .map(|f| Box::new(f) as Box<dyn std::io::Read>)
                .map_err(|e| e.to_string())
        })?;
        let t5 = cpu_ns();
        std::hint::black_box(out);
        for (b, d) in best.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t5 - t4]) {
            *b = b.min(d as f64 / 1e6);
        }
    }
    println!(
        "best of {rounds}: qrels {:.1} ms, run {:.1} ms, evaluate {:.1} ms; trec_eval path {:.1} ms",
        best[0], best[1], best[2], best[3]
    );
    Ok(())
}
