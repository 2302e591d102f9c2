//! The lost-in-the-middle page's state as a reducer: the bundled data, the opened model, the
//! experiment's settings, the results per (question, position) and their summary per position.

use ragscope_eval::stats::paired::bootstrap_mean_ci;
use ragscope_protocol::compute::{BackendChoice, BackendInfo, ComputeEvent, ModelInfo};
use ragscope_protocol::judges::{GgufTemplateInfo, JudgeResponse, UtilityTemplate};
use ragscope_protocol::litm::{
    LitmEvent, LitmItem, LitmPrompt, LitmQuestion, RemoteEstimate, RemoteModel,
};
use ragscope_protocol::Response;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use yew::prelude::*;

/// The bundled NQ subset (www/learn/litm-nq.json, written by `cargo xtask litm-data`).
pub const DATA_URL: &str = "learn/litm-nq.json";
/// Names the data in cache keys and exports (change it when the bundled file changes).
pub const DATA_KEY: &str = "nq20-subset-v1";
/// Bootstrap resamples of the accuracy band (seeded: the band is reproducible).
const RESAMPLES: usize = 2000;

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct LitmData {
    pub source: String,
    pub questions: Vec<DataQuestion>,
    /// Names the data in cache keys and exports (not in the file).
    #[serde(skip, default = "bundled_key")]
    pub key: String,
    /// The user's own file (its name), else the bundled subset.
    #[serde(skip)]
    pub own: Option<String>,
    /// What reading the user's file changed (a UDCG reference JSON: relevant passages beyond the
    /// first left out, examples without a relevant passage skipped).
    #[serde(skip)]
    pub note: Option<String>,
}

fn bundled_key() -> String {
    DATA_KEY.to_string()
}

