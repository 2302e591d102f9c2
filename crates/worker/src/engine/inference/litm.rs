//! The lost-in-the-middle experiment in the worker (Liu et al., TACL 2024, §2; the UDCG seed's
//! Figure 1): one relevant passage moved through a context of k passages (the gold and the first
//! k − 1 distractors in the data's order; the paper's procedure: remove the gold, insert it at
//! the new index, the distractors keep their order). For each context: the greedy answer of the
//! opened model (crates/infer's `Answerer`, the prompt `ragscope answer` uses), its outcome by
//! the lost-in-the-middle scorer (crates/eval `answer_match::outcome`), optionally p(NO-RESPONSE)
//! of the whole context's prompt, and nDCG, AP, RR, P and UDCG of that context (crates/eval
//! kernels; UDCG from the p(NO-RESPONSE) of each passage alone, computed with the same model
//! unless the page already has them).
//!
//! Plain Rust: one step is one question's passage utilities or one context, so the worker reports
//! progress and obeys cancel between steps. The CPU step is here; the WebGPU step in
//! `litm_web.rs` shares the prompt building and the scoring.

use super::{LocalModel, Workspace};
use ragscope_eval::rag::answer_match::outcome;
use ragscope_eval::rag::classic;
use ragscope_eval::rag::contexts::Outcome;
use ragscope_eval::rag::udcg::udcg_of_context;
use ragscope_eval::rag::{Judgment, UdcgParams};
use ragscope_infer::answer::Answerer;
use ragscope_infer::generate::{greedy, GreedyOptions};
use ragscope_infer::utility::{token_probability, NoResponseScorer, PromptTemplate};
use ragscope_protocol::litm::{
    context, utility_passages, LitmEvent, LitmItem, LitmPrompt, LitmQuestion, LitmRequest,
};
use ragscope_protocol::Response;

/// The classic metrics and UDCG of one context, from crates/eval's kernels: the context is the
/// ranking (one relevant passage judged per question, as in the qrels the page exports).
pub fn scores(ctx: &[(usize, bool)], q: &LitmQuestion, k: usize, p: &[f64]) -> [f64; 5] {
    let relevant: Vec<bool> = ctx.iter().map(|(_, r)| *r).collect();
    let order = utility_passages(q, k).unwrap_or_default();
    let judgments: Vec<Option<Judgment>> = ctx
        .iter()
        .map(|(j, r)| {
            order
                .iter()
                .position(|o| o == j)
                .and_then(|i| p.get(i))
                .map(|&p_no_response| Judgment {
                    relevant: *r,
                    p_no_response,
                })
        })
        .collect();
    [
        classic::ndcg(&relevant, 1),
        classic::average_precision(&relevant, 1),
        classic::reciprocal_rank(&relevant),
        classic::precision(&relevant),
        udcg_of_context(&judgments, Some(k), &UdcgParams::default()),
    ]
}

/// An experiment being computed.
pub struct LitmJob {
    questions: Vec<LitmQuestion>,
    k: usize,
    utilities: Vec<Option<Vec<f64>>>,
    tasks: Vec<(usize, usize)>,
    context_p: bool,
    prompt: LitmPrompt,
    pub options: GreedyOptions,
    /// Questions whose utilities are still to compute, in order.
    pending_utilities: Vec<usize>,
    next_task: usize,
    done: usize,
    pub seconds: f64,
    pub on_gpu: bool,
}

/// What one step has to compute.
pub enum Work {
    /// p(NO-RESPONSE) of each prompt (one passage each) for question `q`.
    Utilities {
        q: usize,
        prompts: Vec<Vec<u32>>,
    },
    /// The greedy answer (and p(NO-RESPONSE), if asked) of one context's prompt.
    Context {
        task: usize,
        prompt: Vec<u32>,
        want_p: bool,
    },
    Finished,
}

