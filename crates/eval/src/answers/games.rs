//! Pairwise games between RAG agents and what can be counted from them before any rating model:
//! the win-rate matrix, games per pair and the position-flip rate.
//!
//! Win rate of i over j = (wins of i over j + ½ ties) / games between i and j (a tie is half a
//! win for each side, as in RAGElo's score mapping A = 1, B = 0, C = 0.5).
//!
//! Position-flip rate (position bias of the judge, Zheng et al. 2023, "Judging LLM-as-a-Judge
//! with MT-Bench and Chatbot Arena", §3.3 "position bias"): over the (query, pair) cells judged in
//! both orders, the share whose verdicts disagree once mapped back to agents — e.g. "A" for
//! (x, y) and "A" for (y, x): the judge preferred whichever answer came first.

use std::collections::BTreeMap;

use indexmap::IndexMap;

/// The judge's verdict on a game: the first-shown answer (`A`) won, the second (`B`), or a tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    A,
    B,
    Tie,
}

impl Verdict {
    /// `A`, `B`, `C` (RAGElo's tie), also as `[[A]]`; surrounding spaces ignored.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        let t = t
            .strip_prefix("[[")
            .and_then(|t| t.strip_suffix("]]"))
            .unwrap_or(t)
            .trim();
        match t {
            "A" | "a" => Some(Self::A),
            "B" | "b" => Some(Self::B),
            "C" | "c" | "tie" | "Tie" | "TIE" => Some(Self::Tie),
            _ => None,
        }
    }

    /// The first agent's score: RAGElo's mapping A = 1, B = 0, C = 0.5.
    pub fn score_a(self) -> f64 {
        match self {
            Self::A => 1.0,
            Self::B => 0.0,
            Self::Tie => 0.5,
        }
    }

    /// The same verdict seen from the other side (agents swapped).
    pub fn swapped(self) -> Self {
        match self {
            Self::A => Self::B,
            Self::B => Self::A,
            Self::Tie => Self::Tie,
        }
    }

    pub fn letter(self) -> &'static str {
        match self {
            Self::A => "A",
            Self::B => "B",
            Self::Tie => "C",
        }
    }
}

/// One game between two agents on one query, agents interned as indexes into [`Games::agents`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Game {
    pub query: usize,
    pub a: usize,
    pub b: usize,
    pub verdict: Verdict,
}

/// Games with agents and queries interned in first-appearance order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Games {
    pub agents: Vec<String>,
    pub queries: Vec<String>,
    pub games: Vec<Game>,
}

impl Games {
    pub fn from_triples<'a, I>(items: I) -> Self
    where
        I: IntoIterator<Item = (&'a str, &'a str, &'a str, Verdict)>,
    {
        let mut agents: IndexMap<String, ()> = IndexMap::new();
        let mut queries: IndexMap<String, ()> = IndexMap::new();
        let mut games = Vec::new();
        for (qid, a, b, verdict) in items {
            let query = queries.insert_full(qid.to_string(), ()).0;
            let a = agents.insert_full(a.to_string(), ()).0;
            let b = agents.insert_full(b.to_string(), ()).0;
            games.push(Game {
                query,
                a,
                b,
                verdict,
            });
        }
        Self {
            agents: agents.into_keys().collect(),
            queries: queries.into_keys().collect(),
            games,
        }
    }

    pub fn from_evaluations(evaluations: &[super::ragelo_csv::PairwiseEvaluation]) -> Self {
        Self::from_triples(evaluations.iter().map(|e| {
            (
                e.qid.as_str(),
                e.agent_a.as_str(),
                e.agent_b.as_str(),
                e.verdict,
            )
        }))
    }
}

/// Counts per ordered pair of agents: `wins[i][j]` = wins of i over j (ties as ½ each side),
/// `games[i][j]` = games between i and j in either order (symmetric).
#[derive(Debug, Clone, PartialEq)]
pub struct PairCounts {
    pub wins: Vec<Vec<f64>>,
    pub games: Vec<Vec<u64>>,
}

/// Per-game kernel: the points each side takes.
pub fn points(game: &Game) -> (f64, f64) {
    let s = game.verdict.score_a();
    (s, 1.0 - s)
}

pub fn pair_counts(games: &Games) -> PairCounts {
    let n = games.agents.len();
    let mut wins = vec![vec![0.0; n]; n];
    let mut count = vec![vec![0u64; n]; n];
    for g in &games.games {
        let (pa, pb) = points(g);
        wins[g.a][g.b] += pa;
        wins[g.b][g.a] += pb;
        count[g.a][g.b] += 1;
        count[g.b][g.a] += 1;
    }
    PairCounts { wins, games: count }
}

/// `rate[i][j]` = share of points i took from j; `None` on the diagonal and for pairs that never met.
pub fn win_rate_matrix(counts: &PairCounts) -> Vec<Vec<Option<f64>>> {
    counts
        .wins
        .iter()
        .zip(&counts.games)
        .map(|(w, g)| {
            w.iter()
                .zip(g)
                .map(|(w, &g)| (g > 0).then(|| w / g as f64))
                .collect()
        })
        .collect()
}

/// Judge consistency under swapped presentation order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionFlips {
    /// (query, unordered pair) cells judged in both orders.
    pub both_orders: usize,
    /// Of those, cells whose two verdicts disagree once mapped back to agents.
    pub flips: usize,
}

impl PositionFlips {
    /// `None` when no pair was judged in both orders.
    pub fn rate(&self) -> Option<f64> {
        (self.both_orders > 0).then(|| self.flips as f64 / self.both_orders as f64)
    }
}

/// Compares, for each query and pair, the first verdict in the order (x, y) with the first in
/// the order (y, x); later repeats of a cell are ignored.
pub fn position_flips(games: &Games) -> PositionFlips {
    let mut first: BTreeMap<(usize, usize, usize), Verdict> = BTreeMap::new();
    for g in &games.games {
        first.entry((g.query, g.a, g.b)).or_insert(g.verdict);
    }
    let mut result = PositionFlips {
        both_orders: 0,
        flips: 0,
    };
    for (&(q, a, b), &v) in &first {
        if a < b {
            if let Some(&w) = first.get(&(q, b, a)) {
                result.both_orders += 1;
                if v != w.swapped() {
                    result.flips += 1;
                }
            }
        }
    }
    result
}