/// A UUID-shaped random string (8-4-4-4-12 hex digits), as the paper's key–value records.
fn uuid(rng: &mut ragscope_eval::stats::rng::SeededRng) -> String {
    let hex: String = (0..32)
        .map(|_| char::from_digit(rng.below(16) as u32, 16).unwrap_or('0'))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Synthetic key–value retrieval (Liu et al. 2024, §3): per question, `pairs` random UUID keys
/// and values; one key is asked for. Each pair is one passage (`"key": "value"`), the asked pair
/// the relevant one, so the same machinery moves it through the context. The answer is correct
/// when it contains the value (the paper's `value.lower() in answer.lower()`; the normalised
/// substring match used here also deletes the hyphens on both sides). Seeded: the same seed,
/// pairs and questions give the same records.
pub fn key_value(pairs: usize, questions: usize, seed: u64) -> LitmData {
    let mut rng = ragscope_eval::stats::rng::SeededRng::new(seed);
    let pairs = pairs.max(2);
    let questions = (0..questions.max(1))
        .map(|i| {
            let records: Vec<(String, String)> =
                (0..pairs).map(|_| (uuid(&mut rng), uuid(&mut rng))).collect();
            let gold = rng.below(pairs as u64) as usize;
            DataQuestion {
                qid: format!("kv{i}"),
                source_qid: String::new(),
                question: format!(
                    "Extract the value corresponding to the specified key in the JSON object above. Key: \"{}\"",
                    records[gold].0
                ),
                answers: vec![records[gold].1.clone()],
                gold_index: gold,
                original_distractors: false,
                passages: records
                    .iter()
                    .map(|(k, v)| format!("\"{k}\": \"{v}\""))
                    .collect(),
            }
        })
        .collect();
    LitmData {
        source: format!("key–value retrieval generated in the page: {pairs} pairs, seed {seed}"),
        questions,
        key: format!("kv:{pairs}:{seed}"),
        own: Some(format!("key–value records ({pairs} pairs, seed {seed})")),
        note: None,
    }
}

/// A UDCG reference JSON (GiovanniTRA/UDCG's form: `[{example_id, question, passages: [{doc_id,
/// text, is_relevant, models_info?}]}]`) as questions: the first relevant passage is the one
/// moved, the irrelevant ones (in the file's order) are the distractors, other relevant passages
/// are left out (the experiment moves one relevant passage through irrelevant ones), and an
/// example without a relevant passage is skipped. The file has no gold answers: `answers` is
/// empty (accuracy is then "n/a"); an `answers` list, where an example has one, is used.
/// p(NO-RESPONSE) values in `models_info` are not used: the chosen model computes its own.
fn parse_udcg_json(name: &str, items: &[serde_json::Value]) -> Result<LitmData, String> {
    let mut questions = Vec::new();
    let (mut skipped, mut dropped) = (0usize, 0usize);
    for (i, ex) in items.iter().enumerate() {
        let at = format!("{name}: example {}", i + 1);
        let question = ex["question"]
            .as_str()
            .ok_or_else(|| format!("{at}: missing string field \"question\""))?;
        let passages = ex["passages"]
            .as_array()
            .ok_or_else(|| format!("{at}: missing list field \"passages\""))?;
        let mut gold = None;
        let mut others = Vec::new();
        for (j, p) in passages.iter().enumerate() {
            let text = p["text"]
                .as_str()
                .ok_or_else(|| format!("{at}: passages[{j}] has no \"text\""))?;
            let relevant = p["is_relevant"]
                .as_bool()
                .ok_or_else(|| format!("{at}: passages[{j}] has no boolean \"is_relevant\""))?;
            match (relevant, gold.is_some()) {
                (true, false) => gold = Some(text.to_string()),
                (true, true) => dropped += 1,
                (false, _) => others.push(text.to_string()),
            }
        }
        let Some(gold) = gold else {
            skipped += 1;
            continue;
        };
        let answers = ex["answers"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let q = DataQuestion {
            qid: match &ex["example_id"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => format!("ex{}", i + 1),
            },
            source_qid: String::new(),
            question: question.to_string(),
            answers,
            gold_index: 0,
            original_distractors: false,
            passages: std::iter::once(gold).chain(others).collect(),
        };
        if q.passages.len() < 2 {
            return Err(format!(
                "{at}: no irrelevant passage to move the relevant one through"
            ));
        }
        questions.push(q);
    }
    let mut notes = vec![
        "a UDCG reference JSON: no gold answers, so no accuracy; p(NO-RESPONSE) and every metric are computed".to_string(),
    ];
    if dropped > 0 {
        notes.push(format!(
            "{dropped} relevant passages beyond each example's first left out"
        ));
    }
    if skipped > 0 {
        notes.push(format!(
            "{skipped} examples without a relevant passage skipped"
        ));
    }
    Ok(LitmData {
        source: String::new(),
        questions,
        key: String::new(),
        own: None,
        note: Some(notes.join("; ")),
    })
}

/// Checks one question: passages present, the gold inside them, at least one answer.
fn check_question(q: &DataQuestion, at: &str) -> Result<(), String> {
    if q.passages.len() < 2 {
        return Err(format!(
            "{at}: at least 2 passages are needed (the gold and a distractor)"
        ));
    }
    if q.gold_index >= q.passages.len() {
        return Err(format!(
            "{at}: gold_index {} but {} passages",
            q.gold_index,
            q.passages.len()
        ));
    }
    if q.answers.iter().all(|a| a.trim().is_empty()) {
        return Err(format!("{at}: no answer to score against"));
    }
    Ok(())
}

/// The user's own questions: the bundled file's form (`{"questions": [{qid, question, answers,
/// gold_index, passages: [text…]}]}`), or JSON Lines in the lost-in-the-middle repository's form
/// (`{question, answers, ctxs: [{title, text, isgold}]}` per line, exactly one gold passage).
/// Errors name the line or question.
pub fn parse_own(name: &str, text: &str, bytes: usize) -> Result<LitmData, String> {
    let whole = serde_json::from_str::<serde_json::Value>(text).ok();
    let udcg = match &whole {
        Some(serde_json::Value::Array(items))
            if items.iter().any(|x| x.get("passages").is_some()) =>
        {
            Some(items)
        }
        _ => None,
    };
    let mut data = if let Some(items) = udcg {
        parse_udcg_json(name, items)?
    } else if whole.as_ref().is_some_and(|v| v.get("questions").is_some()) {
        let d: LitmData = serde_json::from_str(text)
            .map_err(|e| format!("{name}: line {}, column {}: {e}", e.line(), e.column()))?;
        for (i, q) in d.questions.iter().enumerate() {
            check_question(q, &format!("{name}: question {} ({})", i + 1, q.qid))?;
        }
        d
    } else {
        let mut questions = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{name}:{}", i + 1);
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| format!("{at}: column {}: {e}", e.column()))?;
            let question = v["question"]
                .as_str()
                .ok_or_else(|| format!("{at}: missing string field \"question\""))?;
            let answers: Vec<String> = match &v["answers"] {
                serde_json::Value::Array(a) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
                serde_json::Value::String(s) => vec![s.clone()],
                _ => {
                    return Err(format!(
                        "{at}: missing field \"answers\" (a list of strings)"
                    ))
                }
            };
            let ctxs = v["ctxs"]
                .as_array()
                .ok_or_else(|| format!("{at}: missing list field \"ctxs\""))?;
            let mut passages = Vec::new();
            let mut golds = Vec::new();
            for (j, c) in ctxs.iter().enumerate() {
                let text = c["text"]
                    .as_str()
                    .ok_or_else(|| format!("{at}: ctxs[{j}] has no \"text\""))?;
                passages.push(match c["title"].as_str() {
                    Some(t) if !t.is_empty() => format!("(Title: {t}) {text}"),
                    _ => text.to_string(),
                });
                if c["isgold"].as_bool() == Some(true) {
                    golds.push(j);
                }
            }
            let [gold_index] = golds[..] else {
                return Err(format!(
                    "{at}: exactly one passage must have \"isgold\": true ({} have)",
                    golds.len()
                ));
            };
            let q = DataQuestion {
                qid: match &v["qid"] {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => format!("q{}", i + 1),
                },
                source_qid: String::new(),
                question: question.to_string(),
                answers,
                gold_index,
                original_distractors: false,
                passages,
            };
            check_question(&q, &at)?;
            questions.push(q);
        }
        LitmData {
            source: String::new(),
            questions,
            key: String::new(),
            own: None,
            note: None,
        }
    };
    if data.questions.is_empty() {
        return Err(format!("{name}: no question"));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(q) = data.questions.iter().find(|q| !seen.insert(q.qid.clone())) {
        return Err(format!("{name}: question id {:?} appears twice", q.qid));
    }
    data.source = format!("your file {name}");
    data.key = format!("own:{name}:{bytes}");
    data.own = Some(name.to_string());
    Ok(data)
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct DataQuestion {
    pub qid: String,
    #[serde(default)]
    pub source_qid: String,
    pub question: String,
    pub answers: Vec<String>,
    pub gold_index: usize,
    #[serde(default)]
    pub original_distractors: bool,
    pub passages: Vec<String>,
}

impl DataQuestion {
    pub fn to_request(&self) -> LitmQuestion {
        LitmQuestion {
            qid: self.qid.clone(),
            question: self.question.clone(),
            answers: self.answers.clone(),
            gold_index: self.gold_index,
            passages: self.passages.clone(),
        }
    }
}

/// What a reload finds in IndexedDB for one experiment (model, data, k, settings).
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Saved {
    pub utilities: HashMap<String, Vec<f64>>,
    pub items: Vec<LitmItem>,
}

/// Which model answers: a GGUF run in this tab, or a remote LLM through the Judges layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ModelSource {
    #[default]
    Local,
    Remote,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LitmState {
    pub data: Option<Result<Rc<LitmData>, String>>,
    pub source: ModelSource,
    /// The answer prompt.
    pub prompt: LitmPrompt,
    pub model: Option<ModelInfo>,
    /// The remote model as the Judges page's provider settings name it (`None`: not filled in).
    pub remote: Option<RemoteModel>,
    /// Remote calls that failed (after their retries), per (question, position): shown and
    /// counted, never scored, never saved (a later run sends them again).
    pub failed: BTreeMap<(String, usize), String>,
    /// Remote utility calls (p(NO-RESPONSE)) that failed, per (question, what): shown and
    /// counted, never replaced by a number; their contexts are sent again by the next Start.
    pub utility_failed: BTreeMap<(String, String), String>,
    /// The served model's GGUF for exact p(NO-RESPONSE) of a remote model (its chat template
    /// and tokenizer, read in the worker): (id, file name), then what the worker read or why not.
    pub remote_gguf: Option<(u32, String)>,
    pub remote_gguf_read: Option<Result<GgufTemplateInfo, String>>,
    /// The estimate of a remote run, for the settings stamp it was made for.
    pub estimate: Option<(String, RemoteEstimate)>,
    /// The stamp of an estimate asked for and not yet answered.
    pub estimating: Option<String>,
    pub estimate_error: Option<String>,
    /// A remote run is paused (requests in flight finish).
    pub paused: bool,
    /// HTTP requests a remote run sent, and their cost when the model has a price.
    pub spent: Option<(u64, Option<f64>)>,
    /// "Opening …" or why the model could not be opened.
    pub model_note: Option<String>,
    pub k: usize,
    pub positions: Vec<usize>,
    pub questions: usize,
    pub context_p: bool,
    /// "Keep results in this browser": the user's consent to saving results (and a remote
    /// run's replies) in IndexedDB; off by default, the choice kept in localStorage.
    pub keep: bool,
    pub backend: BackendChoice,
    pub running: bool,
    /// (done, total, seconds) of the run.
    pub progress: Option<(usize, usize, f64)>,
    pub backend_info: Option<BackendInfo>,
    pub utilities: HashMap<String, Vec<f64>>,
    pub items: BTreeMap<(String, usize), LitmItem>,
    /// How many results came from the cache.
    pub cached: usize,
    pub message: Option<String>,
    pub error: Option<String>,
}

impl Default for LitmState {
    fn default() -> Self {
        LitmState {
            data: None,
            source: ModelSource::Local,
            prompt: LitmPrompt::Udcg,
            model: None,
            remote: None,
            failed: BTreeMap::new(),
            utility_failed: BTreeMap::new(),
            remote_gguf: None,
            remote_gguf_read: None,
            estimate: None,
            estimating: None,
            estimate_error: None,
            paused: false,
            spent: None,
            model_note: None,
            k: 10,
            positions: default_positions(10),
            questions: 10,
            context_p: true,
            keep: false,
            backend: BackendChoice::Auto,
            running: false,
            progress: None,
            backend_info: None,
            utilities: HashMap::new(),
            items: BTreeMap::new(),
            cached: 0,
            message: None,
            error: None,
        }
    }
}

/// The paper's positions 1, 5, 10, 15, 20 for k = 20; else first, middle and last.
pub fn default_positions(k: usize) -> Vec<usize> {
    if k == 20 {
        return vec![1, 5, 10, 15, 20];
    }
    let mut p = vec![1, k.div_ceil(2), k];
    p.retain(|&x| x >= 1);
    p.dedup();
    p
}

pub enum LitmAction {
    Data(Result<Rc<LitmData>, String>),
    ModelOpening(String),
    SetK(usize),
    TogglePosition(usize),
    SetQuestions(usize),
    SetContextP(bool),
    /// The "Keep results in this browser" checkbox.
    SetKeep(bool),
    SetBackend(BackendChoice),
    /// Results found in IndexedDB for the current settings.
    Restored(Saved),
    SetSource(ModelSource),
    SetPrompt(LitmPrompt),
    /// The Judges page's provider settings changed (`None`: incomplete).
    SetRemote(Option<RemoteModel>),
    /// An estimate of a remote run was asked for these settings (their stamp).
    EstimateRequested(String),
    /// A GGUF was picked (id, file name) for exact p(NO-RESPONSE) of the remote model; `None`:
    /// back to the chat endpoint's top 20 logprobs.
    RemoteGguf(Option<(u32, String)>),
    Started,
    /// The saved results were deleted (the shown ones too).
    Forgotten,
    Worker(Response),
}

impl LitmState {
    /// Identifies an experiment in the cache: model, data, k, and what changes the answers.
    pub fn cache_key(&self) -> Option<String> {
        // The UDCG prompt was the only one before: its keys stay as they were.
        let prompt = match self.prompt {
            LitmPrompt::Udcg => String::new(),
            other => format!("|prompt={}", other.slug()),
        };
        if self.source == ModelSource::Remote {
            let r = self.remote.as_ref()?;
            // How p(NO-RESPONSE) is read changes the results (a bound or a value).
            let p = match self.remote_utility() {
                None => String::new(),
                Some(UtilityTemplate::Gguf { name, .. }) => {
                    format!("|p=echo:{name}|cp={}", self.context_p)
                }
                Some(_) => format!("|p=top20|cp={}", self.context_p),
            };
            return Some(format!(
                "remote|{}|{}|k={}{prompt}{p}",
                r.name(),
                self.data_key(),
                self.k
            ));
        }
        let m = self.model.as_ref()?;
        Some(format!(
            "{}|{}|{}|{}|k={}|p={}{prompt}",
            m.name,
            m.file_name,
            m.file_bytes,
            self.data_key(),
            self.k,
            self.context_p
        ))
    }

    /// The data's name in cache keys and exports.
    pub fn data_key(&self) -> String {
        match &self.data {
            Some(Ok(d)) => d.key.clone(),
            _ => DATA_KEY.to_string(),
        }
    }

    /// The questions of the run (the first `questions` of the bundled data).
    pub fn chosen(&self) -> Vec<&DataQuestion> {
        match &self.data {
            Some(Ok(d)) => d.questions.iter().take(self.questions).collect(),
            _ => Vec::new(),
        }
    }

    /// (questions in the data, passages of its shortest question).
    fn chosen_limits(&self) -> (usize, usize) {
        match &self.data {
            Some(Ok(d)) => (
                d.questions.len(),
                d.questions
                    .iter()
                    .map(|q| q.passages.len())
                    .min()
                    .unwrap_or(1),
            ),
            _ => (60, 20),
        }
    }

    /// The model's name in titles and exports.
    pub fn model_name(&self) -> Option<String> {
        match self.source {
            ModelSource::Local => self.model.as_ref().map(|m| m.name.clone()),
            ModelSource::Remote => self.remote.as_ref().map(RemoteModel::name),
        }
    }

    /// How a remote run reads p(NO-RESPONSE): `None` for a provider that gives no
    /// log-probabilities; the GGUF read for exact (echo) scoring; else the chat endpoint's top 20.
    pub fn remote_utility(&self) -> Option<UtilityTemplate> {
        let r = self.remote.as_ref()?;
        if ragscope_protocol::litm::no_logprobs_reason(r.provider).is_some() {
            return None;
        }
        Some(match (&self.remote_gguf, &self.remote_gguf_read) {
            (Some((id, name)), Some(Ok(info)))
                if info.id == *id && ragscope_protocol::litm::echo_offered(r.provider) =>
            {
                UtilityTemplate::Gguf {
                    id: *id,
                    name: name.clone(),
                }
            }
            _ => UtilityTemplate::None,
        })
    }

    /// Whether a result still has to be (re)computed: not there, or a utility call of it failed.
    pub fn to_do(&self, qid: &str, position: usize) -> bool {
        self.items
            .get(&(qid.to_string(), position))
            .is_none_or(|i| i.retry)
    }

    /// The current remote estimate, if it was made for `stamp`.
    pub fn estimate_for(&self, stamp: &str) -> Option<&RemoteEstimate> {
        self.estimate
            .as_ref()
            .filter(|(s, _)| s == stamp)
            .map(|(_, e)| e)
    }

    fn clear_results(&mut self) {
        self.utilities.clear();
        self.items.clear();
        self.failed.clear();
        self.utility_failed.clear();
        self.estimate = None;
        self.spent = None;
        self.cached = 0;
        self.progress = None;
        self.message = None;
    }

    /// Per chosen position: its results over the chosen questions.
    pub fn summary(&self) -> Vec<PositionSummary> {
        let chosen = self.chosen();
        let qids: Vec<&str> = chosen.iter().map(|q| q.qid.as_str()).collect();
        // Questions without gold answers (a UDCG reference JSON) have no accuracy.
        let unscored: std::collections::HashSet<&str> = chosen
            .iter()
            .filter(|q| q.answers.iter().all(|a| a.trim().is_empty()))
            .map(|q| q.qid.as_str())
            .collect();
        self.positions
            .iter()
            .map(|&position| {
                let items: Vec<&LitmItem> = qids
                    .iter()
                    .filter_map(|q| self.items.get(&(q.to_string(), position)))
                    .collect();
                let mut s = PositionSummary::of(position, &items);
                if !unscored.is_empty() {
                    let scored: Vec<f64> = items
                        .iter()
                        .filter(|i| !unscored.contains(i.qid.as_str()))
                        .map(|i| f64::from(u8::from(i.correct)))
                        .collect();
                    s.accuracy = mean(scored.iter().copied());
                    s.band = bootstrap_mean_ci(&scored, 0.95, RESAMPLES, 2024).ok();
                    s.scored = scored.len();
                }
                s.failed = qids
                    .iter()
                    .filter(|q| self.failed.contains_key(&(q.to_string(), position)))
                    .count();
                s
            })
            .collect()
    }
}

/// Means over the questions answered at one position, with a 95% percentile-bootstrap band of
/// the accuracy (resampling questions; crates/eval's `bootstrap_mean_ci`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PositionSummary {
    pub position: usize,
    /// Contexts answered (a failed remote call is not one).
    pub n: usize,
    /// Remote calls that failed at this position (not in `n`, not in the accuracy).
    pub failed: usize,
    /// Contexts whose question has gold answers (the accuracy's n; `n` unless the data has
    /// questions without answers).
    pub scored: usize,
    pub accuracy: f64,
    pub band: Option<(f64, f64)>,
    pub abstain: f64,
    pub p_no_response: Option<f64>,
    /// `p_no_response` is only an upper bound (the mean of values some of which are bounds).
    pub p_bound: bool,
    pub ndcg: f64,
    pub map: f64,
    pub mrr: f64,
    pub precision: f64,
    pub udcg: f64,
    /// Contexts whose UDCG is not computed (a passage's p only bounded, or its call failed).
    pub udcg_missing: usize,
}

fn mean(x: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = x.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        s / n as f64
    }
}