impl LitmJob {
    pub fn new(request: LitmRequest) -> Result<Self, String> {
        let LitmRequest::Start {
            questions,
            k,
            utilities,
            tasks,
            context_p,
            max_new_tokens,
            prompt,
            ..
        } = request
        else {
            return Err("not a start request".into());
        };
        if utilities.len() != questions.len() {
            return Err(format!(
                "{} utility entries for {} questions",
                utilities.len(),
                questions.len()
            ));
        }
        if max_new_tokens == 0 {
            return Err("max_new_tokens must be at least 1".into());
        }
        for &(q, position) in &tasks {
            let question = questions
                .get(q)
                .ok_or_else(|| format!("task names question {q}, there are {}", questions.len()))?;
            context(question, k, position)?;
        }
        for (q, u) in utilities.iter().enumerate() {
            if let Some(u) = u {
                if u.len() != k || u.iter().any(|p| !(0.0..=1.0).contains(p)) {
                    return Err(format!(
                        "{}: the given utilities must be {k} probabilities",
                        questions[q].qid
                    ));
                }
            }
        }
        let mut pending_utilities: Vec<usize> = tasks
            .iter()
            .map(|&(q, _)| q)
            .filter(|&q| utilities[q].is_none())
            .collect();
        pending_utilities.sort_unstable();
        pending_utilities.dedup();
        Ok(LitmJob {
            questions,
            k,
            utilities,
            tasks,
            context_p,
            prompt,
            options: GreedyOptions {
                max_new_tokens,
                ..GreedyOptions::default()
            },
            pending_utilities,
            next_task: 0,
            done: 0,
            seconds: 0.0,
            on_gpu: false,
        })
    }

    pub fn total(&self) -> usize {
        self.done + self.pending_utilities.len() + self.tasks.len() - self.next_task
    }

    pub fn progress(&self) -> LitmEvent {
        LitmEvent::Progress {
            done: self.done,
            total: self.total(),
            seconds: self.seconds,
        }
    }

    pub fn done(&self) -> usize {
        self.done
    }

    /// The next step's prompts (tokenized with the model's chat template); a prompt past the
    /// context window is an error naming the question.
    pub fn next_work(&self, local: &LocalModel) -> Result<Work, String> {
        let window = local.model.config.context_length;
        let check = |ids: Vec<u32>, what: &str| -> Result<Vec<u32>, String> {
            if window > 0 && ids.len() + 1 > window {
                Err(format!(
                    "{what}: the prompt has {} tokens, the model's context window {window}; choose a smaller k",
                    ids.len()
                ))
            } else {
                Ok(ids)
            }
        };
        if let Some(&q) = self.pending_utilities.first() {
            let question = &self.questions[q];
            let scorer =
                NoResponseScorer::new(&local.model, &local.tokenizer, PromptTemplate::default())
                    .map_err(|e| e.to_string())?;
            let prompts = utility_passages(question, self.k)?
                .into_iter()
                .map(|j| {
                    let ids = scorer
                        .prompt_tokens(&question.question, &question.passages[j])
                        .map_err(|e| format!("{} passage {j}: {e}", question.qid))?;
                    check(ids, &format!("{} passage {j}", question.qid))
                })
                .collect::<Result<Vec<_>, String>>()?;
            return Ok(Work::Utilities { q, prompts });
        }
        let Some(&(q, position)) = self.tasks.get(self.next_task) else {
            return Ok(Work::Finished);
        };
        let question = &self.questions[q];
        let texts: Vec<&str> = context(question, self.k, position)?
            .iter()
            .map(|(j, _)| question.passages[*j].as_str())
            .collect();
        let answerer = self.answerer(local)?;
        let ids = match self.prompt {
            // As `ragscope answer` (its system prompt and Document lines).
            LitmPrompt::Udcg => answerer.prompt_tokens(&question.question, &texts),
            // The lost-in-the-middle paper's prompts: the user message alone.
            other => {
                let (_, user) = crate::engine::litm_prompts::render(
                    other,
                    &question.question,
                    &texts,
                    position - 1,
                )
                .map_err(|e| format!("{}: {e}", question.qid))?;
                answerer.user_prompt_tokens(&user)
            }
        }
        .map_err(|e| format!("{}: {e}", question.qid))?;
        let prompt = check(
            ids,
            &format!("{} with the gold at position {position}", question.qid),
        )?;
        Ok(Work::Context {
            task: self.next_task,
            prompt,
            // p(NO-RESPONSE) of a context only under the prompt that asks for NO-RESPONSE.
            want_p: self.context_p && self.prompt == LitmPrompt::Udcg,
        })
    }

