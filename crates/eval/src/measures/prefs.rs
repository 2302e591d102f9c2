//! Preference counting shared by the prefs_* measures (trec_eval's form_prefs_counts.c).
//!
//! Every judged document gets a "docid rank": retrieved judged documents are numbered
//! 0..num_judged_ret in ranking order, unretrieved ones after that in docno order. Each
//! judgment group (JG) then counts its preferences A > B as fulfilled or not, split by
//! whether both (ret), one (imp) or neither (notoccur) of A and B were retrieved. A JG
//! with one sub-group is a list of equivalence classes (one per rel_level); a JG with
//! several sub-groups is a partial order, closed under transitivity.

use std::collections::BTreeMap;

use crate::formats::{PrefsTopic, Run, RunTopic};

/// Equal-preference documents of one JG: their level and their docid ranks, ascending.
#[derive(Debug, Clone)]
pub struct EquivClass {
    pub rel_level: f64,
    pub ranks: Vec<usize>,
}

/// How one judgment group expresses its preferences.
#[derive(Debug, Clone)]
pub enum JgPreferences {
    /// One sub-group: classes by decreasing rel_level; every doc in a class is preferred
    /// to every doc in a later class.
    Classes(Vec<EquivClass>),
    /// Several sub-groups: `prefers(i, j)` after transitive closure, and each docid's
    /// rel_level in this JG (−1 when the JG does not judge it).
    Partial {
        n: usize,
        rows: Vec<Vec<u64>>,
        rel: Vec<f64>,
    },
}

impl JgPreferences {
    pub fn prefers(&self, i: usize, j: usize) -> bool {
        match self {
            JgPreferences::Partial { rows, .. } => rows[i][j / 64] >> (j % 64) & 1 == 1,
            JgPreferences::Classes(_) => false,
        }
    }
}

/// Preference counts of one judgment group.
#[derive(Debug, Clone)]
pub struct JgCounts {
    pub fulfilled_ret: u64,
    pub possible_ret: u64,
    pub fulfilled_imp: u64,
    pub possible_imp: u64,
    pub possible_notoccur: u64,
    pub num_rel: u64,
    pub num_rel_ret: u64,
    pub num_nonrel: u64,
    pub num_nonrel_ret: u64,
    pub prefs: JgPreferences,
}

/// A topic's preference counts: per JG, plus how often each ordered docid pair is
/// preferred over all JGs.
#[derive(Debug, Clone)]
pub struct PrefCounts {
    pub num_judged: usize,
    pub num_judged_ret: usize,
    pub jgs: Vec<JgCounts>,
    counts: Vec<u32>,
}

impl PrefCounts {
    /// How many JGs prefer docid `i` to docid `j`.
    pub fn count(&self, i: usize, j: usize) -> u32 {
        self.counts[i * self.num_judged + j]
    }

    fn add(&mut self, i: usize, j: usize) {
        let n = self.num_judged;
        self.counts[i * n + j] = self.counts[i * n + j].saturating_add(1);
    }
}

/// Judged documents of one topic that preference measures accept. Their counts are a
/// judged × judged matrix (4 bytes a cell, plus n²/8 bytes of bit rows for partial orders),
/// as in trec_eval; at this limit that is 1 GiB. trec_eval itself would abort in malloc on a
/// topic far above it; we refuse it with a message instead.
pub const MAX_PREFS_JUDGED: usize = 16_384;

fn check_judged_limit(qid: &str, num_judged: usize) -> Result<(), PrefsError> {
    if num_judged <= MAX_PREFS_JUDGED {
        return Ok(());
    }
    let gib = (num_judged as f64).powi(2) * 4.0 / (1u64 << 30) as f64;
    Err(PrefsError {
        message: format!(
            "ragscope trec_eval: topic {qid} has {num_judged} judged documents: preference \
             measures need a {num_judged}×{num_judged} count matrix ({gib:.1} GiB), over the \
             limit of {MAX_PREFS_JUDGED} judged documents per topic\n"
        ),
        exit_code: 4,
    })
}

/// An inconsistency trec_eval stops on, with its message and exit status.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefsError {
    pub message: String,
    pub exit_code: i32,
}

struct Judged<'a> {
    jg: &'a str,
    jsg: &'a str,
    rel_level: f64,
    rank: usize,
}