impl PositionSummary {
    pub fn of(position: usize, items: &[&LitmItem]) -> Self {
        let correct: Vec<f64> = items
            .iter()
            .map(|i| f64::from(u8::from(i.correct)))
            .collect();
        let ps: Vec<f64> = items.iter().filter_map(|i| i.p_no_response).collect();
        PositionSummary {
            position,
            n: items.len(),
            accuracy: mean(correct.iter().copied()),
            band: bootstrap_mean_ci(&correct, 0.95, RESAMPLES, 2024).ok(),
            abstain: mean(items.iter().map(|i| f64::from(u8::from(i.abstain)))),
            p_no_response: (!ps.is_empty() && ps.len() == items.len())
                .then(|| mean(ps.iter().copied())),
            // A mean of upper bounds (and values) bounds the mean.
            p_bound: items.iter().any(|i| i.p_bound && i.p_no_response.is_some()),
            udcg_missing: items.iter().filter(|i| i.udcg_missing.is_some()).count(),
            ndcg: mean(items.iter().map(|i| i.ndcg)),
            map: mean(items.iter().map(|i| i.map)),
            mrr: mean(items.iter().map(|i| i.mrr)),
            precision: mean(items.iter().map(|i| i.precision)),
            // Only when every context has it (a remote model gives none).
            udcg: items
                .iter()
                .map(|i| i.udcg)
                .collect::<Option<Vec<f64>>>()
                .map_or(f64::NAN, |u| mean(u.into_iter())),
            failed: 0,
            scored: items.len(),
        }
    }
}

