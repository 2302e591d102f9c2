//! Messages of the lost-in-the-middle page (`#/learn/lost-in-the-middle`): the experiment runs in
//! the page's own worker reactor with the model it opened (`ComputeRequest::OpenModel`), one
//! context per step, so progress and cancel answer between contexts.

use super::compute::{BackendChoice, BackendInfo};
use super::judges::{ProviderChoice, Secret, UtilityTemplate};
use serde::{Deserialize, Serialize};

/// A remote LLM as the model of the experiment (the Judges page's provider settings): each
/// context's prompt is sent to it once, through crates/judge (retries, cache, cost), from the
/// worker, after the user pressed Start.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RemoteModel {
    pub provider: ProviderChoice,
    pub model: String,
    pub base_url: String,
}

impl RemoteModel {
    /// Names the model in cache keys, exports and titles (`openai/gpt-4o-mini`; a base URL other
    /// than the provider's default is part of it: another server is another model).
    pub fn name(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        if base == self.provider.default_base_url() || base.is_empty() {
            format!("{}/{}", self.provider.slug(), self.model.trim())
        } else {
            format!("{}/{} at {base}", self.provider.slug(), self.model.trim())
        }
    }
}

/// The answer prompt (crates/worker/src/engine/litm_prompts.rs).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LitmPrompt {
    /// The UDCG paper's (Figure 3), as `ragscope answer`.
    #[default]
    Udcg,
    /// The lost-in-the-middle paper's multi-document QA prompt (qa.prompt).
    PaperQa,
    /// The lost-in-the-middle paper's key–value retrieval prompt (kv_retrieval.prompt).
    PaperKv,
}

impl LitmPrompt {
    pub const ALL: [LitmPrompt; 3] = [LitmPrompt::Udcg, LitmPrompt::PaperQa, LitmPrompt::PaperKv];

    pub fn slug(self) -> &'static str {
        match self {
            LitmPrompt::Udcg => "udcg",
            LitmPrompt::PaperQa => "litm-qa",
            LitmPrompt::PaperKv => "litm-kv",
        }
    }

    pub fn from_slug(s: &str) -> Option<LitmPrompt> {
        Self::ALL.into_iter().find(|p| p.slug() == s)
    }

    pub fn label(self) -> &'static str {
        match self {
            LitmPrompt::Udcg => {
                "the UDCG paper's (system prompt, “Document: …” lines; as ragscope answer)"
            }
            LitmPrompt::PaperQa => {
                "the lost-in-the-middle paper's multi-document QA prompt (qa.prompt)"
            }
            LitmPrompt::PaperKv => {
                "the lost-in-the-middle paper's key–value retrieval prompt (kv_retrieval.prompt)"
            }
        }
    }
}

/// What a remote run (or its estimate) sends: the contexts of `tasks` (question index,
/// 1-based position) as prompts, answered at temperature 0 with at most `max_tokens` tokens.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RemoteRun {
    pub remote: RemoteModel,
    pub questions: Vec<LitmQuestion>,
    pub k: usize,
    pub tasks: Vec<(usize, usize)>,
    pub max_tokens: u32,
    /// Requests in flight at most.
    pub concurrency: u32,
    #[serde(default)]
    pub prompt: LitmPrompt,
    /// p(NO-RESPONSE) of each passage alone (UDCG's utilities) through crates/judge's utility
    /// task, read as the template says (none: the chat endpoint's top 20 logprobs, exact when
    /// listed, else only an upper bound; the served model's GGUF: `/completions` echo, exact,
    /// after the alignment probe). `None`: no p(NO-RESPONSE) at all (a provider that returns no
    /// log-probabilities).
    #[serde(default)]
    pub utility: Option<UtilityTemplate>,
    /// Also p(NO-RESPONSE) of each whole context (one utility call per context; only under the
    /// UDCG paper's prompt, the one that asks for NO-RESPONSE).
    #[serde(default)]
    pub context_p: bool,
    /// Keep the replies in this browser's judge cache (the page's "Keep results in this
    /// browser", off by default); without it they live in the worker's memory for the tab.
    #[serde(default)]
    pub keep: bool,
}

/// What a remote run would send (cached requests excluded), before Start.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RemoteEstimate {
    pub requests: usize,
    pub cached: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// At the price table's price; `None` when the model is not in it.
    pub cost: Option<f64>,
    pub price_note: String,
    /// The URL the requests go to.
    pub endpoint: String,
    /// The first context's prompt as the provider receives it.
    pub first_prompt: String,
    /// Of `requests`: the utility calls (p(NO-RESPONSE) of passages and contexts) not in the
    /// judge cache, and the alignment probe's requests (exact scoring).
    #[serde(default)]
    pub utility_requests: usize,
    /// How p(NO-RESPONSE) is read, in words (empty: not at all).
    #[serde(default)]
    pub scoring: String,
}

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
        /// The answer prompt (utilities always use the UDCG paper's, their definition).
        #[serde(default)]
        prompt: LitmPrompt,
    },
    /// Stops after the context being computed; what was reported stays reported. Also stops a
    /// remote run (requests in flight finish; nothing new is sent).
    Cancel,
    /// Requests, tokens and cost of a remote run, looking each request up in the judge cache;
    /// sends nothing.
    EstimateRemote(RemoteRun),
    /// Runs the contexts on the remote model. The key travels only here, inside a [`Secret`].
    StartRemote {
        run: RemoteRun,
        key: Option<Secret>,
    },
    /// A remote run: requests in flight finish, no new one starts until `ResumeRemote`.
    PauseRemote,
    ResumeRemote,
}

