//! The answer-side judges' inputs, rounds and notes, shared by `ragscope judge nuggets|pairwise|
//! pointwise|citations` (files on disk) and the browser worker (loaded files): the caller says
//! how a file is loaded, this module reads and combines what the tasks take.
//!
//! Each reader loads a file only when its turn comes and stops at the first failure, so the
//! error names the first file (in argument order) that cannot be loaded or read.

use super::citations::{read_cited, CitedSentence};
use super::nuggets::{read_answers, NuggetCreate, PoolTopic, RunAnswer};
use super::pairwise::{self, documents_by_query, AgentAnswer, Query};
use super::JobItem;
use crate::runner::ItemRecord;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// An input file as its caller loaded it.
pub struct Loaded<'a> {
    /// What errors call the file (a path, or the loaded file's name).
    pub name: Cow<'a, str>,
    pub text: Cow<'a, str>,
    /// The run id of an answer line without `run_id` (the file name without its extension).
    pub stem: Cow<'a, str>,
}

/// RAGElo's three inputs: queries, answers, documents by query.
pub type RageloInputs = (
    Vec<Query>,
    Vec<AgentAnswer>,
    BTreeMap<String, Vec<(String, String)>>,
);

/// RAGElo's queries, answers and (optional) documents.
pub fn ragelo<'a, P, E: From<String>>(
    queries: P,
    answers: P,
    documents: Option<P>,
    mut load: impl FnMut(P) -> Result<Loaded<'a>, E>,
) -> Result<RageloInputs, E> {
    let q = load(queries)?;
    let queries = pairwise::read_queries(&q.text, &q.name)?;
    let a = load(answers)?;
    let answers = pairwise::read_answers(&a.text, &a.name)?;
    let docs = match documents {
        Some(d) => {
            let d = load(d)?;
            documents_by_query(&pairwise::read_documents(&d.text, &d.name)?)
        }
        None => BTreeMap::new(),
    };
    Ok((queries, answers, docs))
}

/// The TREC RAG answers of every file (nugget assignment).
pub fn run_answers<'a, P, E: From<String>>(
    files: impl IntoIterator<Item = P>,
    mut load: impl FnMut(P) -> Result<Loaded<'a>, E>,
) -> Result<Vec<RunAnswer>, E> {
    let mut all = Vec::new();
    for f in files {
        let a = load(f)?;
        all.extend(read_answers(&a.text, &a.name, &a.stem)?);
    }
    Ok(all)
}

/// The cited sentences of every TREC RAG answer file (citation support).
pub fn cited_sentences<'a, P, E: From<String>>(
    files: impl IntoIterator<Item = P>,
    mut load: impl FnMut(P) -> Result<Loaded<'a>, E>,
) -> Result<Vec<CitedSentence>, E> {
    let mut all = Vec::new();
    for f in files {
        let a = load(f)?;
        all.extend(read_cited(&a.text, &a.name, &a.stem)?);
    }
    Ok(all)
}

/// The pairwise run's note: how many games were judged in both orders and how many flipped.
pub fn flips_note(records: &[ItemRecord]) -> String {
    let (games, flips) = pairwise::flips(records);
    let rate = if games > 0 {
        format!("{:.1}%", 100.0 * flips as f64 / games as f64)
    } else {
        "n/a".into()
    };
    format!(
        "{games} games judged in both orders; position flips (orders disagree, scored as a tie): \
         {flips} ({rate})"
    )
}

/// Nugget creation's rounds over a pool: each topic's list so far (`None`: a window failed),
/// the next round's items from the last round's records, and the nuggets file at the end.
pub struct CreateRounds {
    task: Rc<NuggetCreate>,
    pool: Vec<PoolTopic>,
    current: RefCell<Vec<Option<Vec<String>>>>,
    round: Cell<usize>,
}

impl CreateRounds {
    pub fn new(task: NuggetCreate, pool: Vec<PoolTopic>) -> Self {
        let current = RefCell::new(vec![Some(Vec::new()); pool.len()]);
        CreateRounds {
            task: Rc::new(task),
            pool,
            current,
            round: Cell::new(0),
        }
    }

    pub fn task(&self) -> Rc<NuggetCreate> {
        self.task.clone()
    }

    /// Round 0's items.
    pub fn first(&self) -> Vec<JobItem> {
        self.task.round(0, &self.pool, &self.current.borrow())
    }

    /// Applies a round's records and returns the next round's items (none: done).
    pub fn next(&self, records: &[ItemRecord]) -> Vec<JobItem> {
        self.task
            .absorb(&self.pool, &mut self.current.borrow_mut(), records);
        self.round.set(self.round.get() + 1);
        self.task
            .round(self.round.get(), &self.pool, &self.current.borrow())
    }

    /// The nuggets file from every round's records, and a note naming how many topics are left
    /// out of it (a failed or unjudged window).
    pub fn finish(&self, all: &[ItemRecord]) -> (String, Option<String>) {
        let cur = self.current.borrow();
        let left_out = self
            .pool
            .iter()
            .zip(cur.iter())
            .filter(|(t, c)| c.is_none() || !NuggetCreate::complete(t, all))
            .count();
        let note = (left_out > 0).then(|| {
            format!(
                "{left_out} topics have a failed or unjudged window and are not in the nuggets \
                 file"
            )
        });
        (self.task.output(&self.pool, &cur, all), note)
    }
}