impl Reducible for LitmState {
    type Action = LitmAction;

    fn reduce(self: Rc<Self>, action: LitmAction) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            LitmAction::Data(d) if !s.running => {
                let own = matches!(&d, Ok(x) if x.own.is_some());
                s.data = Some(d);
                s.clear_results();
                if own {
                    // A small file of your own: every question, k as its questions allow.
                    let (n, most) = s.chosen_limits();
                    s.questions = n;
                    if s.k > most {
                        s.k = most;
                        s.positions = default_positions(most);
                    }
                }
            }
            LitmAction::ModelOpening(name) => {
                s.model_note = Some(format!("Opening {name}…"));
                s.error = None;
            }
            LitmAction::SetK(k) if !s.running => {
                let most = s
                    .chosen()
                    .iter()
                    .map(|q| q.passages.len())
                    .min()
                    .unwrap_or(20);
                let k = k.clamp(1, most.max(1));
                if k != s.k {
                    s.k = k;
                    s.positions = default_positions(k);
                    s.clear_results();
                }
            }
            LitmAction::TogglePosition(p) if !s.running => {
                if let Some(i) = s.positions.iter().position(|&x| x == p) {
                    s.positions.remove(i);
                } else if (1..=s.k).contains(&p) {
                    s.positions.push(p);
                    s.positions.sort_unstable();
                }
            }
            LitmAction::SetQuestions(n) if !s.running => {
                let most = match &s.data {
                    Some(Ok(d)) => d.questions.len(),
                    _ => 60,
                };
                s.questions = n.clamp(1, most.max(1));
            }
            LitmAction::SetContextP(on) if !s.running => {
                if on != s.context_p {
                    s.context_p = on;
                    s.clear_results();
                }
            }
            LitmAction::SetKeep(on) if !s.running => s.keep = on,
            LitmAction::SetBackend(b) if !s.running => s.backend = b,
            LitmAction::SetPrompt(p) if !s.running => {
                if p != s.prompt {
                    s.prompt = p;
                    s.clear_results();
                }
            }
            LitmAction::SetSource(m) if !s.running => {
                if m != s.source {
                    s.source = m;
                    s.clear_results();
                }
            }
            LitmAction::SetRemote(r) if !s.running => {
                if r != s.remote {
                    s.remote = r;
                    if s.source == ModelSource::Remote {
                        s.clear_results();
                    }
                }
            }
            LitmAction::RemoteGguf(g) if !s.running => {
                if g != s.remote_gguf {
                    s.remote_gguf = g;
                    s.remote_gguf_read = None;
                    s.clear_results();
                }
            }
            // Only the GGUF picked last counts (an earlier read may answer late).
            LitmAction::Worker(Response::Judge(JudgeResponse::GgufRead { id, result }))
                if s.remote_gguf.as_ref().is_some_and(|(g, _)| *g == id) =>
            {
                s.remote_gguf_read = Some(result);
                s.clear_results();
            }
            LitmAction::EstimateRequested(stamp) => {
                s.estimating = Some(stamp);
                s.estimate_error = None;
            }
            LitmAction::Restored(saved) => {
                s.cached = saved.items.len();
                s.utilities.extend(saved.utilities);
                for item in saved.items {
                    s.items.insert((item.qid.clone(), item.position), item);
                }
            }
            LitmAction::Forgotten if !s.running => {
                s.clear_results();
                s.message = Some("Saved results forgotten.".into());
            }
            LitmAction::Started => {
                s.running = true;
                s.paused = false;
                s.error = None;
                s.message = None;
                s.progress = Some((0, 0, 0.0));
                s.spent = None;
                // The contexts that failed are sent again.
                s.failed.clear();
                s.utility_failed.clear();
            }
            LitmAction::Worker(Response::Compute(event)) => match event {
                ComputeEvent::ModelOpened(info) => {
                    if s.model.as_ref() != Some(&info) {
                        s.clear_results();
                    }
                    s.model = Some(info);
                    s.model_note = None;
                }
                ComputeEvent::ModelFailed(e) => {
                    s.model_note = None;
                    s.error = Some(e);
                }
                _ => {}
            },
            LitmAction::Worker(Response::Litm(event)) => match event {
                LitmEvent::Backend(info) => s.backend_info = Some(info),
                LitmEvent::Utilities { qid, p } => {
                    s.utilities.insert(qid, p);
                }
                LitmEvent::Item(item) => {
                    s.failed.remove(&(item.qid.clone(), item.position));
                    s.items.insert((item.qid.clone(), item.position), item);
                }
                LitmEvent::ItemFailed {
                    qid,
                    position,
                    error,
                } => {
                    s.failed.insert((qid, position), error);
                }
                LitmEvent::UtilityFailed { qid, what, error } => {
                    s.utility_failed.insert((qid, what), error);
                }
                LitmEvent::RemoteEstimate(e) => {
                    if let Some(stamp) = s.estimating.take() {
                        s.estimate = Some((stamp, e));
                    }
                }
                LitmEvent::RemoteEstimateFailed(e) => {
                    s.estimating = None;
                    s.estimate_error = Some(e);
                }
                LitmEvent::Spent { requests, cost } => s.spent = Some((requests, cost)),
                LitmEvent::Paused(p) => s.paused = p && s.running,
                LitmEvent::Progress {
                    done,
                    total,
                    seconds,
                } => s.progress = Some((done, total, seconds)),
                LitmEvent::Done { seconds } => {
                    s.running = false;
                    s.paused = false;
                    // What the estimate counted has been sent (or failed): ask again.
                    s.estimate = None;
                    if let Some((_, total, _)) = s.progress {
                        s.progress = Some((total, total, seconds));
                    }
                    s.message = Some(format!("Done in {seconds:.1} s."));
                }
                LitmEvent::Failed(e) => {
                    s.running = false;
                    s.paused = false;
                    s.error = Some(e);
                }
                LitmEvent::Cancelled { done } => {
                    s.running = false;
                    s.paused = false;
                    s.estimate = None;
                    s.message = Some(format!(
                        "Cancelled after {done} steps; what was computed is kept (and cached)."
                    ));
                }
            },
            // Settings are fixed while a run is under way; other worker messages are not ours.
            _ => return self,
        }
        Rc::new(s)
    }
}

