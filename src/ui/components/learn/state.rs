//! The context builder's state as a reducer: every action recomputes the metrics (crates/eval)
//! and appends them to the history the chart draws. The state round-trips through the URL
//! (`#/learn/udcg-vs-ndcg?k=5&c=r0.1,i0.9,...`) so a teacher can share one exact example.

use super::metrics::{self, Metrics, Passage};
use std::rc::Rc;
use yew::Reducible;

/// Most passages a context may hold (and the largest k).
pub const MAX_K: usize = 10;
/// Points kept in the metric history chart.
pub const HISTORY: usize = 40;

#[derive(Clone, Debug, PartialEq)]
pub struct BuilderState {
    pub question: String,
    /// Cutoff k: the size of the context the reader gets; fewer cards leave empty slots.
    pub k: usize,
    pub passages: Vec<Passage>,
    next_id: u32,
    /// Metrics of the current context (an error only for an empty context).
    pub metrics: Result<Metrics, String>,
    /// (what changed, metrics after it), oldest first.
    pub history: Vec<(String, Metrics)>,
    /// Where the passages come from (a real question's id), for the URL and the labels.
    pub source: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BuilderAction {
    /// Move the passage at `from` to index `to` (drag and drop, or the ↑/↓ buttons).
    Move {
        from: usize,
        to: usize,
    },
    ToggleRelevance(usize),
    /// Set |u| = 1 − p(NO-RESPONSE) of a passage (the slider).
    SetMagnitude(usize, f64),
    Add {
        relevant: bool,
    },
    Remove(usize),
    SetK(usize),
    /// Give a deep link's passages their real question, titles and texts once the precomputed
    /// data has arrived (`None` keeps a card's label); the numbers do not change.
    Relabel {
        question: String,
        labels: Vec<Option<(String, String)>>,
    },
    /// p(NO-RESPONSE) of some cards (by card id) from `model` ("recompute with your model").
    SetUtilities {
        values: Vec<(u32, f64)>,
        model: String,
    },
    /// Replace the whole context (a guided step, a real question, a deep link).
    Load {
        question: String,
        k: usize,
        passages: Vec<(bool, f64, String, String)>,
        source: Option<String>,
        why: String,
    },
}

impl BuilderState {
    pub fn new(question: String, k: usize, passages: Vec<(bool, f64, String, String)>) -> Self {
        let mut s = BuilderState {
            question,
            k: k.clamp(1, MAX_K),
            passages: Vec::new(),
            next_id: 1,
            metrics: Err(String::new()),
            history: Vec::new(),
            source: None,
        };
        s.replace(passages);
        s.recompute("start");
        s
    }

    fn replace(&mut self, passages: Vec<(bool, f64, String, String)>) {
        self.passages.clear();
        for (relevant, p, title, text) in passages.into_iter().take(MAX_K) {
            let id = self.fresh_id();
            self.passages.push(Passage {
                id,
                relevant,
                p_no_response: clamp_p(p),
                title,
                text,
                u_from: None,
            });
        }
        self.k = self.k.max(self.passages.len());
    }

    fn fresh_id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id - 1
    }

    fn recompute(&mut self, why: &str) {
        self.metrics = metrics::evaluate(&self.passages, self.k);
        if let Ok(m) = self.metrics {
            self.history.push((why.to_string(), m));
            if self.history.len() > HISTORY {
                self.history.remove(0);
            }
        }
    }

    /// The query part of the deep link (without `?`): `k=5&c=r0.1,i0.9` (p(NO-RESPONSE) of each
    /// passage in context order, r = relevant, i = irrelevant) and `q=` for a real question.
    pub fn to_query(&self) -> String {
        let c: Vec<String> = self
            .passages
            .iter()
            .map(|p| format!("{}{}", if p.relevant { 'r' } else { 'i' }, p.p_no_response))
            .collect();
        let mut q = format!("k={}&c={}", self.k, c.join(","));
        if let Some(src) = &self.source {
            q.push_str(&format!("&q={}", encode(src)));
        }
        q
    }
}

