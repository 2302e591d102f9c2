//! Seeded synthetic context sets shaped like the paper's §7.2 setup, for benchmarks
//! (`cargo xtask bench udcg`) and scale tests: per question a pool of 25 judged passages, and
//! `contexts` contexts of `k` passages drawn from it, half with at least one relevant passage
//! and half without (the paper's 50/50 balance). Outcomes come from a noisy latent score with a
//! U-shaped positional weight (lost in the middle), so metrics correlate but imperfectly.
//! Not a model of any real dataset: only for exercising the code at scale.

use super::contexts::{Context, ContextSet, Outcome, PoolPassage};
use super::utilities_tsv::PassageInfo;
use super::utility::Judgment;
use crate::stats::rng::SeededRng;

const POOL: usize = 25;

/// `n_questions` context sets (dataset "synthetic", model "synthetic"), deterministic for `seed`.
/// Requires `k ≤ 25`; larger k is clamped to 25.
pub fn context_sets(n_questions: usize, contexts: usize, k: usize, seed: u64) -> Vec<ContextSet> {
    let k = k.clamp(1, POOL);
    let mut rng = SeededRng::new(seed);
    let mut sets = Vec::with_capacity(n_questions);
    let mut relevant_ids = Vec::with_capacity(POOL);
    let mut other_ids = Vec::with_capacity(POOL);
    let mut picked: Vec<u32> = Vec::with_capacity(POOL);
    for q in 0..n_questions {
        let mut pool = Vec::with_capacity(POOL);
        relevant_ids.clear();
        other_ids.clear();
        for i in 0..POOL {
            // At least one relevant passage per question, about 20% overall.
            let relevant = i == 0 || rng.unit() < 0.2;
            let u = rng.unit();
            // Relevant passages rarely make the reader abstain; distractors vary widely.
            let p = if relevant { u * u * u } else { u };
            let erag = if relevant {
                (1.0 - p) * (0.7 + 0.3 * rng.unit())
            } else {
                0.1 * rng.unit()
            };
            if relevant {
                relevant_ids.push(i as u32);
            } else {
                other_ids.push(i as u32);
            }
            pool.push(PoolPassage {
                id: format!("p{i}"),
                info: PassageInfo {
                    judgment: Judgment {
                        relevant,
                        p_no_response: p,
                    },
                    erag: Some(erag),
                },
            });
        }
        let mut ctxs = Vec::with_capacity(contexts);
        for c in 0..contexts {
            picked.clear();
            let with_relevant = c % 2 == 0 || other_ids.len() < k;
            if with_relevant {
                let r = relevant_ids[rng.below(relevant_ids.len() as u64) as usize];
                picked.push(r);
            }
            while picked.len() < k {
                let candidate = if with_relevant {
                    rng.below(POOL as u64) as u32
                } else {
                    other_ids[rng.below(other_ids.len() as u64) as usize]
                };
                if !picked.contains(&candidate) {
                    picked.push(candidate);
                }
            }
            rng.shuffle(&mut picked);
            let outcome = outcome_of(&pool, &picked, &mut rng);
            ctxs.push(Context {
                passages: picked.clone(),
                outcome,
            });
        }
        sets.push(ContextSet {
            qid: format!("q{q}"),
            dataset: "synthetic".into(),
            model: "synthetic".into(),
            line: 0,
            pool,
            contexts: ctxs,
        });
    }
    sets
}

fn outcome_of(pool: &[PoolPassage], picked: &[u32], rng: &mut SeededRng) -> Outcome {
    let k = picked.len() as f64;
    let mut latent = 0.0;
    for (position, &i) in picked.iter().enumerate() {
        let u = pool[i as usize].info.judgment.utility();
        // U-shape: the ends of the context weigh more than the middle.
        let x = if k > 1.0 {
            position as f64 / (k - 1.0)
        } else {
            0.0
        };
        let weight = 0.6 + 1.6 * (x - 0.5) * (x - 0.5);
        latent += if u > 0.0 { weight * u } else { 0.25 * u };
    }
    latent += 0.35 * (rng.unit() - 0.5);
    if latent > 0.35 {
        Outcome::Correct
    } else if latent > 0.05 {
        Outcome::Abstain
    } else {
        Outcome::Wrong
    }
}
