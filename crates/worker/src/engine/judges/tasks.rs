//! Each judge task's items from the loaded files its [`TaskInputs`] name, and how its output
//! file is written: crates/judge's tasks (the CLI's `judge umbrela|nuggets|pairwise|pointwise|
//! citations` use the same readers and writers), fed from the worker's files instead of paths.

use super::super::{ranked_docnos, Workspace};
use super::files::Source;
use ragscope_judge::task::answer_jobs::{self, CreateRounds, RageloInputs};
use ragscope_judge::task::citations::Citations;
use ragscope_judge::task::nuggets::{
    pair_answers, read_nuggets, NuggetAssign, NuggetCreate, NuggetScore, PoolTopic,
};
use ragscope_judge::task::pairwise::Pairwise;
use ragscope_judge::task::pointwise::Pointwise;
use ragscope_judge::task::umbrela::Umbrela;
use ragscope_judge::{ItemRecord, JobItem, Task};
use ragscope_protocol::judges::{ProviderChoice, TaskInputs};
use ragscope_protocol::FileId;
use std::collections::HashMap;
use std::rc::Rc;

/// Skipped items named in the estimate, at most.
const SKIPPED_SHOWN: usize = 5;

/// The next round's items from the last round's records (nugget creation: a topic's windows
/// depend on the list the previous window returned).
pub type NextRound = Box<dyn FnMut(&[ItemRecord]) -> Vec<JobItem>>;
/// The output file and a note, from every round's records.
pub type Finish = Box<dyn Fn(&[ItemRecord]) -> (String, Option<String>)>;
/// A file (name, text) for the views when it differs from the output (utilities).
pub type View = Box<dyn Fn(&[ItemRecord]) -> (String, String)>;

/// A task ready to run.
pub struct BuiltTask {
    pub task: Rc<dyn Task>,
    /// The first (for most tasks the only) round.
    pub items: Vec<JobItem>,
    pub next_round: Option<NextRound>,
    pub finish: Finish,
    pub view: Option<View>,
    /// What the loaded files could not give (named in the estimate).
    pub skipped: Vec<String>,
    /// The utility task's alignment probe prompt (sent before the items).
    pub probe: Option<String>,
    /// The result's file name before the model: `umbrela`, `nuggets-assign`, ...
    pub stem: &'static str,
    /// Its extension (`qrels`, `jsonl`, `csv`).
    pub ext: &'static str,
}

fn single(
    task: Rc<dyn Task>,
    items: Vec<JobItem>,
    stem: &'static str,
    ext: &'static str,
) -> BuiltTask {
    let t = task.clone();
    BuiltTask {
        task,
        items,
        next_round: None,
        finish: Box::new(move |records| (t.write_output(records), None)),
        view: None,
        skipped: Vec::new(),
        probe: None,
        stem,
        ext,
    }
}