/// The published accuracies (%) by gold position 1/5/10/15/20 of 20 documents, then closed-book
/// and oracle: Liu et al., "Lost in the Middle: How Language Models Use Long Contexts", TACL 2024,
/// multi-document QA on NQ-open (transcribed as REFERENCE.md §12 records; 4 agreeing copies of
/// the paper's tables).
pub const PUBLISHED: [(&str, [f64; 5], f64, f64); 4] = [
    ("GPT-3.5-Turbo", [75.8, 57.2, 53.8, 55.4, 63.2], 56.1, 88.3),
    ("Claude-1.3", [59.9, 55.9, 56.8, 57.2, 60.1], 48.3, 76.1),
    (
        "MPT-30B-Instruct",
        [53.7, 51.8, 52.2, 52.7, 56.3],
        31.5,
        81.9,
    ),
    (
        "LongChat-13B (16K)",
        [68.6, 57.4, 55.3, 52.5, 55.0],
        35.0,
        83.4,
    ),
];
pub const PUBLISHED_POSITIONS: [usize; 5] = [1, 5, 10, 15, 20];

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = env!("CARGO_MANIFEST_DIR");

    #[test]
    fn the_lost_in_the_middle_jsonl_form_reads_as_the_bundled_file() {
        // The shared subset is in the repository's form (ctxs with isgold); the bundled file was
        // written from it by `cargo xtask litm-data`: both must give the same questions.
        let jsonl =
            std::fs::read_to_string(format!("{ROOT}/../shared/data/litm/nq20_subset.jsonl"))
                .expect("../shared/data/litm");
        let own = parse_own("nq20_subset.jsonl", &jsonl, jsonl.len()).unwrap();
        let bundled = std::fs::read_to_string(format!("{ROOT}/www/learn/litm-nq.json")).unwrap();
        let bundled: LitmData = serde_json::from_str(&bundled).unwrap();
        assert_eq!(own.questions.len(), 60);
        for (a, b) in own.questions.iter().zip(&bundled.questions) {
            assert_eq!(
                (&a.question, &a.answers, a.gold_index, &a.passages),
                (&b.question, &b.answers, b.gold_index, &b.passages)
            );
        }
        assert_eq!(
            bundled
                .questions
                .iter()
                .filter(|q| q.original_distractors)
                .count(),
            3
        );
        assert_eq!(own.key, format!("own:nq20_subset.jsonl:{}", jsonl.len()));
    }

    #[test]
    fn results_are_kept_only_when_ticked_and_the_choice_waits_for_a_run_to_end() {
        let s = Rc::new(LitmState::default());
        assert!(!s.keep, "off by default");
        let s = s.reduce(LitmAction::SetKeep(true));
        assert!(s.keep);
        // A run under way writes where it started writing: the box waits for it.
        let s = s.reduce(LitmAction::Started);
        let s = s.reduce(LitmAction::SetKeep(false));
        assert!(s.keep);
    }

    #[test]
    fn key_value_records_are_seeded_and_hold_the_asked_pair() {
        let a = key_value(5, 3, 7);
        assert_eq!(a, key_value(5, 3, 7));
        assert_ne!(a.questions, key_value(5, 3, 8).questions);
        for q in &a.questions {
            assert_eq!(q.passages.len(), 5);
            let gold = &q.passages[q.gold_index];
            assert!(gold.contains(&q.answers[0]));
            let key = gold.split('"').nth(1).unwrap();
            assert_eq!(key.len(), 36);
            assert!(q.question.contains(key));
            // The value is found by the lost-in-the-middle scorer in an answer that states it.
            let answer = format!("The value is {}.", q.answers[0]);
            assert!(ragscope_eval::rag::answer_match::substring_match(
                &answer, &q.answers
            ));
        }
    }

    #[test]
    fn bad_questions_are_refused_with_their_place() {
        let two_golds = r#"{"question":"q","answers":["a"],"ctxs":[{"text":"x","isgold":true},{"text":"y","isgold":true}]}"#;
        let e = parse_own("f.jsonl", &format!("\n{two_golds}\n"), 1).unwrap_err();
        assert!(e.starts_with("f.jsonl:2: exactly one passage"), "{e}");
        let e = parse_own("f.jsonl", "{\"question\": 1}", 1).unwrap_err();
        assert!(
            e.contains("f.jsonl:1: missing string field \"question\""),
            "{e}"
        );
        let e = parse_own(
            "f.json",
            r#"{"source":"","questions":[{"qid":"a","question":"q","answers":["x"],"gold_index":5,"passages":["p","q"]}]}"#,
            1,
        )
        .unwrap_err();
        assert!(
            e.contains("f.json: question 1 (a): gold_index 5 but 2 passages"),
            "{e}"
        );
        assert!(parse_own("f.json", "", 1)
            .unwrap_err()
            .contains("no question"));
    }

    #[test]
    fn a_udcg_reference_json_moves_its_first_relevant_passage_and_has_no_accuracy() {
        let text = std::fs::read_to_string(format!(
            "{ROOT}/../shared/data/udcg/dataset_with_scores.json"
        ))
        .expect("../shared/data/udcg");
        let d = parse_own("dataset_with_scores.json", &text, text.len()).unwrap();
        let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(d.questions.len(), 3);
        for (q, ex) in d.questions.iter().zip(raw.as_array().unwrap()) {
            let passages = ex["passages"].as_array().unwrap();
            let text_of = |p: &serde_json::Value| p["text"].as_str().unwrap().to_string();
            let first_relevant = passages.iter().find(|p| p["is_relevant"] == true).unwrap();
            let irrelevant: Vec<String> = passages
                .iter()
                .filter(|p| p["is_relevant"] == false)
                .map(text_of)
                .collect();
            assert_eq!(q.qid, ex["example_id"].as_str().unwrap());
            assert_eq!(q.question, ex["question"].as_str().unwrap());
            assert_eq!(q.gold_index, 0);
            assert_eq!(q.passages[0], text_of(first_relevant));
            assert_eq!(q.passages[1..], irrelevant[..]);
            assert!(q.answers.is_empty());
        }
        let note = d.note.clone().unwrap();
        assert!(note.contains("no gold answers"), "{note}");
        assert!(note.contains("2 relevant passages beyond"), "{note}");
        // k is capped by the shortest example (1 relevant + 3 irrelevant), and the summary has
        // every metric but no accuracy.
        let s = Rc::new(LitmState::default()).reduce(LitmAction::Data(Ok(Rc::new(d))));
        assert_eq!((s.k, s.questions), (4, 3));
        let mut s = s;
        for qid in ["example_1", "example_2", "example_3"] {
            let mut i = item_at(qid, 1);
            i.udcg = Some(0.5);
            i.p_no_response = Some(0.25);
            s = s.reduce(LitmAction::Worker(Response::Litm(LitmEvent::Item(i))));
        }
        let row = s.summary().into_iter().find(|r| r.position == 1).unwrap();
        assert_eq!((row.n, row.scored), (3, 0));
        assert!(row.accuracy.is_nan() && row.band.is_none());
        assert_eq!(
            (row.udcg, row.p_no_response, row.ndcg),
            (0.5, Some(0.25), 1.0)
        );
        // A file that is neither form, and an example without its fields, say where.
        let e = parse_own("u.json", r#"[{"passages": []}]"#, 1).unwrap_err();
        assert!(e.contains("u.json: example 1: missing string field"), "{e}");
        let e = parse_own(
            "u.json",
            r#"[{"question": "q", "passages": [{"text": "t"}]}]"#,
            1,
        )
        .unwrap_err();
        assert!(
            e.contains("passages[0] has no boolean \"is_relevant\""),
            "{e}"
        );
    }

    fn item_at(qid: &str, position: usize) -> LitmItem {
        LitmItem {
            qid: qid.into(),
            position,
            answer: "x".into(),
            correct: false,
            abstain: false,
            p_no_response: None,
            ndcg: 1.0,
            map: 1.0,
            mrr: 1.0,
            precision: 0.25,
            udcg: None,
            prompt_tokens: 1,
            p_bound: false,
            udcg_missing: None,
            retry: false,
        }
    }

    #[test]
    fn the_band_is_a_bootstrap_interval_around_the_accuracy() {
        let item = |correct| LitmItem {
            qid: String::new(),
            position: 1,
            answer: String::new(),
            correct,
            abstain: false,
            p_no_response: None,
            ndcg: 1.0,
            map: 1.0,
            mrr: 1.0,
            precision: 0.1,
            udcg: Some(0.6),
            prompt_tokens: 0,
            p_bound: false,
            udcg_missing: None,
            retry: false,
        };
        let items = [item(true), item(false), item(true), item(true)];
        let refs: Vec<&LitmItem> = items.iter().collect();
        let s = PositionSummary::of(1, &refs);
        assert_eq!((s.n, s.accuracy), (4, 0.75));
        let (lo, hi) = s.band.unwrap();
        assert!(lo <= 0.75 && 0.75 <= hi && lo >= 0.0 && hi <= 1.0);
        assert!(s.p_no_response.is_none());
    }

    fn remote_state() -> LitmState {
        let q = |qid: &str| DataQuestion {
            qid: qid.into(),
            source_qid: String::new(),
            question: "?".into(),
            answers: vec!["x".into()],
            gold_index: 0,
            original_distractors: false,
            passages: vec!["a".into(), "b".into(), "c".into()],
        };
        let data = LitmData {
            source: String::new(),
            questions: vec![q("q1"), q("q2")],
            key: "d".into(),
            own: None,
            note: None,
        };
        let s = Rc::new(LitmState::default());
        let s = s.reduce(LitmAction::Data(Ok(Rc::new(data))));
        let s = s.reduce(LitmAction::SetK(3));
        let s = s.reduce(LitmAction::SetSource(ModelSource::Remote));
        let s = s.reduce(LitmAction::SetRemote(Some(RemoteModel {
            provider: ragscope_protocol::judges::ProviderChoice::OpenAiCompatible,
            model: "m".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
        })));
        (*s).clone()
    }

    fn item(qid: &str, position: usize, correct: bool) -> LitmItem {
        LitmItem {
            qid: qid.into(),
            position,
            answer: String::new(),
            correct,
            abstain: false,
            p_no_response: None,
            ndcg: 1.0,
            map: 1.0,
            mrr: 1.0,
            precision: 1.0 / 3.0,
            udcg: None,
            prompt_tokens: 0,
            p_bound: false,
            udcg_missing: None,
            retry: false,
        }
    }

    #[test]
    fn a_remote_model_is_keyed_by_provider_and_model_and_failures_are_not_scored() {
        let s = remote_state();
        assert_eq!(
            s.cache_key().as_deref(),
            Some("remote|openai-compatible/m at http://127.0.0.1:1/v1|d|k=3|p=top20|cp=true")
        );
        assert_eq!(
            s.model_name().as_deref(),
            Some("openai-compatible/m at http://127.0.0.1:1/v1")
        );
        let s = Rc::new(s);
        let s = s.reduce(LitmAction::EstimateRequested("stamp".into()));
        let estimate = RemoteEstimate {
            requests: 6,
            cached: 0,
            input_tokens: 1,
            output_tokens: 2,
            cost: None,
            price_note: String::new(),
            endpoint: "e".into(),
            first_prompt: String::new(),
            utility_requests: 0,
            scoring: String::new(),
        };
        let s = s.reduce(LitmAction::Worker(Response::Litm(
            LitmEvent::RemoteEstimate(estimate.clone()),
        )));
        assert_eq!(s.estimate_for("stamp"), Some(&estimate));
        assert_eq!(s.estimate_for("other"), None);
        let s = s.reduce(LitmAction::Started);
        let mut s = s;
        for e in [
            LitmEvent::Item(item("q1", 1, true)),
            LitmEvent::Item(item("q1", 2, false)),
            LitmEvent::ItemFailed {
                qid: "q2".into(),
                position: 1,
                error: "HTTP 400".into(),
            },
            LitmEvent::Item(item("q2", 2, true)),
            LitmEvent::Spent {
                requests: 4,
                cost: Some(0.5),
            },
            LitmEvent::Paused(true),
        ] {
            s = s.reduce(LitmAction::Worker(Response::Litm(e)));
        }
        assert!(s.paused && s.running);
        assert_eq!(s.spent, Some((4, Some(0.5))));
        let rows = s.summary();
        let p1 = rows.iter().find(|r| r.position == 1).unwrap();
        // Position 1: q1 answered correctly, q2 failed: n = 1, accuracy 1 (not 1/2).
        assert_eq!((p1.n, p1.failed, p1.accuracy), (1, 1, 1.0));
        assert!(p1.udcg.is_nan() && p1.p_no_response.is_none());
        let p2 = rows.iter().find(|r| r.position == 2).unwrap();
        assert_eq!((p2.n, p2.failed, p2.accuracy), (2, 0, 0.5));
        let s = s.reduce(LitmAction::Worker(Response::Litm(LitmEvent::Done {
            seconds: 1.0,
        })));
        assert!(!s.running && !s.paused && s.estimate.is_none());
        // A rerun sends the failed context again: its failure is cleared at Start.
        let s = s.reduce(LitmAction::Started);
        assert!(s.failed.is_empty());
        // Another remote model is another experiment.
        let s = s.reduce(LitmAction::Worker(Response::Litm(LitmEvent::Cancelled {
            done: 0,
        })));
        let s = s.reduce(LitmAction::SetRemote(None));
        assert!(s.items.is_empty() && s.cache_key().is_none());
    }

    #[test]
    fn a_remote_models_bounds_and_utility_failures_are_kept_apart_from_values() {
        let s = Rc::new(remote_state());
        assert_eq!(s.remote_utility(), Some(UtilityTemplate::None));
        // The served model's GGUF read: exact scoring, another experiment (its own key).
        let s = s.reduce(LitmAction::RemoteGguf(Some((7, "m.gguf".into()))));
        assert_eq!(
            s.remote_utility(),
            Some(UtilityTemplate::None),
            "not read yet"
        );
        let info = |id| GgufTemplateInfo {
            id,
            file_name: "m.gguf".into(),
            model_name: None,
            summary: String::new(),
        };
        // A late answer for an earlier pick changes nothing.
        let s = s.reduce(LitmAction::Worker(Response::Judge(
            JudgeResponse::GgufRead {
                id: 6,
                result: Ok(info(6)),
            },
        )));
        assert!(s.remote_gguf_read.is_none());
        let s = s.reduce(LitmAction::Worker(Response::Judge(
            JudgeResponse::GgufRead {
                id: 7,
                result: Ok(info(7)),
            },
        )));
        assert_eq!(
            s.remote_utility(),
            Some(UtilityTemplate::Gguf {
                id: 7,
                name: "m.gguf".into()
            })
        );
        assert!(s.cache_key().unwrap().ends_with("|p=echo:m.gguf|cp=true"));
        let s = s.reduce(LitmAction::Started);
        let bounded = |qid: &str, position, p| LitmItem {
            p_no_response: Some(p),
            p_bound: true,
            udcg_missing: Some("1 of its 3 passages' p(NO-RESPONSE) are only upper bounds".into()),
            ..item(qid, position, true)
        };
        let exact = |qid: &str, position, p| LitmItem {
            p_no_response: Some(p),
            udcg: Some(0.5),
            ..item(qid, position, true)
        };
        let failed = |qid: &str, position| LitmItem {
            retry: true,
            udcg_missing: Some("1 of its 3 passages' utility calls failed".into()),
            ..item(qid, position, true)
        };
        let mut s = s;
        for e in [
            LitmEvent::Item(bounded("q1", 1, 0.25)),
            LitmEvent::Item(exact("q2", 1, 0.5)),
            LitmEvent::Item(exact("q1", 2, 0.125)),
            LitmEvent::Item(exact("q2", 2, 0.375)),
            LitmEvent::Item(failed("q1", 3)),
            LitmEvent::UtilityFailed {
                qid: "q1".into(),
                what: "passage 2 alone".into(),
                error: "HTTP 400".into(),
            },
            LitmEvent::Item(exact("q2", 3, 0.5)),
        ] {
            s = s.reduce(LitmAction::Worker(Response::Litm(e)));
        }
        assert_eq!(s.utility_failed.len(), 1);
        let rows = s.summary();
        // Position 1: a bound among the values: the mean is only a bound, UDCG not computed.
        assert!(rows[0].p_bound && rows[0].p_no_response == Some(0.375));
        assert!(rows[0].udcg.is_nan() && rows[0].udcg_missing == 1);
        // Position 2: all exact.
        assert!(!rows[1].p_bound && rows[1].p_no_response == Some(0.25));
        assert_eq!((rows[1].udcg, rows[1].udcg_missing), (0.5, 0));
        // Position 3: a failed call: no p (not every context has one), no UDCG.
        assert!(rows[2].p_no_response.is_none() && rows[2].udcg.is_nan());
        // Only the context with a failed call is to do again.
        assert!(s.to_do("q1", 3) && !s.to_do("q1", 1) && !s.to_do("q2", 3));
        let s = s.reduce(LitmAction::Worker(Response::Litm(LitmEvent::Done {
            seconds: 1.0,
        })));
        let csv = super::super::litm_export::summary_csv(&s);
        let first = csv.lines().nth(1).unwrap();
        assert!(first.contains(",<=0.375,"), "{first}");
        assert!(first.ends_with(",,1"), "{first}");
        let items = super::super::litm_export::items_csv(&s);
        assert!(items
            .lines()
            .any(|l| l.starts_with("q1,1,") && l.contains(",<=0.25,")));
        // The failures are cleared when Start sends them again.
        let s = s.reduce(LitmAction::Started);
        assert!(s.utility_failed.is_empty());
        // Anthropic gives no log-probabilities: no p asked for, and the key says nothing of it.
        let mut a = remote_state();
        a.remote.as_mut().unwrap().provider = ragscope_protocol::judges::ProviderChoice::Anthropic;
        assert_eq!(a.remote_utility(), None);
        assert!(a.cache_key().unwrap().ends_with("|k=3"));
        // Gemini gives its top 20 (no echo): the GGUF read for an OpenAI-compatible server is
        // not used for it, and its key says how p is read.
        let mut g = (*s).clone();
        g.remote.as_mut().unwrap().provider = ragscope_protocol::judges::ProviderChoice::Gemini;
        assert!(g.remote_gguf_read.is_some());
        assert_eq!(g.remote_utility(), Some(UtilityTemplate::None));
        assert!(g.cache_key().unwrap().ends_with("|p=top20|cp=true"));
    }
}
