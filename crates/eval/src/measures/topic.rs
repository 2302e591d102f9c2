//! Per-topic precomputation shared by every measure: the ranked relevance vector and the
//! relevance-level counts (trec_eval's form_res_rels.c), computed once per topic.

use crate::formats::{bytes_cmp, QrelsTopic, RankedDoc, Run, RunTopic};

/// Relevance given to a retrieved document that is not in the qrels at all.
pub const NOT_POOLED: i32 = -1;
/// Relevance given to a retrieved document the qrels list with a negative value.
pub const POOLED_UNJUDGED: i32 = -2;

/// How a ranking is formed and what counts as relevant (trec_eval's `-l`, `-M`, `-J`, `-N`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RankingOptions {
    /// Minimum relevance for a document to be relevant (`-l`, default 1).
    pub relevance_level: i32,
    /// Keep only this many documents after the tie-sorted ranking (`-M`).
    pub max_docs: usize,
    /// Drop every unjudged document before scoring (`-J`).
    pub judged_only: bool,
    /// Collection size for utility's fourth coefficient (`-N`).
    pub num_docs_in_coll: i64,
}

impl Default for RankingOptions {
    fn default() -> Self {
        RankingOptions {
            relevance_level: 1,
            max_docs: usize::MAX,
            judged_only: false,
            num_docs_in_coll: 0,
        }
    }
}

/// Everything a measure kernel needs about one topic.
#[derive(Debug, Clone)]
pub struct TopicEval<'a> {
    /// Relevance of the document at each rank (index 0 = rank 1); `NOT_POOLED` or
    /// `POOLED_UNJUDGED` for documents without a usable judgment.
    pub rels: &'a [i32],
    /// `(level, count)` of judged documents per non-negative level, ascending.
    pub levels: &'a [(i32, u64)],
    pub level: i32,
    pub num_ret: u64,
    pub num_rel: u64,
    pub num_rel_ret: u64,
    pub num_nonpool: u64,
    pub num_unjudged_in_pool: u64,
    pub num_docs_in_coll: i64,
}

impl<'a> TopicEval<'a> {
    pub fn new(
        rels: &'a [i32],
        levels: &'a [(i32, u64)],
        level: i32,
        judged_only: bool,
        num_docs_in_coll: i64,
    ) -> Self {
        let mut num_rel_ret = 0;
        let mut num_nonpool = 0;
        let mut num_unjudged_in_pool = 0;
        for &r in rels {
            match r {
                NOT_POOLED if !judged_only => num_nonpool += 1,
                POOLED_UNJUDGED if !judged_only => num_unjudged_in_pool += 1,
                r if r >= level => num_rel_ret += 1,
                _ => {}
            }
        }
        let num_rel = levels
            .iter()
            .filter(|(l, _)| *l >= level)
            .map(|(_, c)| c)
            .sum();
        TopicEval {
            rels,
            levels,
            level,
            num_ret: rels.len() as u64,
            num_rel,
            num_rel_ret,
            num_nonpool,
            num_unjudged_in_pool,
            num_docs_in_coll,
        }
    }

    /// The same topic judged with another relevance threshold.
    pub fn with_level(&self, level: i32) -> TopicEval<'a> {
        let mut t = TopicEval::new(self.rels, self.levels, level, false, self.num_docs_in_coll);
        // judged_only rankings hold no negative rels, so recounting is exact either way
        t.num_nonpool = self.num_nonpool;
        t.num_unjudged_in_pool = self.num_unjudged_in_pool;
        t
    }

    /// trec_eval's num_rel_levels: one more than the highest level with a judgment.
    pub fn num_rel_levels(&self) -> i64 {
        self.levels.last().map(|(l, _)| *l as i64 + 1).unwrap_or(0)
    }

    #[inline]
    pub fn is_rel(&self, r: i32) -> bool {
        r >= self.level
    }
}

/// trec_eval's ranking of a topic's results: score descending, ties by docno descending
/// (byte order, as `strcmp`), the first `max_docs` kept. Leaves `(score key, doc index)` pairs
/// in `scratch`, best first; `topic.docs()[index]` is the document.
///
/// Sorting runs on (score key, index) pairs: an integer sort, with docnos compared only
/// inside groups of tied scores.
pub fn rank(run: &Run, topic: &RunTopic, max_docs: usize, scratch: &mut Vec<(u64, u32)>) {
    let docs = topic.docs();
    scratch.clear();
    scratch.extend(
        docs.iter()
            .enumerate()
            .map(|(i, d)| (descending_key(d.score), i as u32)),
    );
    // Runs are mostly written best first: then the pairs are sorted already (indices ascend)
    // and one comparison per pair replaces the sort's own scan and bookkeeping.
    if !scratch.is_sorted() {
        scratch.sort_unstable();
    }
    let mut start = 0;
    while start < scratch.len() {
        let key = scratch[start].0;
        let end = start
            + scratch[start..]
                .iter()
                .take_while(|(k, _)| *k == key)
                .count();
        if end - start > 1 {
            scratch[start..end].sort_unstable_by(|a, b| {
                bytes_cmp(
                    run.docno(&docs[b.1 as usize]),
                    run.docno(&docs[a.1 as usize]),
                )
            });
        }
        start = end;
    }
    scratch.truncate(max_docs);
}

