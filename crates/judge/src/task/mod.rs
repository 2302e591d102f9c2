//! Tasks as data: a task renders its inputs into [`Call`]s with a versioned prompt template,
//! parses a reply strictly into a JSON result (a failure is an error, never a default), votes
//! across samples, and writes its output format. The runner knows nothing else about a task, so
//! new tasks (nuggets, pairwise battles, pointwise grades, citations, utilities) need no change
//! to providers, retries, cache or budget.

pub mod answer;
pub mod answer_equivalence;
pub mod answer_jobs;
pub mod citations;
pub mod nuggets;
pub mod pairwise;
pub mod pointwise;
pub mod reply;
pub mod umbrela;
pub mod utility;
pub mod utility_io;

use crate::provider::{Call, Reply};
use crate::runner::ItemRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What identifies an item in logs and outputs, as ordered (name, value) pairs: `qid` and
/// `docno` for UMBRELA; part 2 tasks name their own (e.g. `qid`, `agent_a`, `agent_b`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ItemKey(pub Vec<(String, String)>);

impl ItemKey {
    pub fn qid_docno(qid: &str, docno: &str) -> Self {
        ItemKey(vec![
            ("qid".into(), qid.to_string()),
            ("docno".into(), docno.to_string()),
        ])
    }

    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Display for ItemKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// One unit of work: an item and the call that judges it (sent once per sample).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobItem {
    pub key: ItemKey,
    pub call: Call,
}

/// A judge task.
pub trait Task {
    /// Short name (`umbrela`), part of the cache key.
    fn name(&self) -> &str;

    /// The prompt template's version, part of the cache key: change it whenever the rendered
    /// requests change.
    fn template_version(&self) -> &str;

    /// A reply's result, or why it is not one (the text is recorded as the item's error).
    fn parse(&self, reply: &Reply) -> Result<Value, String>;

    /// [`Task::parse`] for one item: tasks whose replies depend on the item (a list that must
    /// have as many labels as the item has nuggets) read what they need from its key.
    fn parse_item(&self, _key: &ItemKey, reply: &Reply) -> Result<Value, String> {
        self.parse(reply)
    }

    /// The item's result from its samples' parsed results (at least one), or `None` when they
    /// cannot be combined.
    fn vote(&self, results: &[Value]) -> Option<Value>;

    /// The call to send after a reply that did not parse (`reask` = 1, 2, ... up to
    /// `JudgeOptions::parse_retries`), or `None` to record the failure. Each re-ask is cached on
    /// its own. Default: none — UMBRELA at temperature 0 would only get the same reply again;
    /// nuggetizer-style tasks re-ask at a higher temperature.
    fn reask(&self, _call: &Call, _failed_reply: &str, _reask: u32) -> Option<Call> {
        None
    }

    /// The task's output file (e.g. TREC qrels) from the records in input order; failed records
    /// are left out, never written with a made-up value.
    fn write_output(&self, records: &[ItemRecord]) -> String;
}