    fn answerer<'m>(&self, local: &'m LocalModel) -> Result<Answerer<'m>, String> {
        Answerer::new(
            &local.model,
            &local.tokenizer,
            PromptTemplate::default(),
            self.options.clone(),
        )
        .map_err(|e| e.to_string())
    }

    /// Keeps a question's utilities.
    pub fn record_utilities(&mut self, q: usize, p: Vec<f64>) -> LitmEvent {
        self.pending_utilities.retain(|&x| x != q);
        self.done += 1;
        let event = LitmEvent::Utilities {
            qid: self.questions[q].qid.clone(),
            p: p.clone(),
        };
        self.utilities[q] = Some(p);
        event
    }

    /// Scores one context's answer.
    pub fn record_context(
        &mut self,
        task: usize,
        answer: String,
        p_no_response: Option<f64>,
        prompt_tokens: usize,
    ) -> LitmEvent {
        let (q, position) = self.tasks[task];
        self.next_task = task + 1;
        self.done += 1;
        LitmEvent::Item(item_of(
            &self.questions[q],
            self.k,
            position,
            answer,
            self.utilities[q].as_deref(),
            p_no_response,
            prompt_tokens,
        ))
    }
}

/// One context's result: the answer's outcome by the lost-in-the-middle scorer (crates/eval
/// `answer_match::outcome`) and the metrics of the context; UDCG only with the passages'
/// p(NO-RESPONSE) (`utilities`, in [`utility_passages`]' order), else `None`.
pub fn item_of(
    question: &LitmQuestion,
    k: usize,
    position: usize,
    answer: String,
    utilities: Option<&[f64]>,
    p_no_response: Option<f64>,
    prompt_tokens: usize,
) -> LitmItem {
    let ctx = context(question, k, position).unwrap_or_default();
    let [ndcg, map, mrr, precision, udcg] = scores(&ctx, question, k, utilities.unwrap_or(&[]));
    let o = outcome(&answer, &question.answers, true);
    LitmItem {
        qid: question.qid.clone(),
        position,
        correct: o == Outcome::Correct,
        abstain: o == Outcome::Abstain,
        answer,
        p_no_response,
        ndcg,
        map,
        mrr,
        precision,
        udcg: utilities.map(|_| udcg),
        prompt_tokens,
        p_bound: false,
        udcg_missing: None,
        retry: false,
    }
}

/// The token whose probability is p(NO-RESPONSE).
pub fn no_response_token(local: &LocalModel) -> Result<u32, String> {
    Ok(
        NoResponseScorer::new(&local.model, &local.tokenizer, PromptTemplate::default())
            .map_err(|e| e.to_string())?
            .target_token(),
    )
}

impl Workspace {
    /// Validates a start request and keeps the job (the web driver then steps it).
    pub fn start_litm(&mut self, request: LitmRequest) -> Result<(), String> {
        if self.local.is_none() {
            return Err("open a GGUF model first".into());
        }
        self.litm = Some(LitmJob::new(request)?);
        Ok(())
    }

    pub fn litm_job(&mut self) -> Option<&mut LitmJob> {
        self.litm.as_mut()
    }

    pub fn end_litm(&mut self) -> Option<LitmJob> {
        self.litm.take()
    }

