//! A small generated run and qrels parsed and scored once when the worker starts, before any
//! file arrives, so that V8 has compiled the parsers and measure kernels with its optimising
//! tier by the time a large run is read. Measured with the wasm build under Node (the 38 MB
//! benchmark run): a cold `evaluate()` used 0.41 s of CPU, 0.30 s after this warm-up, against
//! 0.21 s natively; the rest of the cold cost is the first touch of fresh wasm memory.
//! Nothing is kept and nothing is sent to the page.

use ragscope_eval::formats::{QrelsParser, RunParser};
use ragscope_eval::Measure;
use std::io::Write;

/// Topics × documents of the generated run (about 1 MB of lines) and rounds over it: enough for
/// V8's tiering budget of the hot loops; ~0.1 s in the baseline tier.
const TOPICS: usize = 50;
const DOCS: usize = 500;
const ROUNDS: usize = 3;

/// Once per worker (each bridge gets a reactor of its own).
pub fn once() {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !DONE.swap(true, std::sync::atomic::Ordering::Relaxed) {
        warm_up();
    }
}

/// Parses and scores the generated input; returns the number of topics scored (for the test).
pub fn warm_up() -> usize {
    let mut run_text = Vec::with_capacity(TOPICS * DOCS * 40);
    let mut qrels = Vec::with_capacity(TOPICS * DOCS / 5 * 20);
    for q in 0..TOPICS {
        let qid = 1_000_000 + 7 * q;
        for r in 1..=DOCS {
            // A fixed scatter of document ids; no randomness needed.
            let doc = (q * 7919 + r * 104_729) % 8_841_823;
            let _ = writeln!(
                run_text,
                "{qid} Q0 {doc} {r} {:.6} warm",
                30.0 - r as f64 / 20.0
            );
            if r % 5 == 0 {
                let _ = writeln!(qrels, "{qid} 0 {doc} {}", (r / 5) % 4);
            }
        }
    }
    let measures: Vec<Measure> = ["nDCG@10", "MAP", "MRR", "P@10", "R@100", "bpref", "Rprec"]
        .iter()
        .filter_map(|m| m.parse().ok())
        .collect();
    let mut scored = 0;
    for _ in 0..ROUNDS {
        let mut rp = RunParser::new("warm-up.run");
        let mut qp = QrelsParser::new("warm-up.qrels");
        let parsed = rp
            .feed(&run_text)
            .and_then(|()| rp.finish())
            .and_then(|run| Ok((run, qp.feed(&qrels).and_then(|()| qp.finish())?)));
        if let Ok((run, qrels)) = parsed {
            scored = ragscope_eval::evaluate(&qrels, &run, &measures)
                .topics
                .len();
            // and scored as the parser hands topics out, the helper's way
            // (crates/worker/src/engine/shard.rs)
            scored = scored.min(score_as_parsed(&qrels, &run_text, &measures));
        }
    }
    scored
}

/// The run parsed in slices and scored topic by topic as it is handed out, as the helper
/// and the worker do with a run read in two places ([`PartScorer`](super::split_run::PartScorer)); topics scored.
fn score_as_parsed(qrels: &ragscope_eval::Qrels, run: &[u8], measures: &[Measure]) -> usize {
    let opts = ragscope_eval::EvalOptions::default();
    let mut scorer = super::split_run::PartScorer::new("warm-up.run", qrels, measures, &opts);
    if run
        .chunks(64 << 10)
        .any(|slice| scorer.feed(qrels, slice) != Ok(true))
    {
        return 0;
    }
    scorer.finish(qrels).map_or(0, |part| part.topics.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_generated_input_parses_and_every_topic_is_scored() {
        assert_eq!(super::warm_up(), super::TOPICS);
    }
}