/// [`rank`]s a topic's results and looks up each document's relevance. Leaves the ranking
/// (after `max_docs`) in `scratch` as doc indices (`.1`; `.0` then holds docno hashes).
pub fn ranked_rels(
    run: &Run,
    topic: &RunTopic,
    qrels: &QrelsTopic,
    opts: &RankingOptions,
    scratch: &mut Vec<(u64, u32)>,
    out: &mut Vec<i32>,
) {
    let docs = topic.docs();
    // the qrels lines come in while the ranking runs
    qrels.prefetch();
    rank(run, topic, opts.max_docs, scratch);
    out.clear();
    out.reserve(scratch.len());
    // The parser's hashes of the docnos (`RunTopic::hash`), not computed again, gathered
    // before the probes: probing in the same loop was not faster (wasm under Node, a scratch script, 2026-11-25:
    // 63.8-68.5 against 64.3-69.3 ms a warm `evaluate()`).
    for pair in scratch.iter_mut() {
        pair.0 = topic.hash(pair.1 as usize);
    }
    for &(hash, i) in scratch.iter() {
        let doc: &RankedDoc = &docs[i as usize];
        let rel = match qrels.rel_hashed(hash, run.docno(doc)) {
            None => NOT_POOLED,
            Some(r) if r < 0 => POOLED_UNJUDGED,
            Some(r) => r,
        };
        if opts.judged_only && rel < 0 {
            continue;
        }
        out.push(rel);
    }
}

/// Maps a score to an integer that sorts ascending as the score sorts descending; equal
/// scores (including 0.0 and -0.0, equal in C) get equal keys. Scores are never NaN.
#[inline]
fn descending_key(score: f64) -> u64 {
    let score = if score == 0.0 { 0.0 } else { score };
    let bits = score.to_bits();
    let ascending = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    !ascending
}

/// A gain per relevance level, as trec_eval's gain_init.c builds them from `rel=gain`
/// parameters plus identity gains for the levels present in the qrels.
#[derive(Debug, Clone)]
pub struct Gains {
    /// (rel level, gain, number of judged docs at that level), ascending gain.
    pub levels: Vec<(i64, f64, u64)>,
}

impl Gains {
    pub fn new(t: &TopicEval, pairs: &[(String, f64)]) -> Gains {
        let mut levels: Vec<(i64, f64, u64)> = Vec::new();
        for (name, gain) in pairs {
            if let Some(level) = valid_int(name) {
                levels.push((level, *gain, 0));
            }
        }
        let given = levels.len();
        for &(level, count) in t.levels {
            let level = level as i64;
            match levels[..given].iter_mut().find(|(l, _, _)| *l == level) {
                Some(entry) => entry.2 = count,
                None => levels.push((level, level as f64, count)),
            }
        }
        levels.sort_by(|a, b| a.1.total_cmp(&b.1));
        Gains { levels }
    }

    #[inline]
    pub fn gain(&self, rel: i32) -> f64 {
        let rel = rel as i64;
        self.levels
            .iter()
            .find(|(l, _, _)| *l == rel)
            .map(|(_, g, _)| *g)
            .unwrap_or(0.0)
    }

    /// Walks the ideal ranking: each call yields the gain of the next ideal document
    /// (levels in decreasing gain order, each repeated by its count), 0 once exhausted.
    pub fn ideal(&self) -> IdealGains<'_> {
        let cur = self.levels.len() as isize - 1;
        IdealGains {
            gains: self,
            cur,
            at_level: 0,
            gain: if cur >= 0 {
                self.levels[cur as usize].1
            } else {
                0.0
            },
        }
    }
}

pub struct IdealGains<'a> {
    gains: &'a Gains,
    cur: isize,
    at_level: u64,
    /// Gain of the current ideal position (before the first `next`: the top level's gain).
    pub gain: f64,
}

impl IdealGains<'_> {
    pub fn advance(&mut self) -> f64 {
        self.at_level += 1;
        while self.cur >= 0 && self.at_level > self.gains.levels[self.cur as usize].2 {
            self.at_level = 1;
            self.cur -= 1;
            self.gain = if self.cur >= 0 {
                self.gains.levels[self.cur as usize].1
            } else {
                0.0
            };
        }
        self.gain
    }
}

/// gain_init.c only honours parameter names that are plain integers.
fn valid_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// log2(rank + 1) for a 0-based index, the DCG discount.
#[inline]
pub fn discount(i: usize) -> f64 {
    ((i + 2) as f64).log2()
}
