//! One tournament summary for the CLI and the app: Elo and Bradley–Terry side by side, win / loss
//! / tie counts, the win-rate matrix, games per pair and the position-flip rate.

use super::bradley_terry::{bradley_terry, BtRating};
use super::elo::{elo, ranking, EloParams, Rating};
use super::games::{pair_counts, position_flips, win_rate_matrix, Games, PositionFlips, Verdict};

#[derive(Debug, Clone, PartialEq)]
pub struct AgentRow {
    pub agent: String,
    pub elo: Rating,
    /// `None` when the Bradley–Terry MLE does not exist (see [`Leaderboard::bt_error`]).
    pub bt: Option<BtRating>,
    pub games: u64,
    pub wins: u64,
    pub losses: u64,
    pub ties: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Leaderboard {
    /// Agents sorted by Elo rating, best first (ties: see [`ranking`]).
    pub rows: Vec<AgentRow>,
    pub bt_error: Option<String>,
    pub bt_resamples: usize,
    pub bt_failed_resamples: usize,
    /// Agents in first-appearance order (the matrices' order).
    pub agents: Vec<String>,
    pub win_rate: Vec<Vec<Option<f64>>>,
    pub games_per_pair: Vec<Vec<u64>>,
    pub flips: PositionFlips,
    pub total_games: usize,
    pub queries: usize,
}

pub fn leaderboard(games: &Games, params: &EloParams, resamples: usize) -> Leaderboard {
    let ratings = elo(games, params);
    let (bt, bt_error, failed) = match bradley_terry(games, params.initial, resamples, params.seed)
    {
        Ok(r) => (Some(r.ratings), None, r.failed_resamples),
        Err(e) => (None, Some(e.to_string()), 0),
    };
    let n = games.agents.len();
    let (mut wins, mut losses, mut ties) = (vec![0u64; n], vec![0u64; n], vec![0u64; n]);
    for g in &games.games {
        match g.verdict {
            Verdict::A => {
                wins[g.a] += 1;
                losses[g.b] += 1;
            }
            Verdict::B => {
                wins[g.b] += 1;
                losses[g.a] += 1;
            }
            Verdict::Tie => {
                ties[g.a] += 1;
                ties[g.b] += 1;
            }
        }
    }
    let order = ranking(games, &ratings, params.compat);
    let rows = order
        .into_iter()
        .map(|i| AgentRow {
            agent: games.agents[i].clone(),
            elo: ratings[i].clone(),
            bt: bt.as_ref().map(|b| b[i].clone()),
            games: wins[i] + losses[i] + ties[i],
            wins: wins[i],
            losses: losses[i],
            ties: ties[i],
        })
        .collect();
    let counts = pair_counts(games);
    Leaderboard {
        rows,
        bt_error,
        bt_resamples: resamples,
        bt_failed_resamples: failed,
        agents: games.agents.clone(),
        win_rate: win_rate_matrix(&counts),
        games_per_pair: counts.games,
        flips: position_flips(games),
        total_games: games.games.len(),
        queries: games.queries.len(),
    }
}
