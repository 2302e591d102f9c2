//! The worker's side of the Tournament and Agreement views: RAGElo files kept as parsed games,
//! the qrels a newer qrels file replaced (the second judgment of the Agreement view), and the
//! tables built from them with crates/eval.

use ragscope_eval::answers::agreement_report::{default_kind, labels_report};
use ragscope_eval::answers::elo::EloParams;
use ragscope_eval::answers::games::Games;
use ragscope_eval::answers::leaderboard::leaderboard;
use ragscope_eval::answers::ragelo_csv::{self, RageloFile};
use ragscope_eval::answers::ragelo_jsonl;
use ragscope_eval::formats::Qrels;
use ragscope_protocol::tournament::{
    AgreementRow, AgreementTable, BtCell, LeaderRow, TournamentTable,
};
use ragscope_protocol::{FileId, FileKind};

/// Bootstrap resamples of the Bradley–Terry intervals (the CLI's default).
pub const BT_RESAMPLES: usize = 1000;

#[derive(Default)]
pub struct TournamentFiles {
    games: Vec<(FileId, String, Games)>,
    /// The ids of the RAGElo queries, documents and answers files checked here (parsed for their
    /// summary line, then dropped). Nothing reads this list: the pairwise and pointwise judges
    /// read these files' text from `JudgeFiles::sources`
    /// (crates/worker/src/engine/judges/files.rs).
    tables: Vec<FileId>,
    /// The qrels that the current one replaced.
    pub previous_qrels: Option<(FileId, String, Qrels)>,
}

impl TournamentFiles {
    pub fn is_empty(&self) -> bool {
        self.games.is_empty() && self.tables.is_empty() && self.previous_qrels.is_none()
    }

    pub fn remove(&mut self, id: FileId) {
        self.games.retain(|(g, _, _)| *g != id);
        self.tables.retain(|t| *t != id);
        if self
            .previous_qrels
            .as_ref()
            .is_some_and(|(q, _, _)| *q == id)
        {
            self.previous_qrels = None;
        }
    }

    /// Parses a RAGElo file; the summary line for the file list.
    pub fn keep(
        &mut self,
        id: FileId,
        name: &str,
        text: &str,
    ) -> Result<(FileKind, String), String> {
        let parsed = if ragelo_jsonl::looks_like(text) {
            ragelo_jsonl::parse(name, text).map(RageloFile::PairwiseEvaluations)
        } else {
            ragelo_csv::parse(name, text)
        }
        .map_err(|e| e.to_string())?;
        let count = |qids: Vec<&str>| {
            let mut q = qids;
            q.sort_unstable();
            q.dedup();
            q.len()
        };
        let summary = match parsed {
            RageloFile::PairwiseEvaluations(e) => {
                let games = Games::from_evaluations(&e);
                let summary = format!(
                    "{} games, {} agents, {} queries",
                    games.games.len(),
                    games.agents.len(),
                    games.queries.len()
                );
                self.games.push((id, name.to_string(), games));
                return Ok((FileKind::RageloGames, summary));
            }
            RageloFile::Queries(q) => format!("RAGElo queries: {}", q.len()),
            RageloFile::Documents(d) => format!(
                "RAGElo documents: {} for {} queries",
                d.len(),
                count(d.iter().map(|x| x.qid.as_str()).collect())
            ),
            RageloFile::Answers(a) => format!(
                "RAGElo answers: {} for {} queries",
                a.len(),
                count(a.iter().map(|x| x.qid.as_str()).collect())
            ),
        };
        self.tables.push(id);
        Ok((FileKind::RageloTable, summary))
    }

    pub fn tables(&self) -> Vec<TournamentTable> {
        let params = EloParams::default();
        self.games
            .iter()
            .map(|(_, name, games)| {
                let board = leaderboard(games, &params, BT_RESAMPLES);
                TournamentTable {
                    file: name.clone(),
                    games: board.total_games,
                    queries: board.queries,
                    settings: format!(
                        "Elo: K {}, initial {}, {} tournaments of shuffled games (seed {}), mean ± population std. \
                         Bradley–Terry: MLE on the Elo scale (mean {}), {} bootstrap resamples over queries{}.",
                        params.k,
                        params.initial,
                        params.tournaments,
                        params.seed,
                        params.initial,
                        board.bt_resamples,
                        if board.bt_failed_resamples > 0 {
                            format!(" ({} without an MLE left out)", board.bt_failed_resamples)
                        } else {
                            String::new()
                        }
                    ),
                    rows: board
                        .rows
                        .iter()
                        .map(|r| LeaderRow {
                            agent: r.agent.clone(),
                            elo: r.elo.rating,
                            elo_std: r.elo.std,
                            bt: r.bt.as_ref().map(|b| BtCell {
                                rating: b.rating,
                                se: b.std,
                                ci_low: b.ci_low,
                                ci_high: b.ci_high,
                            }),
                            games: r.games,
                            wins: r.wins,
                            losses: r.losses,
                            ties: r.ties,
                        })
                        .collect(),
                    bt_note: board.bt_error.clone(),
                    agents: board.agents.clone(),
                    win_rate: board.win_rate.clone(),
                    games_per_pair: board.games_per_pair.clone(),
                    flips: (board.flips.flips, board.flips.both_orders),
                }
            })
            .collect()
    }