/// Builds the preference counts of `topic` for the ranking of `results` (None: nothing
/// retrieved), keeping the first `max_docs` results.
pub fn form_prefs_counts(
    run: &Run,
    results: Option<&RunTopic>,
    topic: &PrefsTopic,
    max_docs: usize,
) -> Result<PrefCounts, PrefsError> {
    // form_prefs_counts.c breaks score ties by docno ascending, unlike form_res_rels.c
    let mut ranked: Vec<(f64, &[u8])> = results
        .map(|rt| rt.docs().iter().map(|d| (d.score, run.docno(d))).collect())
        .unwrap_or_default();
    ranked.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.1.cmp(b.1))
    });
    ranked.truncate(max_docs);

    let mut docid: BTreeMap<&[u8], usize> = topic
        .lines
        .iter()
        .map(|l| (&*l.docno, usize::MAX))
        .collect();
    let mut num_judged_ret = 0;
    for (_, docno) in &ranked {
        if let Some(rank) = docid.get_mut(docno) {
            *rank = num_judged_ret;
            num_judged_ret += 1;
        }
    }
    let mut next = num_judged_ret;
    for rank in docid.values_mut() {
        if *rank == usize::MAX {
            *rank = next;
            next += 1;
        }
    }
    let num_judged = next;
    check_judged_limit(&topic.qid, num_judged)?;

    let mut judged: Vec<Judged> = topic
        .lines
        .iter()
        .map(|l| Judged {
            jg: &l.jg,
            jsg: &l.jsg,
            rel_level: l.rel_level,
            rank: docid[&*l.docno],
        })
        .collect();
    judged.sort_by(|a, b| {
        a.jg.as_bytes()
            .cmp(b.jg.as_bytes())
            .then_with(|| a.jsg.as_bytes().cmp(b.jsg.as_bytes()))
            .then_with(|| {
                b.rel_level
                    .partial_cmp(&a.rel_level)
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .then_with(|| a.rank.cmp(&b.rank))
    });

    let mut out = PrefCounts {
        num_judged,
        num_judged_ret,
        jgs: Vec::new(),
        counts: vec![0; num_judged * num_judged],
    };
    let mut start = 0;
    while start < judged.len() {
        let jg = judged[start].jg;
        let end = start + judged[start..].iter().take_while(|j| j.jg == jg).count();
        let group = &judged[start..end];
        let sub_groups = 1 + group.windows(2).filter(|w| w[0].jsg != w[1].jsg).count();
        let counts = if sub_groups > 1 {
            partial_order(group, &mut out)?
        } else {
            classes(group, &mut out)?
        };
        out.jgs.push(counts);
        start = end;
    }
    Ok(out)
}

fn empty_counts(prefs: JgPreferences) -> JgCounts {
    JgCounts {
        fulfilled_ret: 0,
        possible_ret: 0,
        fulfilled_imp: 0,
        possible_imp: 0,
        possible_notoccur: 0,
        num_rel: 0,
        num_rel_ret: 0,
        num_nonrel: 0,
        num_nonrel_ret: 0,
        prefs,
    }
}

fn classes(group: &[Judged], out: &mut PrefCounts) -> Result<JgCounts, PrefsError> {
    let mut ecs: Vec<EquivClass> = Vec::new();
    for j in group {
        match ecs.last_mut() {
            Some(ec) if ec.rel_level == j.rel_level => ec.ranks.push(j.rank),
            _ => ecs.push(EquivClass {
                rel_level: j.rel_level,
                ranks: vec![j.rank],
            }),
        }
    }
    let njr = out.num_judged_ret;
    let mut c = empty_counts(JgPreferences::Classes(Vec::new()));
    for (e1, ec1) in ecs.iter().enumerate() {
        let retrieved = ec1.ranks.iter().take_while(|&&r| r < njr).count() as u64;
        if ec1.rel_level > 0.0 {
            c.num_rel_ret += retrieved;
            c.num_rel += ec1.ranks.len() as u64;
        } else {
            c.num_nonrel_ret += retrieved;
            c.num_nonrel += ec1.ranks.len() as u64;
        }
        for ec2 in &ecs[e1 + 1..] {
            for &r1 in &ec1.ranks {
                for &r2 in &ec2.ranks {
                    out.add(r1, r2);
                    if r1 == r2 {
                        return Err(PrefsError {
                            message: format!(
                                "trec_eval.form_prefs_counts: Internal docid {r1} occurs with different rel_level in same jsg\n"
                            ),
                            exit_code: 4,
                        });
                    }
                    if r1 < r2 {
                        if r2 < njr {
                            c.fulfilled_ret += 1;
                        } else if r1 < njr {
                            c.fulfilled_imp += 1;
                        } else {
                            c.possible_notoccur += 1;
                        }
                    } else if r1 < njr {
                        c.possible_ret += 1;
                    } else if r2 < njr {
                        c.possible_imp += 1;
                    } else {
                        c.possible_notoccur += 1;
                    }
                }
            }
        }
    }
    c.possible_ret += c.fulfilled_ret;
    c.possible_imp += c.fulfilled_imp;
    c.prefs = JgPreferences::Classes(ecs);
    Ok(c)
}

fn partial_order(group: &[Judged], out: &mut PrefCounts) -> Result<JgCounts, PrefsError> {
    let n = out.num_judged;
    let words = n.div_ceil(64).max(1);
    let mut rows = vec![vec![0u64; words]; n];
    let mut rel = vec![-1.0f64; n];
    for (i, a) in group.iter().enumerate() {
        let known = rel[a.rank];
        if (known > 0.0 && a.rel_level == 0.0) || (known == 0.0 && a.rel_level > 0.0) {
            return Err(PrefsError {
                message: format!(
                    "trec_eval.form_prefs_counts: doc with docid rank {} has both 0 and non-0 rel_level assigned\n",
                    a.rank
                ),
                exit_code: 4,
            });
        }
        rel[a.rank] = a.rel_level;
        // every later line of the same sub-group with a lower level is less preferred
        for b in group[i + 1..]
            .iter()
            .take_while(|b| b.jsg == a.jsg)
            .skip_while(|b| b.rel_level == a.rel_level)
        {
            rows[a.rank][b.rank / 64] |= 1 << (b.rank % 64);
        }
    }
    // Warshall's transitive closure: if i > k and k > j then i > j
    for k in 0..n {
        let row_k = rows[k].clone();
        for row in rows.iter_mut() {
            if row[k / 64] >> (k % 64) & 1 == 1 {
                for (w, bits) in row.iter_mut().zip(&row_k) {
                    *w |= bits;
                }
            }
        }
    }
    for (i, row) in rows.iter_mut().enumerate() {
        row[i / 64] &= !(1 << (i % 64));
    }
    let prefs = JgPreferences::Partial { n, rows, rel };
    for i in 0..n {
        for j in 0..n {
            if i != j && prefs.prefers(i, j) && prefs.prefers(j, i) {
                return Err(PrefsError {
                    message: format!(
                        "trec_eval.form_prefs_counts: Pref inconsistency found\n      internal rank {i} and internal rank {j} are conflicted\n"
                    ),
                    // trec_eval calls abort() here
                    exit_code: 134,
                });
            }
        }
    }
    let njr = out.num_judged_ret;
    let mut c = empty_counts(JgPreferences::Classes(Vec::new()));
    if let JgPreferences::Partial { rel, .. } = &prefs {
        for (i, &level) in rel.iter().enumerate() {
            let slot = if level > 0.0 {
                Some((&mut c.num_rel, &mut c.num_rel_ret))
            } else if level == 0.0 {
                Some((&mut c.num_nonrel, &mut c.num_nonrel_ret))
            } else {
                None
            };
            if let Some((all, ret)) = slot {
                *all += 1;
                if i < njr {
                    *ret += 1;
                }
            }
        }
    }
    for i in 0..n {
        for j in 0..n {
            if i == j || !prefs.prefers(i, j) {
                continue;
            }
            out.add(i, j);
            match (i < njr, j < njr) {
                (true, true) if j < i => c.possible_ret += 1,
                (true, true) => c.fulfilled_ret += 1,
                (true, false) => c.fulfilled_imp += 1,
                (false, true) => c.possible_imp += 1,
                (false, false) => c.possible_notoccur += 1,
            }
        }
    }
    c.possible_ret += c.fulfilled_ret;
    c.possible_imp += c.fulfilled_imp;
    c.prefs = prefs;
    Ok(c)
}

/// Σ fulfilled / Σ possible over judgment groups (0 when nothing is possible).
pub(crate) fn ratio(parts: impl Iterator<Item = (u64, u64)>) -> f64 {
    let (ful, poss) = parts.fold((0, 0), |(f, p), (a, b)| (f + a, p + b));
    if poss > 0 {
        ful as f64 / poss as f64
    } else {
        0.0
    }
}

/// Mean over judgment groups of fulfilled / possible (groups with nothing possible add 0).
pub(crate) fn average_over_groups(p: &PrefCounts, part: impl Fn(&JgCounts) -> (u64, u64)) -> f64 {
    let sum = p.jgs.iter().fold(0.0, |acc, j| {
        let (ful, poss) = part(j);
        if poss > 0 {
            acc + ful as f64 / poss as f64
        } else {
            acc
        }
    });
    if sum > 0.0 {
        sum / p.jgs.len() as f64
    } else {
        0.0
    }
}

/// Which document pairs a pair average looks at.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum PairScope {
    /// Both retrieved.
    Retrieved,
    /// At least one retrieved.
    Implied,
    /// All pairs; pairs with neither retrieved count as failures.
    All,
}