/// The context a deep link names.
#[derive(Clone, Debug, PartialEq)]
pub struct DeepLink {
    pub k: usize,
    /// (relevant, p(NO-RESPONSE)) in context order.
    pub passages: Vec<(bool, f64)>,
    /// A real question's id, when the passages came from one.
    pub source: Option<String>,
}

/// A deep link's context, or None when the query has no valid `c=` (the page then shows its
/// default example).
pub fn parse_query(query: &str) -> Option<DeepLink> {
    let mut k = None;
    let mut passages = None;
    let mut source = None;
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=')?;
        match key {
            "k" => {
                k = value
                    .parse::<usize>()
                    .ok()
                    .filter(|k| (1..=MAX_K).contains(k))
            }
            "c" => {
                let items: Option<Vec<(bool, f64)>> = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|item| {
                        let relevant = match item.as_bytes().first()? {
                            b'r' => true,
                            b'i' => false,
                            _ => return None,
                        };
                        let p = item[1..].parse::<f64>().ok()?;
                        (p.is_finite() && (0.0..=1.0).contains(&p)).then_some((relevant, p))
                    })
                    .collect();
                passages = items.filter(|v| !v.is_empty() && v.len() <= MAX_K);
            }
            "q" => source = Some(decode(value)),
            _ => {}
        }
    }
    let passages = passages?;
    let k = k.unwrap_or(passages.len()).max(passages.len());
    Some(DeepLink {
        k,
        passages,
        source,
    })
}

/// Percent-encodes what a query value cannot hold literally (a real question id has a `:`).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn clamp_p(p: f64) -> f64 {
    if p.is_finite() {
        p.clamp(0.0, 1.0)
    } else {
        1.0
    }
}

impl Reducible for BuilderState {
    type Action = BuilderAction;

