//! What the worker sends for the Tournament and Agreement views (part of [`super::Report`]).

use serde::{Deserialize, Serialize};

/// One games file (RAGElo pairwise evaluations): Elo and Bradley–Terry side by side.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct TournamentTable {
    pub file: String,
    pub games: usize,
    pub queries: usize,
    /// How the ratings were computed (K, initial, tournaments, seed, resamples).
    pub settings: String,
    /// Sorted by Elo, best first.
    pub rows: Vec<LeaderRow>,
    /// Why there are no Bradley–Terry ratings (the MLE does not exist), if so.
    pub bt_note: Option<String>,
    /// Agents in first-appearance order: the order of the matrices.
    pub agents: Vec<String>,
    /// `win_rate[i][j]`: share of points agent i took from agent j; `None`: they never met.
    pub win_rate: Vec<Vec<Option<f64>>>,
    pub games_per_pair: Vec<Vec<u64>>,
    /// (pairs whose verdicts flip with the presentation order, pairs judged in both orders).
    pub flips: (usize, usize),
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LeaderRow {
    pub agent: String,
    pub elo: f64,
    pub elo_std: f64,
    pub bt: Option<BtCell>,
    pub games: u64,
    pub wins: u64,
    pub losses: u64,
    pub ties: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct BtCell {
    pub rating: f64,
    pub se: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Two judgments of the same items (two qrels files) compared.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct AgreementTable {
    pub a: String,
    pub b: String,
    /// "labels" or "grades".
    pub kind: String,
    pub rows: Vec<AgreementRow>,
    pub only_a: usize,
    pub only_b: usize,
    /// (label in A, label in B, items).
    pub confusion: Vec<(i64, i64, usize)>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct AgreementRow {
    pub statistic: String,
    pub value: Option<f64>,
    pub items: usize,
}