/// Mean over document pairs with any preference of the share preferring the ranked order.
pub(crate) fn pair_average(p: &PrefCounts, scope: PairScope) -> f64 {
    let (njr, n) = (p.num_judged_ret, p.num_judged);
    let mut sum = 0.0;
    let mut pairs = 0u64;
    let mut visit = |i: usize, j: usize, scored: bool| {
        let (a, b) = (p.count(i, j), p.count(j, i));
        if a > 0 || b > 0 {
            pairs += 1;
            if scored {
                sum += a as f64 / (a as f64 + b as f64);
            }
        }
    };
    for i in 0..njr {
        for j in i + 1..njr {
            visit(i, j, true);
        }
    }
    if scope != PairScope::Retrieved {
        for i in 0..njr {
            for j in njr..n {
                visit(i, j, true);
            }
        }
    }
    if scope == PairScope::All {
        for i in njr..n {
            for j in i + 1..n {
                visit(i, j, false);
            }
        }
    }
    if pairs > 0 {
        sum / pairs as f64
    } else {
        0.0
    }
}

/// prefs_avgjg_Rnonrel(_ret): per group, pretend there are exactly R non-relevant
/// documents (R = relevant, or relevant retrieved for `_ret`): add R·(R−N) fulfilled
/// preferences when N < R, or recount with only the first R non-relevant ones.
pub(crate) fn r_nonrel(p: &PrefCounts, retrieved_only: bool) -> f64 {
    let njr = p.num_judged_ret;
    let mut sum = 0.0;
    for j in &p.jgs {
        let (r, n) = if retrieved_only {
            (j.num_rel_ret, j.num_nonrel_ret)
        } else {
            (j.num_rel, j.num_nonrel)
        };
        let (ful, poss) = if r >= n {
            let extra = r - n;
            if retrieved_only {
                (
                    j.fulfilled_ret + j.num_rel_ret * extra,
                    j.possible_ret + j.num_rel * extra,
                )
            } else {
                (
                    j.fulfilled_ret + j.fulfilled_imp + j.num_rel_ret * extra,
                    j.possible_ret + j.possible_imp + j.possible_notoccur + j.num_rel * extra,
                )
            }
        } else {
            recount(j, njr, r as usize, retrieved_only)
        };
        sum += ful as f64 / poss as f64;
    }
    if sum > 0.0 {
        sum / p.jgs.len() as f64
    } else {
        0.0
    }
}