    /// One step on the CPU engine: the event it produced, or `None` when the job is finished.
    pub fn litm_step_cpu(&mut self) -> Result<Option<LitmEvent>, String> {
        let (Some(local), Some(job)) = (&self.local, &mut self.litm) else {
            return Err("nothing to compute".into());
        };
        match job.next_work(local)? {
            Work::Finished => Ok(None),
            Work::Utilities { q, prompts } => {
                let target = no_response_token(local)?;
                let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
                let out = local.model.prefill(&refs).map_err(|e| e.to_string())?;
                let p = out
                    .last_logits
                    .iter()
                    .map(|l| token_probability(l, target))
                    .collect();
                Ok(Some(job.record_utilities(q, p)))
            }
            Work::Context {
                task,
                prompt,
                want_p,
            } => {
                let p = if want_p {
                    let target = no_response_token(local)?;
                    let out = local
                        .model
                        .prefill(&[prompt.as_slice()])
                        .map_err(|e| e.to_string())?;
                    out.last_logits
                        .first()
                        .map(|l| token_probability(l, target))
                } else {
                    None
                };
                let g = greedy(
                    &local.model,
                    &local.tokenizer,
                    &[prompt.as_slice()],
                    &job.options,
                )
                .map_err(|e| e.to_string())?;
                let answer = g.into_iter().next().map(|g| g.text).unwrap_or_default();
                Ok(Some(job.record_context(task, answer, p, prompt.len())))
            }
        }
    }

    /// Natively (tests, and the reactor off the browser): the whole experiment on the CPU.
    pub(in crate::engine) fn handle_litm(&mut self, request: LitmRequest) -> Vec<Response> {
        if request.is_remote() {
            return crate::engine::litm_remote::handle_now(self, request);
        }
        if matches!(request, LitmRequest::Cancel) {
            return self
                .end_litm()
                .map(|j| Response::Litm(LitmEvent::Cancelled { done: j.done() }))
                .into_iter()
                .collect();
        }
        if let Err(e) = self.start_litm(request) {
            return vec![Response::Litm(LitmEvent::Failed(e))];
        }
        let mut out = Vec::new();
        loop {
            match self.litm_step_cpu() {
                Ok(Some(event)) => out.push(Response::Litm(event)),
                Ok(None) => break,
                Err(e) => {
                    self.litm = None;
                    out.push(Response::Litm(LitmEvent::Failed(e)));
                    return out;
                }
            }
        }
        let seconds = self.end_litm().map_or(0.0, |j| j.seconds);
        out.push(Response::Litm(LitmEvent::Done { seconds }));
        out
    }
}

#[cfg(test)]
mod tests {
    //! The experiment natively with the tiny llama.cpp oracle model: its greedy answers equal
    //! llama.cpp's on the same contexts (crates/cli/tests/fixtures/answer, written by
    //! tests/oracle/generate_decode.py), and the metrics of a moved gold are the textbook values.
    use super::*;
    use crate::engine::inference::open_model;
    use ragscope_infer::gguf::VecSource;
    use serde_json::Value;

    const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