    /// The replaced qrels against the current one.
    pub fn agreement(&self, current: Option<&(FileId, String, Qrels)>) -> Option<AgreementTable> {
        let (_, a_name, a) = self.previous_qrels.as_ref()?;
        let (_, b_name, b) = current?;
        let report = labels_report(a, b, default_kind(a, b));
        Some(AgreementTable {
            a: a_name.clone(),
            b: b_name.clone(),
            kind: report.kind.name().to_string(),
            rows: report
                .rows
                .iter()
                .map(|r| AgreementRow {
                    statistic: r.statistic.to_string(),
                    value: r.value,
                    items: r.items,
                })
                .collect(),
            only_a: report.only_a,
            only_b: report.only_b,
            confusion: report.confusion,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Workspace;
    use ragscope_protocol::{EvalRequest, FileKind, Report, Request, Response, SigTest};

    fn shared(path: &str) -> Vec<u8> {
        let root = concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/../shared/data/"
        );
        std::fs::read(format!("{root}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn load(ws: &mut Workspace, id: u32, name: &str, bytes: &[u8]) -> Response {
        ws.handle(Request::LoadStart {
            id,
            name: name.into(),
            size: bytes.len() as u64,
        });
        for chunk in bytes.chunks(100_000) {
            if let [r @ Response::LoadFailed { .. }] = ws
                .handle(Request::LoadChunk {
                    id,
                    bytes: chunk.to_vec(),
                })
                .as_slice()
            {
                return r.clone();
            }
        }
        ws.handle(Request::LoadEnd { id }).remove(0)
    }

    fn report(ws: &mut Workspace) -> Report {
        match ws
            .handle(Request::Evaluate(EvalRequest {
                measures: vec!["MAP".into()],
                baseline: None,
                test: SigTest::PairedT,
                generation: 1,
            }))
            .pop()
        {
            Some(Response::Report(r)) => *r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_notebook_experiment_gives_the_cli_leaderboard() {
        let mut ws = Workspace::default();
        for (id, file) in ["queries.csv", "answers.csv", "documents.csv"]
            .iter()
            .enumerate()
        {
            match load(
                &mut ws,
                id as u32,
                file,
                &shared(&format!("ragelo/notebooks/{file}")),
            ) {
                Response::Loaded { kind, .. } => assert_eq!(kind, FileKind::RageloTable),
                other => panic!("{file}: {other:?}"),
            }
        }
        let games = shared("ragelo/notebooks/pairwise_answers_evaluations.csv");
        match load(&mut ws, 9, "pairwise.csv", &games) {
            Response::Loaded { kind, summary, .. } => {
                assert_eq!(kind, FileKind::RageloGames);
                assert_eq!(summary, "200 games, 6 agents, 10 queries");
            }
            other => panic!("{other:?}"),
        }
        let r = report(&mut ws);
        assert_eq!(r.tournaments.len(), 1);
        let t = &r.tournaments[0];
        // The same numbers as `ragscope elo` (the CLI's defaults: K 32, 1000, 10 tournaments,
        // seed 0) and `--model bradley-terry`, both from crates/eval.
        let text = String::from_utf8(games).unwrap();
        let evaluations = ragscope_eval::answers::ragelo_csv::parse_pairwise("p", &text).unwrap();
        let g = ragscope_eval::answers::games::Games::from_evaluations(&evaluations);
        let elo = ragscope_eval::answers::elo::elo(&g, &Default::default());
        for row in &t.rows {
            let e = elo.iter().find(|e| e.agent == row.agent).unwrap();
            assert_eq!((row.elo, row.elo_std), (e.rating, e.std));
            assert!(row.bt.is_some());
        }
        assert_eq!(t.flips, (23, 68));
        assert!(t.rows.windows(2).all(|w| w[0].elo >= w[1].elo));
        assert!(r.agreement.is_none());
        // Removing the file removes its table.
        ws.handle(Request::Remove { id: 9 });
        assert!(report(&mut ws).tournaments.is_empty());
    }

    #[test]
    fn two_qrels_files_are_compared() {
        let mut ws = Workspace::default();
        load(
            &mut ws,
            1,
            "one.qrels",
            b"1 0 d0 2\n1 0 d1 1\n1 0 d2 2\n1 0 d3 3\n",
        );
        load(
            &mut ws,
            2,
            "two.qrels",
            b"1 0 d0 1\n1 0 d1 1\n1 0 d2 3\n1 0 d3 3\n1 0 d4 0\n",
        );
        let a = report(&mut ws).agreement.expect("agreement");
        assert_eq!(
            (a.a.as_str(), a.b.as_str(), a.kind.as_str()),
            ("one.qrels", "two.qrels", "grades")
        );
        assert_eq!((a.only_a, a.only_b), (0, 1));
        assert!(a.rows.iter().all(|r| r.items == 4));
        // Removing the current qrels makes the earlier one current again: nothing to compare.
        ws.handle(Request::Remove { id: 2 });
        let r = report(&mut ws);
        assert!(r.agreement.is_none());
        assert_eq!(r.qrels, "one.qrels");
    }

    #[test]
    fn a_bad_games_file_is_refused_and_loses_nothing() {
        let mut ws = Workspace::default();
        load(
            &mut ws,
            1,
            "good.csv",
            &shared("ragelo/tests_data/pairwise_answers_evaluations.csv"),
        );
        match load(
            &mut ws,
            2,
            "bad.csv",
            b"qid,agent_a,agent_b,answer\nq,x,y,maybe\n",
        ) {
            Response::LoadFailed { error, .. } => {
                assert_eq!(
                    error,
                    "bad.csv:2:7: field `answer`: verdict 'maybe' is not A, B or C (tie)"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(report(&mut ws).tournaments.len(), 1);
    }
}
