//! `ragscope judge nuggets|pairwise|pointwise|citations`: the answer-side judges of
//! `ragscope-judge` (AutoNuggetizer, RAGElo battles and grades, Open RAG Eval citation support)
//! with the options, log and exit codes of `judge umbrela` (see judge.rs).

use super::judge::{drive, drive_rounds, usage, CommonArgs};
use super::utility::{read_passages, Failure};
use ragscope_judge::task::answer_jobs::{self, CreateRounds, Loaded, RageloInputs};
use ragscope_judge::task::citations::Citations;
use ragscope_judge::task::nuggets::{
    pair_answers, read_nuggets, read_pool, NuggetAssign, NuggetCreate, NuggetScore,
};
use ragscope_judge::task::pairwise::Pairwise;
use ragscope_judge::task::pointwise::Pointwise;
use ragscope_judge::ItemRecord;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

#[derive(clap::Subcommand, Debug)]
pub enum NuggetsCmd {
    /// Nuggets from each topic's relevant passages (windows of 10, at most 30 nuggets of 1-12
    /// words), written as nuggetizer's nuggets JSONL without importance.
    Create(CreateArgs),
    /// vital/okay for each topic's nuggets (batches of 10), vital first, at most 20 kept.
    Score(ScoreArgs),
    /// support/partial_support/not_support of each answer for its topic's nuggets (batches of
    /// 10), written as nuggetizer's assignments JSONL ("failed" where a batch failed).
    Assign(AssignArgs),
}

#[derive(clap::Args, Debug)]
pub struct CreateArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// nuggetizer pool JSONL: {"query": {"qid", "text"}, "candidates": [{"docid", "doc":
    /// {"segment"}, "judgment"?}]}.
    #[arg(long)]
    pub pool: PathBuf,
    /// Candidates with a judgment below this are left out (those without one are kept).
    #[arg(long, default_value_t = 1)]
    pub min_grade: i64,
}

#[derive(clap::Args, Debug)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// nuggetizer nuggets JSONL: {"query", "qid", "nuggets": [{"text", "importance"?}]}.
    #[arg(long)]
    pub nuggets: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct AssignArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// nuggetizer nuggets JSONL (scored or not: a nugget without importance is vital).
    #[arg(long)]
    pub nuggets: PathBuf,
    /// TREC RAG answer JSONL ({"run_id", "topic_id", "topic", "answer": [{"text",
    /// "citations"}]}); repeat for several runs. run_id defaults to the file name's stem.
    #[arg(long, required = true)]
    pub answers: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct PairwiseArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// RAGElo queries.csv: qid, query.
    #[arg(long)]
    pub queries: PathBuf,
    /// RAGElo answers.csv: qid, agent, answer.
    #[arg(long)]
    pub answers: PathBuf,
    /// RAGElo documents.csv: qid, did, document (shown to the judge with each query).
    #[arg(long)]
    pub documents: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct CitationsArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// TREC RAG answer JSONL; a citation is a docid or an index into the line's `references`.
    #[arg(long, required = true)]
    pub answers: Vec<PathBuf>,
    /// Passages JSONL: {"docno", "text"} per line.
    #[arg(long)]
    pub passages: PathBuf,
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::Error(format!("{}: {e}", path.display())))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A file for crates/judge's shared readers: named by its path.
fn load(path: impl AsRef<Path>) -> Result<Loaded<'static>, Failure> {
    let path = path.as_ref();
    Ok(Loaded {
        name: path.display().to_string().into(),
        text: read(path)?.into(),
        stem: stem(path).into(),
    })
}

pub(super) fn nuggets(cmd: NuggetsCmd) -> Result<ExitCode, Failure> {
    match cmd {
        NuggetsCmd::Create(a) => create(a),
        NuggetsCmd::Score(a) => {
            let topics = read_nuggets(&read(&a.nuggets)?, &a.nuggets.display().to_string())?;
            let task = NuggetScore::new(topics);
            let items = task.items();
            drive(&a.common, Rc::new(task), items)
        }
        NuggetsCmd::Assign(a) => {
            let topics = read_nuggets(&read(&a.nuggets)?, &a.nuggets.display().to_string())?;
            let answers = answer_jobs::run_answers(&a.answers, load)?;
            let pairs = pair_answers(answers, &topics)?;
            let task = NuggetAssign::new(pairs);
            let items = task.items();
            drive(&a.common, Rc::new(task), items)
        }
    }
}

fn create(a: CreateArgs) -> Result<ExitCode, Failure> {
    let topics = read_pool(&read(&a.pool)?, &a.pool.display().to_string(), a.min_grade)?;
    let rounds = CreateRounds::new(NuggetCreate::default(), topics);
    drive_rounds(
        &a.common,
        rounds.task(),
        rounds.first(),
        &mut |records: &[ItemRecord]| rounds.next(records),
        &|all: &[ItemRecord]| rounds.finish(all),
    )
}

fn ragelo_inputs(a: &PairwiseArgs) -> Result<RageloInputs, Failure> {
    answer_jobs::ragelo(&a.queries, &a.answers, a.documents.as_ref(), load)
}

pub(super) fn pairwise(a: PairwiseArgs) -> Result<ExitCode, Failure> {
    let (queries, answers, docs) = ragelo_inputs(&a)?;
    let task = Rc::new(Pairwise::default());
    let items = task.items(&queries, &answers, &docs).map_err(usage)?;
    let t = task.clone();
    drive_rounds(
        &a.common,
        task,
        items,
        &mut |_| Vec::new(),
        &|records: &[ItemRecord]| {
            let note = answer_jobs::flips_note(records);
            (ragscope_judge::Task::write_output(&*t, records), Some(note))
        },
    )
}

pub(super) fn pointwise(a: PairwiseArgs) -> Result<ExitCode, Failure> {
    let (queries, answers, docs) = ragelo_inputs(&a)?;
    let task = Pointwise::default();
    let items = task.items(&queries, &answers, &docs).map_err(usage)?;
    drive(&a.common, Rc::new(task), items)
}

pub(super) fn citations(a: CitationsArgs) -> Result<ExitCode, Failure> {
    let sentences = answer_jobs::cited_sentences(&a.answers, load)?;
    let wanted: HashSet<String> = sentences.iter().flat_map(|s| s.docids.clone()).collect();
    let passages = read_passages(&a.passages, &wanted)?;
    let task = Citations::default();
    let items = task
        .items(&sentences, &passages)
        .map_err(|e| Failure::Error(format!("{}: {e}", a.passages.display())))?;
    drive(&a.common, Rc::new(task), items)
}
