//! Reading the answer-level input files of `ragscope nuggets score`, `elo`, `citations` and
//! `agreement` (moved from the CLI so the Python package reads them the same way). Every error
//! names the file, and the line where the format allows.

use super::citation_judgments;
use super::citations::{self, AnswerCitations, RunCitations};
use super::games::Games;
use super::nuggetizer::{self, file_stem, AssignedRun};
use super::open_rag_eval;
use super::topic_scores::{self, TopicScores};
use super::{ragelo_csv, ragelo_jsonl};

fn read_text(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))
}

/// The runs of one nuggetizer assignments file (JSON Lines), or of an Open RAG Eval results
/// CSV (a `.csv` name), for `nuggets score`.
pub fn read_nugget_runs(path: &str) -> Result<Vec<AssignedRun>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    let stem = file_stem(path);
    if path.to_ascii_lowercase().ends_with(".csv") {
        let scored = open_rag_eval::read_results(path, file).map_err(|e| e.to_string())?;
        let runs = open_rag_eval::assigned_runs(path, stem, &scored).map_err(|e| e.to_string())?;
        if runs.is_empty() {
            return Err(format!("{path}: no AutoNugget judgments in the file"));
        }
        return Ok(runs);
    }
    let answers = nuggetizer::read_assignments(path, file).map_err(|e| e.to_string())?;
    nuggetizer::group_runs(path, stem, answers).map_err(|e| e.to_string())
}

/// The games of a RAGElo pairwise evaluations CSV or answers_eval JSONL file, for `elo`.
pub fn read_games(path: &str) -> Result<Games, String> {
    let text = read_text(path)?;
    let evaluations = if ragelo_jsonl::looks_like(&text) {
        ragelo_jsonl::parse(path, &text)
    } else {
        match ragelo_csv::kind_of(&text) {
            Some(ragelo_csv::RageloKind::PairwiseEvaluations) | None => {
                ragelo_csv::parse_pairwise(path, &text)
            }
            Some(other) => {
                return Err(format!(
                    "{path}: this is a {} file; elo needs the pairwise evaluations \
                     (qid,agent_a,agent_b,...,answer)",
                    other.label()
                ))
            }
        }
    };
    evaluations
        .map(|e| Games::from_evaluations(&e))
        .map_err(|e| e.to_string())
}

/// The citation scores of one Open RAG Eval results CSV (each repetition n of the file is a
/// run named `FILE_STEM#run_n`) or of `ragscope judge citations`' JSONL (a leading `{`).
pub fn read_citation_runs(path: &str) -> Result<Vec<RunCitations>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    let head = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if head == Some(&b'{') || bytes.starts_with("\u{feff}{".as_bytes()) {
        let judgments = citation_judgments::parse(path, &bytes).map_err(|e| e.to_string())?;
        return Ok(citation_judgments::score_runs(&judgments));
    }
    let scored = open_rag_eval::read_results(path, bytes.as_slice()).map_err(|e| e.to_string())?;
    let stem = file_stem(path);
    let mut runs: Vec<(u32, Vec<AnswerCitations>)> = Vec::new();
    for s in scored {
        let answer = AnswerCitations {
            qid: s.query_id.clone(),
            scores: s
                .citation_averages
                .as_ref()
                .map(|(c, p)| citations::from_averages(c, p)),
            answered: s.answered,
        };
        match runs.iter_mut().find(|(n, _)| *n == s.run) {
            Some((_, v)) => v.push(answer),
            None => runs.push((s.run, vec![answer])),
        }
    }
    runs.sort_by_key(|(n, _)| *n);
    Ok(runs
        .into_iter()
        .map(|(n, answers)| citations::aggregate(&format!("{stem}#run_{n}"), answers))
        .collect())
}

/// Whether `agreement` reads the file as per-topic scores: score files start with `{` (nugget
/// JSON) or have three fields a line (trec_eval -q); qrels have four.
pub fn looks_like_scores(path: &str) -> Result<bool, String> {
    let text = read_text(path)?;
    let text = text.trim_start_matches('\u{feff}').trim_start();
    Ok(text.starts_with('{')
        || text
            .lines()
            .next()
            .is_some_and(|l| l.split_whitespace().count() == 3))
}

/// A per-topic score file for `agreement --kind runs`.
pub fn read_topic_scores(path: &str, measure: Option<&str>) -> Result<TopicScores, String> {
    let text = read_text(path)?;
    topic_scores::parse(path, &text, measure).map_err(|e| e.to_string())
}