fn list(v: &[String]) -> String {
    let mut s = v
        .iter()
        .take(SKIPPED_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if v.len() > SKIPPED_SHOWN {
        s.push_str(&format!(", … ({} in all)", v.len()));
    }
    s
}

impl Workspace {
    fn topics_file(&self, id: FileId) -> Result<(&str, &HashMap<String, String>), String> {
        self.judge_files
            .topics
            .as_ref()
            .filter(|(t, _, _)| *t == id)
            .map(|(_, n, t)| (n.as_str(), t))
            .ok_or_else(|| "the topics file is no longer loaded".into())
    }

    fn passages_file(&self, id: FileId) -> Result<(&str, &HashMap<String, String>), String> {
        self.judge_files
            .passages
            .as_ref()
            .filter(|(p, _, _)| *p == id)
            .map(|(_, n, p)| (n.as_str(), p))
            .ok_or_else(|| "the passages file is no longer loaded".into())
    }

    fn source(&self, id: FileId, what: &str) -> Result<&Source, String> {
        self.judge_files.source(id, what)
    }

    /// RAGElo's queries, answers and (optional) documents.
    fn ragelo(
        &self,
        queries: FileId,
        answers: FileId,
        documents: Option<FileId>,
    ) -> Result<RageloInputs, String> {
        answer_jobs::ragelo(
            (queries, "RAGElo queries"),
            (answers, "RAGElo answers"),
            documents.map(|d| (d, "RAGElo documents")),
            |(id, what)| self.source(id, what).map(Source::loaded),
        )
    }

    /// The task `inputs` names, with its items; errors say which file or item does not fit.
    /// `model`: the judge model's name (the utilities' model column without a GGUF name).
    /// `provider`: the API the job calls (the utility task's advice on exact values depends on
    /// it).
    pub fn build_task(
        &self,
        inputs: &TaskInputs,
        model: &str,
        provider: ProviderChoice,
    ) -> Result<BuiltTask, String> {
        let built = match inputs {
            TaskInputs::Umbrela {
                topics,
                passages,
                run,
                k,
            } => self.build_umbrela(*topics, *passages, *run, *k)?,
            TaskInputs::NuggetsCreate {
                topics,
                passages,
                qrels,
                min_grade,
            } => self.build_create(*topics, *passages, *qrels, *min_grade)?,
            TaskInputs::NuggetsScore { nuggets } => {
                let n = self.source(*nuggets, "nuggets")?;
                let task = NuggetScore::new(read_nuggets(&n.text, &n.name)?);
                let items = task.items();
                single(Rc::new(task), items, "nuggets-scored", "jsonl")
            }
            TaskInputs::NuggetsAssign { nuggets, answers } => {
                let n = self.source(*nuggets, "nuggets")?;
                let topics = read_nuggets(&n.text, &n.name)?;
                if answers.is_empty() {
                    return Err("load a TREC RAG answer file (JSONL) to assign nuggets to".into());
                }
                let all = answer_jobs::run_answers(answers, |id| {
                    self.source(*id, "answers").map(Source::loaded)
                })?;
                let task = NuggetAssign::new(pair_answers(all, &topics)?);
                let items = task.items();
                single(Rc::new(task), items, "nuggets-assign", "jsonl")
            }
            TaskInputs::Pairwise {
                queries,
                answers,
                documents,
            } => {
                let (q, a, d) = self.ragelo(*queries, *answers, *documents)?;
                let task = Rc::new(Pairwise::default());
                let items = task.items(&q, &a, &d)?;
                let t = task.clone();
                let mut built = single(task, items, "pairwise", "csv");
                built.finish = Box::new(move |records| {
                    (
                        t.write_output(records),
                        Some(answer_jobs::flips_note(records)),
                    )
                });
                built
            }
            TaskInputs::Pointwise {
                queries,
                answers,
                documents,
            } => {
                let (q, a, d) = self.ragelo(*queries, *answers, *documents)?;
                let task = Pointwise::default();
                let items = task.items(&q, &a, &d)?;
                let mut built = single(Rc::new(task), items, "pointwise", "csv");
                built.view = Some(Box::new(super::grades_view::pointwise_view));
                built
            }
            TaskInputs::Citations { answers, passages } => {
                let (pname, texts) = self.passages_file(*passages)?;
                if answers.is_empty() {
                    return Err(
                        "load a TREC RAG answer file (JSONL) whose citations to check".into(),
                    );
                }
                let sentences = answer_jobs::cited_sentences(answers, |id| {
                    self.source(*id, "answers").map(Source::loaded)
                })?;
                let task = Citations::default();
                let items = task
                    .items(&sentences, texts)
                    .map_err(|e| format!("{pname}: {e}"))?;
                single(Rc::new(task), items, "citations", "jsonl")
            }
            TaskInputs::Utility { source, template } => {
                self.build_utility(source, template, model, provider)?
            }
        };
        if built.items.is_empty() {
            return Err(format!(
                "nothing to judge: the files give no {}",
                inputs.task().item_noun()
            ));
        }
        Ok(built)
    }

    fn build_umbrela(
        &self,
        topics: FileId,
        passages: FileId,
        run: FileId,
        k: usize,
    ) -> Result<BuiltTask, String> {
        let (topics_name, topics) = self.topics_file(topics)?;
        let (passages_name, passages) = self.passages_file(passages)?;
        let (_, run_name, run) = self
            .runs
            .iter()
            .find(|(id, _, _)| *id == run)
            .ok_or("the run is no longer loaded")?;
        let task = Umbrela::new();
        let mut items = Vec::new();
        let (mut no_question, mut no_text) = (Vec::new(), Vec::new());
        for topic in run.topics() {
            let qid = topic.qid();
            let Some(question) = topics.get(qid) else {
                no_question.push(qid.to_string());
                continue;
            };
            for (docno, _) in ranked_docnos(run, topic).into_iter().take(k) {
                let docno = String::from_utf8_lossy(docno);
                match passages.get(docno.as_ref()) {
                    Some(text) => items.push(task.item(qid, &docno, question, text)?),
                    None => no_text.push(format!("{qid}/{docno}")),
                }
            }
        }
        let mut skipped = Vec::new();
        if !no_question.is_empty() {
            skipped.push(format!(
                "queries of {run_name} without a question in {topics_name}: {}",
                list(&no_question)
            ));
        }
        if !no_text.is_empty() {
            skipped.push(format!(
                "passages of {run_name} without a text in {passages_name}: {}",
                list(&no_text)
            ));
        }
        if items.is_empty() {
            return Err(format!(
                "nothing to judge: no query of {run_name} has both a question in {topics_name} \
                 and passage texts in {passages_name}"
            ));
        }
        let mut built = single(Rc::new(task), items, "umbrela", "qrels");
        built.skipped = skipped;
        Ok(built)
    }

    /// nuggetizer's pool from the loaded files: each qrels topic with a question, its documents
    /// judged ≥ `min_grade` that have a text, in the qrels' order.
    fn build_create(
        &self,
        topics: FileId,
        passages: FileId,
        qrels: FileId,
        min_grade: i64,
    ) -> Result<BuiltTask, String> {
        let (topics_name, questions) = self.topics_file(topics)?;
        let (passages_name, texts) = self.passages_file(passages)?;
        let (_, qrels_name, qrels) = self
            .qrels
            .as_ref()
            .filter(|(q, _, _)| *q == qrels)
            .ok_or("the qrels file is no longer loaded")?;
        let (mut no_question, mut no_text) = (Vec::new(), Vec::new());
        let mut pool = Vec::new();
        for t in qrels.topics() {
            let qid = t.qid();
            let Some(query) = questions.get(qid) else {
                no_question.push(qid.to_string());
                continue;
            };
            let mut passages = Vec::new();
            for (docno, grade) in t.judgments() {
                if i64::from(grade) < min_grade {
                    continue;
                }
                let docno = String::from_utf8_lossy(docno);
                match texts.get(docno.as_ref()) {
                    Some(text) => passages.push(text.clone()),
                    None => no_text.push(format!("{qid}/{docno}")),
                }
            }
            if !passages.is_empty() {
                pool.push(PoolTopic {
                    qid: qid.to_string(),
                    query: query.clone(),
                    passages,
                });
            }
        }
        let mut skipped = Vec::new();
        if !no_question.is_empty() {
            skipped.push(format!(
                "topics of {qrels_name} without a question in {topics_name}: {}",
                list(&no_question)
            ));
        }
        if !no_text.is_empty() {
            skipped.push(format!(
                "relevant documents of {qrels_name} without a text in {passages_name}: {}",
                list(&no_text)
            ));
        }
        let rounds = Rc::new(CreateRounds::new(NuggetCreate::default(), pool));
        let items = rounds.first();
        let next_round: NextRound = {
            let rounds = rounds.clone();
            Box::new(move |records| rounds.next(records))
        };
        let finish: Finish = {
            let rounds = rounds.clone();
            Box::new(move |all| rounds.finish(all))
        };
        Ok(BuiltTask {
            task: rounds.task(),
            items,
            next_round: Some(next_round),
            finish,
            view: None,
            skipped,
            probe: None,
            stem: "nuggets-created",
            ext: "jsonl",
        })
    }
}
