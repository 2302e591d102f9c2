//! Messages of the lost-in-the-middle page (`#/learn/lost-in-the-middle`): the experiment runs in
//! the page's own worker reactor with the model it opened (`ComputeRequest::OpenModel`), one
//! context per step, so progress and cancel answer between contexts.

use super::compute::{BackendChoice, BackendInfo};
use serde::{Deserialize, Serialize};

/// One question: its passages in the data's order, the relevant one at `gold_index`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LitmQuestion {
    pub qid: String,
    pub question: String,
    pub answers: Vec<String>,
    pub gold_index: usize,
    pub passages: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum LitmRequest {
    /// Computes what is missing: the utilities of every question whose `utilities` entry is
    /// `None` (k passages: the gold and the first k − 1 distractors), then one context per task
    /// (question index, 1-based position of the gold passage).
    Start {
        questions: Vec<LitmQuestion>,
        k: usize,
        /// p(NO-RESPONSE) of each passage of the context (gold first, then the distractors in
        /// order), per question; `None` where the worker must compute them with the model.
        utilities: Vec<Option<Vec<f64>>>,
        tasks: Vec<(usize, usize)>,
        /// Also p(NO-RESPONSE) of each whole context (one more forward pass per context).
        context_p: bool,
        max_new_tokens: usize,
        backend: BackendChoice,
    },
    /// Stops after the context being computed; what was reported stays reported.
    Cancel,
}

/// One context's outcome and scores.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LitmItem {
    pub qid: String,
    /// 1-based position of the relevant passage.
    pub position: usize,
    pub answer: String,
    pub correct: bool,
    /// The answer says NO-RESPONSE.
    pub abstain: bool,
    /// p(NO-RESPONSE) of the whole context's prompt, when asked for.
    pub p_no_response: Option<f64>,
    pub ndcg: f64,
    pub map: f64,
    pub mrr: f64,
    pub precision: f64,
    pub udcg: f64,
    pub prompt_tokens: usize,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum LitmEvent {
    Backend(BackendInfo),
    /// p(NO-RESPONSE) of a question's k passages (gold first, then the distractors).
    Utilities {
        qid: String,
        p: Vec<f64>,
    },
    Item(LitmItem),
    Progress {
        done: usize,
        total: usize,
        seconds: f64,
    },
    Done {
        seconds: f64,
    },
    Failed(String),
    Cancelled {
        done: usize,
    },
}