    fn read(rel: &str) -> String {
        let p = format!("{ROOT}/{rel}");
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// The fixture's question as a LitM question whose distractors come in `order`.
    fn question(line: &Value, gold: &str, order: &[&str]) -> LitmQuestion {
        let text = |d: &str| line["passages"][d]["text"].as_str().unwrap().to_string();
        let mut passages = vec![text(gold)];
        passages.extend(order.iter().map(|d| text(d)));
        LitmQuestion {
            qid: line["qid"].as_str().unwrap().into(),
            question: line["question"].as_str().unwrap().into(),
            answers: vec![line["answers"][0].as_str().unwrap().into()],
            gold_index: 0,
            passages,
        }
    }

    #[test]
    fn answers_equal_llama_cpp_and_metrics_follow_the_position() {
        let expected: Value =
            serde_json::from_str(&read("crates/cli/tests/fixtures/answer/expected.json")).unwrap();
        let lines: Vec<Value> = read("crates/cli/tests/fixtures/answer/contexts.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let want = |qid: &str, context: u64| {
            expected["answers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["qid"] == qid && a["context"] == context && a["passage"].is_null())
                .map(|a| a["answer"].as_str().unwrap().to_string())
                .unwrap()
        };
        // q1's contexts [d1, d2] (gold first) and [d3, d1] (gold second); q2's [d6, d4].
        let questions = vec![
            question(&lines[0], "d1", &["d2", "d3"]),
            question(&lines[0], "d1", &["d3", "d2"]),
            question(&lines[1], "d4", &["d6", "d5"]),
        ];
        let mut ws = Workspace::default();
        let path = format!("{ROOT}/crates/infer/tests/fixtures/llama-f32.gguf");
        let m = open_model(&VecSource::new(std::fs::read(path).unwrap()), "m.gguf").unwrap();
        ws.set_model(m);
        let out = ws.handle_litm(LitmRequest::Start {
            questions,
            k: 2,
            utilities: vec![None, Some(vec![0.25, 0.5]), None],
            tasks: vec![(0, 1), (1, 2), (2, 2)],
            context_p: true,
            max_new_tokens: expected["max_new_tokens"].as_u64().unwrap() as usize,
            backend: Default::default(),
            prompt: Default::default(),
        });
        let items: Vec<&LitmItem> = out
            .iter()
            .filter_map(|r| match r {
                Response::Litm(LitmEvent::Item(i)) => Some(i),
                _ => None,
            })
            .collect();
        let utilities = out
            .iter()
            .filter(|r| matches!(r, Response::Litm(LitmEvent::Utilities { .. })))
            .count();
        assert_eq!(utilities, 2, "only the questions without given utilities");
        assert!(matches!(
            out.last(),
            Some(Response::Litm(LitmEvent::Done { .. }))
        ));
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].answer, want("q1", 0));
        assert_eq!(items[1].answer, want("q1", 2));
        assert_eq!(items[2].answer, want("q2", 2));
        // Gold first: every rank metric 1, P@2 = 1/2.
        assert_eq!(items[0].ndcg, 1.0);
        assert_eq!(items[0].precision, 0.5);
        // Gold second: nDCG = 1/log2(3), AP = RR = 1/2; UDCG from the given p:
        // σ((1 − 0.25)/2 − (1/3)(1 − 0.5)/2).
        assert!((items[1].ndcg - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(
            (items[1].map, items[1].mrr, items[1].precision),
            (0.5, 0.5, 0.5)
        );
        let x: f64 = 0.75 / 2.0 - (1.0 / 3.0) * 0.5 / 2.0;
        assert!((items[1].udcg.unwrap() - 1.0 / (1.0 + (-x).exp())).abs() < 1e-12);
        assert!(items
            .iter()
            .all(|i| i.p_no_response.is_some_and(|p| (0.0..=1.0).contains(&p))));
    }
}

#[cfg(test)]
mod prompt_tests {
    //! The lost-in-the-middle paper's prompt reaches a local model as the one user message of
    //! its chat template, and no p(NO-RESPONSE) of the context is asked for under it.
    use super::*;
    use crate::engine::inference::open_model;
    use ragscope_infer::gguf::VecSource;

    #[test]
    fn the_papers_qa_prompt_is_the_user_message() {
        const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut ws = Workspace::default();
        let path = format!("{ROOT}/crates/infer/tests/fixtures/llama-f32.gguf");
        let m = open_model(&VecSource::new(std::fs::read(path).unwrap()), "m.gguf").unwrap();
        ws.set_model(m);
        let q = LitmQuestion {
            qid: "q".into(),
            question: "who?".into(),
            answers: vec!["x".into()],
            gold_index: 0,
            passages: vec!["(Title: G) gold".into(), "other".into()],
        };
        ws.start_litm(LitmRequest::Start {
            questions: vec![q],
            k: 2,
            utilities: vec![Some(vec![0.5, 0.5])],
            tasks: vec![(0, 2)],
            context_p: true,
            max_new_tokens: 2,
            backend: Default::default(),
            prompt: LitmPrompt::PaperQa,
        })
        .unwrap();
        let local = ws.local.as_ref().unwrap();
        let job = ws.litm.as_ref().unwrap();
        let Work::Context { prompt, want_p, .. } = job.next_work(local).unwrap() else {
            panic!("a context");
        };
        assert!(!want_p);
        let user = "Write a high-quality answer for the given question using only the provided search results (some of which might be irrelevant).\n\nDocument [1](Title: ) other\nDocument [2](Title: G) gold\n\nQuestion: who?\nAnswer:";
        let answerer = job.answerer(local).unwrap();
        assert_eq!(prompt, answerer.user_prompt_tokens(user).unwrap());
        assert!(!answerer
            .user_prompt_text(user)
            .unwrap()
            .contains(ragscope_infer::utility::PAPER_SYSTEM_PROMPT));
    }
}
