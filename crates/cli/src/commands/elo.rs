//! `ragscope elo`: Elo (RAGElo's tournaments) or Bradley–Terry ratings of RAG agents from a
//! RAGElo pairwise evaluations CSV (or RAGElo's answers_eval JSONL).

use std::process::ExitCode;

use ragscope_eval::answers::elo::{EloCompat, EloParams};
use ragscope_eval::answers::games::Games;
use ragscope_eval::answers::leaderboard::{leaderboard, Leaderboard};
use ragscope_eval::answers::{files, json_report};

use super::common::{Format, Grid};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    Elo,
    BradleyTerry,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// PyPI ragelo 0.7.0's EloRanker (int() after every game, games sorted and collapsed)
    Ragelo,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Games: RAGElo pairwise evaluations CSV (qid,agent_a,agent_b,...,answer) or answers_eval JSONL
    pub games: String,
    /// Elo K factor
    #[arg(long, default_value_t = 32.0)]
    pub k: f64,
    /// Starting Elo rating (and the mean of Bradley–Terry ratings)
    #[arg(long, default_value_t = 1000.0)]
    pub initial: f64,
    /// Elo tournaments (the result is their mean ± population std)
    #[arg(long, default_value_t = 10)]
    pub tournaments: usize,
    /// Seed of the game shuffles and of the Bradley–Terry bootstrap
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Play the games in file order
    #[arg(long)]
    pub no_shuffle: bool,
    /// Reproduce another tool's Elo exactly
    #[arg(long, value_enum)]
    pub compat: Option<Compat>,
    /// Rating model
    #[arg(long, value_enum, default_value_t = Model::Elo)]
    pub model: Model,
    /// Bootstrap resamples over queries for Bradley–Terry standard errors and intervals
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match execute(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("ragscope elo: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Reads a pairwise evaluations CSV or an answers_eval JSONL file into games.
pub fn read_games(path: &str) -> Result<Games, String> {
    files::read_games(path)
}

fn execute(args: &Args) -> Result<String, String> {
    if !(args.k.is_finite() && args.initial.is_finite()) {
        return Err("--k and --initial must be finite numbers".to_string());
    }
    if args.tournaments == 0 {
        return Err("--tournaments must be at least 1".to_string());
    }
    if args.compat.is_some() && args.model == Model::BradleyTerry {
        return Err("--compat ragelo applies to --model elo only".to_string());
    }
    let games = read_games(&args.games)?;
    let params = EloParams {
        k: args.k,
        initial: args.initial,
        tournaments: args.tournaments,
        seed: args.seed,
        shuffle: !args.no_shuffle,
        compat: match args.compat {
            Some(Compat::Ragelo) => EloCompat::Ragelo,
            None => EloCompat::Exact,
        },
    };
    let resamples = if args.model == Model::BradleyTerry {
        args.resamples
    } else {
        0
    };
    let board = leaderboard(&games, &params, resamples);
    if args.model == Model::BradleyTerry {
        if let Some(e) = &board.bt_error {
            return Err(format!("{}: {e}", args.games));
        }
    }
    Ok(match args.format {
        Format::Json => json(&board, args.model),
        other => grid(&board, args.model).render(other),
    })
}

/// `{"model":..,"ratings":{AGENT:{"rating":x,"std":y}}}`, best first, full f64 precision.
fn json(board: &Leaderboard, model: Model) -> String {
    format!(
        "{}\n",
        json_report::ratings(board, model == Model::BradleyTerry)
    )
}

fn grid(board: &Leaderboard, model: Model) -> Grid {
    let mut notes = vec![format!(
        "{} games on {} queries",
        board.total_games, board.queries
    )];
    if let Some(rate) = board.flips.rate() {
        notes.push(format!(
            "position flips: {}/{} pairs judged in both orders ({:.1}%)",
            board.flips.flips,
            board.flips.both_orders,
            100.0 * rate
        ));
    }
    let mut header: Vec<String> = ["rank", "agent"].map(String::from).to_vec();
    let mut cells = Vec::new();
    match model {
        Model::Elo => {
            header.extend(["elo", "std"].map(String::from));
            if let Some(e) = &board.bt_error {
                notes.push(format!("Bradley–Terry: {e}"));
            }
        }
        Model::BradleyTerry => {
            header.extend(["bt", "se", "ci_low", "ci_high"].map(String::from));
            notes.push(format!(
                "Bradley–Terry: bootstrap over queries, {} resamples{}",
                board.bt_resamples,
                if board.bt_failed_resamples > 0 {
                    format!(" ({} without an MLE left out)", board.bt_failed_resamples)
                } else {
                    String::new()
                }
            ));
        }
    }
    header.extend(["games", "wins", "losses", "ties"].map(String::from));
    let mut rows: Vec<_> = board.rows.iter().collect();
    if model == Model::BradleyTerry {
        rows.sort_by(|x, y| {
            let r = |row: &&ragscope_eval::answers::leaderboard::AgentRow| {
                row.bt.as_ref().map_or(f64::NEG_INFINITY, |b| b.rating)
            };
            r(y).total_cmp(&r(x))
        });
    }
    for (rank, r) in rows.into_iter().enumerate() {
        let mut row = vec![(rank + 1).to_string(), r.agent.clone()];
        match (model, &r.bt) {
            (Model::BradleyTerry, Some(bt)) => row.extend([
                format!("{:.1}", bt.rating),
                format!("{:.1}", bt.std),
                format!("{:.1}", bt.ci_low),
                format!("{:.1}", bt.ci_high),
            ]),
            _ => row.extend([format!("{:.1}", r.elo.rating), format!("{:.1}", r.elo.std)]),
        }
        row.extend([
            r.games.to_string(),
            r.wins.to_string(),
            r.losses.to_string(),
            r.ties.to_string(),
        ]);
        cells.push(row);
    }
    Grid {
        header,
        cells,
        label_columns: 2,
        latex_cells: None,
        notes,
    }
}