/// Recounts one group's preferences keeping only the first `keep` non-relevant docs.
fn recount(j: &JgCounts, njr: usize, keep: usize, retrieved_only: bool) -> (u64, u64) {
    let (mut ful, mut poss) = (0u64, 0u64);
    match &j.prefs {
        JgPreferences::Classes(ecs) => {
            let Some(last) = ecs.last() else {
                return (0, 0);
            };
            let kept_nonrel = &last.ranks[..keep.min(last.ranks.len())];
            let ranks = |r: &'_ [usize]| -> Vec<usize> {
                if retrieved_only {
                    r.iter().copied().take_while(|&x| x < njr).collect()
                } else {
                    r.to_vec()
                }
            };
            let mut tally = |r1: usize, r2: usize| {
                let fulfilled = if retrieved_only {
                    r1 < r2
                } else {
                    r1 < r2 && r1 < njr
                };
                if fulfilled {
                    ful += 1;
                } else {
                    poss += 1;
                }
            };
            let kept = ranks(kept_nonrel);
            for (e1, ec1) in ecs.iter().enumerate() {
                let r1s = ranks(&ec1.ranks);
                // classes strictly between this one and the (replaced) non-relevant class
                let upper = ecs.len() - 1;
                for ec2 in &ecs[(e1 + 1).min(upper)..upper] {
                    for &r1 in &r1s {
                        for &r2 in &ranks(&ec2.ranks) {
                            tally(r1, r2);
                        }
                    }
                }
                for &r1 in &r1s {
                    for &r2 in &kept {
                        tally(r1, r2);
                    }
                }
            }
        }
        JgPreferences::Partial { n, rel, .. } => {
            let limit = if retrieved_only { njr } else { *n };
            let mut seen = 0;
            let mut first_discarded = limit;
            for (i, &level) in rel.iter().enumerate().take(limit) {
                if level == 0.0 {
                    seen += 1;
                    if seen == j.num_rel as usize + 1 {
                        first_discarded = i;
                        break;
                    }
                }
            }
            let skip = |i: usize| i >= first_discarded && rel[i] == 0.0;
            let _ = keep;
            for i in 0..njr {
                if skip(i) {
                    continue;
                }
                for jj in 0..*n {
                    if jj == i || skip(jj) || (retrieved_only && jj >= njr) {
                        continue;
                    }
                    if j.prefs.prefers(i, jj) {
                        if jj < i {
                            poss += 1;
                        } else {
                            ful += 1;
                        }
                    }
                }
            }
            if !retrieved_only {
                for i in njr..*n {
                    if skip(i) {
                        continue;
                    }
                    for jj in 0..*n {
                        if jj != i && !skip(jj) && j.prefs.prefers(i, jj) {
                            poss += 1;
                        }
                    }
                }
            }
        }
    }
    (ful, ful + poss)
}