    fn reduce(self: Rc<Self>, action: BuilderAction) -> Rc<Self> {
        let mut s = (*self).clone();
        let why = match action {
            BuilderAction::Relabel { question, labels } => {
                s.question = question;
                for (p, label) in s.passages.iter_mut().zip(labels) {
                    if let Some((title, text)) = label {
                        p.title = title;
                        p.text = text;
                    }
                }
                return Rc::new(s);
            }
            BuilderAction::Move { from, to } => {
                if from >= s.passages.len() || to >= s.passages.len() || from == to {
                    return self;
                }
                let p = s.passages.remove(from);
                s.passages.insert(to, p);
                format!("moved {} → {}", from + 1, to + 1)
            }
            BuilderAction::ToggleRelevance(i) => {
                let Some(p) = s.passages.get_mut(i) else {
                    return self;
                };
                p.relevant = !p.relevant;
                format!("toggled {}", i + 1)
            }
            BuilderAction::SetMagnitude(i, u) => {
                let Some(p) = s.passages.get_mut(i) else {
                    return self;
                };
                p.p_no_response = clamp_p(1.0 - u);
                p.u_from = None;
                format!("|u{}| = {u:.2}", i + 1)
            }
            BuilderAction::Add { relevant } => {
                if s.passages.len() >= MAX_K {
                    return self;
                }
                let id = s.fresh_id();
                s.passages.push(Passage {
                    id,
                    relevant,
                    p_no_response: 0.5,
                    title: if relevant {
                        format!("Added relevant passage #{id}")
                    } else {
                        format!("Added distractor #{id}")
                    },
                    text: String::new(),
                    u_from: None,
                });
                s.k = s.k.max(s.passages.len());
                "added".into()
            }
            BuilderAction::SetUtilities { values, model } => {
                let mut changed = 0;
                for (id, p) in values {
                    if let Some(card) = s.passages.iter_mut().find(|c| c.id == id) {
                        card.p_no_response = clamp_p(p);
                        card.u_from = Some(model.clone());
                        changed += 1;
                    }
                }
                if changed == 0 {
                    return self;
                }
                format!("u by {model}")
            }
            BuilderAction::Remove(i) => {
                if i >= s.passages.len() || s.passages.len() == 1 {
                    return self;
                }
                s.passages.remove(i);
                format!("removed {}", i + 1)
            }
            BuilderAction::SetK(k) => {
                let k = k.clamp(s.passages.len().max(1), MAX_K);
                if k == s.k {
                    return self;
                }
                s.k = k;
                format!("k = {k}")
            }
            BuilderAction::Load {
                question,
                k,
                passages,
                source,
                why,
            } => {
                s.question = question;
                s.k = k.clamp(1, MAX_K);
                s.source = source;
                s.replace(passages);
                why
            }
        };
        s.recompute(&why);
        Rc::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> BuilderState {
        BuilderState::new(
            "q".into(),
            5,
            vec![
                (true, 0.1, "a".into(), String::new()),
                (false, 0.9, "b".into(), String::new()),
                (false, 0.8, "c".into(), String::new()),
            ],
        )
    }

    #[test]
    fn actions_change_the_context_and_the_history() {
        let s = Rc::new(example());
        let s = s.reduce(BuilderAction::Move { from: 0, to: 2 });
        assert_eq!(
            s.passages
                .iter()
                .map(|p| p.title.as_str())
                .collect::<Vec<_>>(),
            ["b", "c", "a"]
        );
        let s = s.reduce(BuilderAction::ToggleRelevance(0));
        assert!(s.passages[0].relevant);
        let s = s.reduce(BuilderAction::SetMagnitude(1, 0.25));
        assert!((s.passages[1].p_no_response - 0.75).abs() < 1e-12);
        let s = s.reduce(BuilderAction::Add { relevant: false });
        assert_eq!(s.passages.len(), 4);
        let s = s.reduce(BuilderAction::Remove(3));
        assert_eq!(s.passages.len(), 3);
        // k never drops below the number of passages.
        let s = s.reduce(BuilderAction::SetK(1));
        assert_eq!(s.k, 3);
        // The start and six changes.
        assert_eq!(s.history.len(), 7);
    }

    #[test]
    fn recomputed_utilities_replace_the_cards_and_name_the_model() {
        let s = Rc::new(example());
        let ids: Vec<u32> = s.passages.iter().map(|p| p.id).collect();
        let s = s.reduce(BuilderAction::SetUtilities {
            values: vec![(ids[0], 0.25), (ids[2], 0.5), (999, 0.1)],
            model: "m".into(),
        });
        assert_eq!(s.passages[0].p_no_response, 0.25);
        assert_eq!(s.passages[0].u_from.as_deref(), Some("m"));
        assert_eq!(s.passages[1].p_no_response, 0.9);
        assert_eq!(s.passages[1].u_from, None);
        assert_eq!(s.passages[2].p_no_response, 0.5);
        assert_eq!(s.history.last().unwrap().0, "u by m");
        // Moving a slider makes the utility the user's again.
        let s = s.reduce(BuilderAction::SetMagnitude(0, 0.5));
        assert_eq!(s.passages[0].u_from, None);
    }

    #[test]
    fn the_url_round_trips() {
        let s = Rc::new(example()).reduce(BuilderAction::SetMagnitude(2, 0.123456789));
        let q = s.to_query();
        let DeepLink {
            k,
            passages,
            source,
        } = parse_query(&q).unwrap();
        assert_eq!(k, 5);
        assert_eq!(source, None);
        let back: Vec<(bool, f64)> = s
            .passages
            .iter()
            .map(|p| (p.relevant, p.p_no_response))
            .collect();
        assert_eq!(passages, back);
        assert!(parse_query("k=5&c=x0.1").is_none());
        assert!(parse_query("k=5&c=r1.5").is_none());
        assert_eq!(
            decode(&encode("nq-open-oracle:12 x")),
            "nq-open-oracle:12 x"
        );
    }
}
