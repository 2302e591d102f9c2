//! Bradley–Terry strengths of RAG agents from pairwise games (Bradley & Terry 1952, "Rank
//! analysis of incomplete block designs"; the MM algorithm of Hunter 2004, "MM algorithms for
//! generalized Bradley–Terry models", Ann. Statist. 32(1), eq. 3; the rating scale of Chatbot
//! Arena, Chiang et al. 2024 §5).
//!
//! P(i beats j) = π_i / (π_i + π_j). With w_ij the points i took from j (a win 1, a tie ½ for
//! each side) and n_ij the games between them, the maximum-likelihood π maximises
//! Σ_ij w_ij log(π_i / (π_i + π_j)); the MM update is
//!
//! ```text
//! π_i ← W_i / Σ_{j≠i} n_ij / (π_i + π_j),     W_i = Σ_j w_ij
//! ```
//!
//! The MLE exists (and is unique up to scale) iff for every split of the agents into two groups
//! some agent of each group took points from the other (Ford 1957; Hunter 2004, Assumption 1):
//! the "took points from" graph is strongly connected. Otherwise the likelihood grows without
//! bound (an agent that never lost would get π = ∞) and [`BtError::NoMle`] says why.
//!
//! Ratings are on the Elo scale: r_i = 400·log10 π_i, shifted so their mean is `initial`.
//! Uncertainty: bootstrap over queries (resample queries with replacement, keep each sampled
//! query's games), standard error = sample standard deviation of the resampled ratings,
//! percentile 95 % interval; resamples whose MLE does not exist are counted and left out.

use super::games::{pair_counts, Games};
use crate::stats::rng::SeededRng;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BtError {
    #[error("the Bradley–Terry MLE does not exist: {0}")]
    NoMle(String),
    #[error("no games")]
    Empty,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BtRating {
    pub agent: String,
    pub rating: f64,
    /// Bootstrap standard error (0 without resamples).
    pub std: f64,
    /// Percentile 95 % bootstrap interval (the estimate itself without resamples).
    pub ci_low: f64,
    pub ci_high: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BtResult {
    pub ratings: Vec<BtRating>,
    pub resamples: usize,
    /// Resamples left out because their MLE does not exist.
    pub failed_resamples: usize,
}

/// Ratings (Elo scale, mean `initial`) from points `wins[i][j]` and game counts `games[i][j]`.
pub fn fit(
    agents: &[String],
    wins: &[Vec<f64>],
    games: &[Vec<u64>],
    initial: f64,
) -> Result<Vec<f64>, BtError> {
    let n = agents.len();
    if n == 0 {
        return Err(BtError::Empty);
    }
    check_existence(agents, wins)?;
    let total: Vec<f64> = wins.iter().map(|row| row.iter().sum()).collect();
    let mut p = vec![1.0f64; n];
    // MM converges linearly; 1e-13 in log π is far below what any rating prints.
    for _ in 0..200_000 {
        let mut next = vec![0.0; n];
        for i in 0..n {
            let denominator: f64 = (0..n)
                .filter(|&j| j != i && games[i][j] > 0)
                .map(|j| games[i][j] as f64 / (p[i] + p[j]))
                .sum();
            next[i] = total[i] / denominator;
        }
        let log_mean = next.iter().map(|v| v.ln()).sum::<f64>() / n as f64;
        let mut change = 0.0f64;
        for i in 0..n {
            let v = next[i] / log_mean.exp();
            change = change.max((v.ln() - p[i].ln()).abs());
            p[i] = v;
        }
        if change < 1e-13 {
            break;
        }
    }
    let r: Vec<f64> = p.iter().map(|v| 400.0 * v.log10()).collect();
    let mean = r.iter().sum::<f64>() / n as f64;
    Ok(r.into_iter().map(|v| v - mean + initial).collect())
}

/// Ford's condition, with a message naming the agents at fault.
fn check_existence(agents: &[String], wins: &[Vec<f64>]) -> Result<(), BtError> {
    let n = agents.len();
    if n == 1 {
        return Err(BtError::NoMle(format!(
            "only one agent ({}) played",
            agents[0]
        )));
    }
    for i in 0..n {
        if (0..n).all(|j| wins[i][j] <= 0.0) {
            return Err(BtError::NoMle(format!(
                "agent '{}' never won or tied a game",
                agents[i]
            )));
        }
        if (0..n).all(|j| wins[j][i] <= 0.0) {
            return Err(BtError::NoMle(format!(
                "agent '{}' never lost or tied a game",
                agents[i]
            )));
        }
    }
    // Agents reachable from agent 0 along "took points from", and those reaching it.
    let reach = |forward: bool| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..n {
                let edge = if forward { wins[i][j] } else { wins[j][i] };
                if edge > 0.0 && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen
    };
    for forward in [true, false] {
        let seen = reach(forward);
        if seen.iter().any(|s| !s) {
            let names = |want: bool| {
                (0..n)
                    .filter(|&i| seen[i] == want)
                    .map(|i| agents[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (winners, losers) = if forward {
                (names(true), names(false))
            } else {
                (names(false), names(true))
            };
            return Err(BtError::NoMle(format!(
                "agents {{{losers}}} never won or tied against {{{winners}}}"
            )));
        }
    }
    Ok(())
}

/// Point estimate and bootstrap over queries (`resamples` = 0: none).
pub fn bradley_terry(
    games: &Games,
    initial: f64,
    resamples: usize,
    seed: u64,
) -> Result<BtResult, BtError> {
    if games.games.is_empty() {
        return Err(BtError::Empty);
    }
    let counts = pair_counts(games);
    let point = fit(&games.agents, &counts.wins, &counts.games, initial)?;
    let n = games.agents.len();
    let q = games.queries.len();
    let mut by_query: Vec<Vec<usize>> = vec![Vec::new(); q];
    for (i, g) in games.games.iter().enumerate() {
        by_query[g.query].push(i);
    }
    let mut rng = SeededRng::new(seed);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); n];
    let mut failed = 0;
    for _ in 0..resamples {
        let mut resampled = Games {
            agents: games.agents.clone(),
            queries: games.queries.clone(),
            games: Vec::with_capacity(games.games.len()),
        };
        for _ in 0..q {
            let pick = rng.below(q as u64) as usize;
            resampled
                .games
                .extend(by_query[pick].iter().map(|&i| games.games[i]));
        }
        let c = pair_counts(&resampled);
        match fit(&games.agents, &c.wins, &c.games, initial) {
            Ok(r) => {
                for (i, v) in r.into_iter().enumerate() {
                    samples[i].push(v);
                }
            }
            Err(_) => failed += 1,
        }
    }
    let ratings = games
        .agents
        .iter()
        .enumerate()
        .map(|(i, agent)| {
            let s = &mut samples[i];
            let (std, low, high) = if s.len() >= 2 {
                let m = s.iter().sum::<f64>() / s.len() as f64;
                let var = s.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (s.len() - 1) as f64;
                s.sort_by(f64::total_cmp);
                (var.sqrt(), percentile(s, 0.025), percentile(s, 0.975))
            } else {
                (0.0, point[i], point[i])
            };
            BtRating {
                agent: agent.clone(),
                rating: point[i],
                std,
                ci_low: low,
                ci_high: high,
            }
        })
        .collect();
    Ok(BtResult {
        ratings,
        resamples,
        failed_resamples: failed,
    })
}

/// Linear interpolation between order statistics (numpy's default percentile method).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}