impl LitmRequest {
    /// Handled by the remote runner (its own task in the worker), not the local engine.
    pub fn is_remote(&self) -> bool {
        matches!(
            self,
            LitmRequest::EstimateRemote(_)
                | LitmRequest::StartRemote { .. }
                | LitmRequest::PauseRemote
                | LitmRequest::ResumeRemote
        )
    }
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
    /// `None` when the model gave no p(NO-RESPONSE) of the passages (a remote model), or not
    /// an exact one of each (`udcg_missing` says why).
    pub udcg: Option<f64>,
    /// Of the local model's tokenizer; 0 for a remote model (the provider counts its own).
    pub prompt_tokens: usize,
    /// `p_no_response` is only an upper bound (a remote chat endpoint's top 20 logprobs did not
    /// list NO-RESPONSE's first token): shown as "≤ x", never used as a value.
    #[serde(default)]
    pub p_bound: bool,
    /// Why `udcg` is not computed although passage utilities were asked for (a passage's p
    /// only bounded, or its utility call failed).
    #[serde(default)]
    pub udcg_missing: Option<String>,
    /// A utility call of this context failed: the next Start sends the context again (its
    /// answer and the calls that succeeded come from the judge cache, unpaid).
    #[serde(default)]
    pub retry: bool,
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
    /// A remote call that failed (after its retries): recorded as failed, never scored.
    ItemFailed {
        qid: String,
        position: usize,
        error: String,
    },
    /// A remote utility call (p(NO-RESPONSE) of a passage alone, or of a whole context) that
    /// failed after its retries: counted and shown, never replaced by a number. `what` names it.
    UtilityFailed {
        qid: String,
        what: String,
        error: String,
    },
    RemoteEstimate(RemoteEstimate),
    RemoteEstimateFailed(String),
    /// HTTP requests sent so far by a remote run (retries included) and what they cost.
    Spent {
        requests: u64,
        cost: Option<f64>,
    },
    /// A remote run paused (requests in flight finish) or resumed.
    Paused(bool),
}

// The page's exports and the worker's experiment both place the gold passage with these two.
/// The passages of one context, as indices into the question's passages, gold at `position`
/// (1-based), and whether each is the relevant one.
pub fn context(q: &LitmQuestion, k: usize, position: usize) -> Result<Vec<(usize, bool)>, String> {
    let n = q.passages.len();
    if q.gold_index >= n {
        return Err(format!(
            "{}: gold_index {} but only {n} passages",
            q.qid, q.gold_index
        ));
    }
    if k == 0 || k > n {
        return Err(format!("{}: k = {k}, but it has {n} passages", q.qid));
    }
    if position == 0 || position > k {
        return Err(format!(
            "position {position} is outside a context of {k} passages"
        ));
    }
    let mut out: Vec<(usize, bool)> = (0..n)
        .filter(|&j| j != q.gold_index)
        .take(k - 1)
        .map(|j| (j, false))
        .collect();
    out.insert(position - 1, (q.gold_index, true));
    Ok(out)
}

/// The k passages whose utilities UDCG needs, in the order of `LitmEvent::Utilities`: the gold,
/// then the first k − 1 distractors.
pub fn utility_passages(q: &LitmQuestion, k: usize) -> Result<Vec<usize>, String> {
    let mut c = context(q, k, 1)?;
    Ok(c.drain(..).map(|(j, _)| j).collect())
}

/// Why a provider gives no p(NO-RESPONSE), or `None` when it can.
pub fn no_logprobs_reason(provider: ProviderChoice) -> Option<&'static str> {
    match provider {
        ProviderChoice::Anthropic => {
            Some("Anthropic's Messages API returns no log-probabilities of any token")
        }
        ProviderChoice::Gemini | ProviderChoice::OpenAi | ProviderChoice::OpenAiCompatible => None,
    }
}

/// Whether the provider echoes a prompt rendered with the served model's chat template
/// (`/completions` with `echo`: exact p): OpenAI-compatible servers only. OpenAI's
/// `/completions` does not echo chat models' prompts, and Gemini has none.
pub fn echo_offered(provider: ProviderChoice) -> bool {
    provider == ProviderChoice::OpenAiCompatible
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_move_the_gold_and_keep_the_distractors_in_order() {
        let q = LitmQuestion {
            qid: "q".into(),
            question: "?".into(),
            answers: vec![],
            gold_index: 2,
            passages: (0..5).map(|i| i.to_string()).collect(),
        };
        let idx = |k, p| -> Vec<usize> { context(&q, k, p).unwrap().iter().map(|x| x.0).collect() };
        assert_eq!(idx(3, 1), vec![2, 0, 1]);
        assert_eq!(idx(3, 3), vec![0, 1, 2]);
        assert_eq!(idx(5, 5), vec![0, 1, 3, 4, 2]);
        assert!(context(&q, 3, 4).is_err());
        assert!(context(&q, 6, 1).is_err());
    }
}
