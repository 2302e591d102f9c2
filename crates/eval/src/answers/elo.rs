//! Elo ratings of RAG agents from pairwise games, as in RAGElo (Rackauckas, Câmara, Zavrel 2024,
//! "Evaluating RAG-Fusion with RAGElo: an Automated Elo-based Framework", §3; code
//! zetaalphavector/RAGElo `ragelo/agent_rankers/elo_ranker.py`).
//!
//! Per game between A and B with A's score S_A ∈ {1, ½, 0} (RAGElo's A = 1, B = 0, C = 0.5):
//!
//! ```text
//! E_A  = 1 / (1 + 10^((R_B − R_A) / 400))          (Elo 1978; the standard expected score)
//! R_A' = R_A + K (S_A − E_A)
//! R_B' = R_B + K ((1 − S_A) − (1 − E_A))          both from the pre-game ratings: zero-sum
//! ```
//!
//! A tournament starts every agent at `initial` and plays the games once, in an order shuffled
//! with the seeded stream ([`crate::stats::rng::SeededRng`], one stream across tournaments) or in
//! file order (`shuffle = false`). The result is the mean over tournaments ± the population
//! standard deviation (numpy's `np.std`, ddof = 0), RAGElo's defaults: K = 32, initial 1000,
//! 10 tournaments.
//!
//! [`EloCompat::Ragelo`] reproduces PyPI ragelo 0.7.0 exactly: ratings are truncated toward zero
//! with `int()` after every game; the two agents of a game are sorted by name while the verdict
//! letter stays as written (ragelo's `PairwiseGame` sorts its answers, its result keeps `winner`);
//! only the first verdict of a (query, pair of agents) is played (`game_id` ignores the order, and
//! a second evaluation of a game is dropped); games are played grouped by query in
//! first-appearance order (ragelo iterates queries, then each query's games).

use super::games::{Game, Games};
use crate::stats::rng::SeededRng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EloCompat {
    /// Real-valued ratings, every game as written.
    Exact,
    /// PyPI ragelo 0.7.0's `EloRanker`.
    Ragelo,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloParams {
    pub k: f64,
    pub initial: f64,
    pub tournaments: usize,
    pub seed: u64,
    pub shuffle: bool,
    pub compat: EloCompat,
}

impl Default for EloParams {
    /// RAGElo's defaults.
    fn default() -> Self {
        Self {
            k: 32.0,
            initial: 1000.0,
            tournaments: 10,
            seed: 0,
            shuffle: true,
            compat: EloCompat::Exact,
        }
    }
}

/// An agent's final rating: mean over tournaments and population standard deviation.
#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    pub agent: String,
    pub rating: f64,
    pub std: f64,
}

/// E_A = 1 / (1 + 10^((R_B − R_A)/400)): A's expected score against B.
pub fn expected_score(r_a: f64, r_b: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf((r_b - r_a) / 400.0))
}

/// The per-game kernel: both new ratings, from the pre-game ones. `truncate` applies ragelo's
/// `int()` (toward zero).
pub fn update(r_a: f64, r_b: f64, score_a: f64, k: f64, truncate: bool) -> (f64, f64) {
    let e = expected_score(r_a, r_b);
    let a = r_a + k * (score_a - e);
    let b = r_b + k * ((1.0 - score_a) - (1.0 - e));
    if truncate {
        (a.trunc(), b.trunc())
    } else {
        (a, b)
    }
}

/// The games a tournament plays, in the base order: as written, or ragelo 0.7.0's view of them.
pub fn schedule(games: &Games, compat: EloCompat) -> Vec<Game> {
    match compat {
        EloCompat::Exact => games.games.clone(),
        EloCompat::Ragelo => {
            let mut by_query: Vec<Vec<Game>> = vec![Vec::new(); games.queries.len()];
            let mut seen = std::collections::HashSet::new();
            for g in &games.games {
                let (a, b) = if games.agents[g.a] <= games.agents[g.b] {
                    (g.a, g.b)
                } else {
                    (g.b, g.a)
                };
                if seen.insert((g.query, a, b)) {
                    by_query[g.query].push(Game { a, b, ..*g });
                }
            }
            by_query.into_iter().flatten().collect()
        }
    }
}

/// One tournament over `order`: every agent starts at `initial`.
pub fn tournament(order: &[Game], agents: usize, params: &EloParams) -> Vec<f64> {
    let truncate = params.compat == EloCompat::Ragelo;
    let mut ratings = vec![params.initial; agents];
    for g in order {
        let (a, b) = update(
            ratings[g.a],
            ratings[g.b],
            g.verdict.score_a(),
            params.k,
            truncate,
        );
        ratings[g.a] = a;
        ratings[g.b] = b;
    }
    ratings
}

/// Ratings of every agent (in [`Games::agents`] order): mean ± population std over tournaments.
pub fn elo(games: &Games, params: &EloParams) -> Vec<Rating> {
    let base = schedule(games, params.compat);
    let n = games.agents.len();
    let tournaments = params.tournaments.max(1);
    let mut rng = SeededRng::new(params.seed);
    let mut results: Vec<Vec<f64>> = vec![Vec::with_capacity(tournaments); n];
    let mut order = base.clone();
    for _ in 0..tournaments {
        order.clone_from(&base);
        if params.shuffle {
            rng.shuffle(&mut order);
        }
        for (i, r) in tournament(&order, n, params).into_iter().enumerate() {
            results[i].push(r);
        }
    }
    games
        .agents
        .iter()
        .zip(results)
        .map(|(agent, values)| {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let var =
                values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / values.len() as f64;
            Rating {
                agent: agent.clone(),
                rating: mean,
                std: var.sqrt(),
            }
        })
        .collect()
}

/// Agent indexes from best to worst rating; equal ratings keep the order in which agents first
/// play in the base schedule (ragelo's dict order without shuffling; file order otherwise).
pub fn ranking(games: &Games, ratings: &[Rating], compat: EloCompat) -> Vec<usize> {
    let mut first = vec![usize::MAX; games.agents.len()];
    let mut next = 0;
    for g in schedule(games, compat) {
        for a in [g.a, g.b] {
            if first[a] == usize::MAX {
                first[a] = next;
                next += 1;
            }
        }
    }
    let mut order: Vec<usize> = (0..ratings.len()).collect();
    order.sort_by(|&x, &y| {
        ratings[y]
            .rating
            .total_cmp(&ratings[x].rating)
            .then(first[x].cmp(&first[y]))
    });
    order
}
