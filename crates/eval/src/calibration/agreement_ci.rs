//! Percentile-bootstrap intervals for how well a judge agrees with human labels.
//!
//! Each statistic is recomputed on resamples drawn with replacement (Efron & Tibshirani 1993,
//! ch. 13, the percentile interval): of items, or of topics with all their items (a cluster
//! bootstrap, for items that are not independent within a topic). The interval is the
//! (1−level)/2 and (1+level)/2 quantiles of the resampled values, linear interpolation
//! (numpy's default). A resample on which a statistic is undefined (e.g. κ with one class) is
//! left out of that statistic's quantiles; `resamples` says how many counted.
//!
//! The statistics: Cohen's κ, weighted κ (linear, quadratic) and Krippendorff's α (nominal,
//! ordinal, interval) from [`crate::stats::agreement`]; the judge's per-class precision
//! (of the items the judge put in class c, the share the human put there too) and recall (of
//! the items the human put in c, the share the judge found); and Kendall τ-b between the runs'
//! mean scores under judge and human labels ([`crate::stats::correlation::kendall_tau_b`]),
//! resampling topics.

use crate::stats::agreement::{
    cohen_kappa, krippendorff_alpha, weighted_kappa_linear, weighted_kappa_quadratic, Level,
};
use crate::stats::correlation::kendall_tau_b;
use crate::stats::paired::quantile_sorted;
use crate::stats::rng::SeededRng;

/// A statistic on the full sample with its bootstrap interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub statistic: String,
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Resamples on which the statistic was defined.
    pub resamples: usize,
}

/// `count` index sets for a sample of `n` units, each n draws with replacement from `rng`.
pub fn draw_indices(n: usize, count: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = SeededRng::new(seed);
    (0..count)
        .map(|_| {
            (0..n)
                .map(|_| rng.below(n as u64) as usize)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Item indices of a cluster resample: every item of each drawn group, in draw order.
/// `groups[i]` is item i's group (e.g. topic) index; `draw` indexes groups 0..num_groups.
pub fn expand_groups(groups: &[usize], draw: &[usize]) -> Vec<usize> {
    let num_groups = groups.iter().max().map_or(0, |g| g + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); num_groups];
    for (i, &g) in groups.iter().enumerate() {
        members[g].push(i);
    }
    draw.iter()
        .flat_map(|&g| members[g].iter().copied())
        .collect()
}

/// The percentile interval of `stat` over the given resamples (index sets into the sample).
pub fn percentile_interval(
    draws: &[Vec<usize>],
    level: f64,
    stat: impl Fn(&[usize]) -> Option<f64>,
) -> (Option<f64>, Option<f64>, usize) {
    let mut values: Vec<f64> = draws
        .iter()
        .filter_map(|d| stat(d))
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() {
        return (None, None, 0);
    }
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    (
        Some(quantile_sorted(&values, tail)),
        Some(quantile_sorted(&values, 1.0 - tail)),
        values.len(),
    )
}

type LabelStat = fn(&[i64], &[i64]) -> Option<f64>;
type Named = (String, Box<dyn Fn(&[i64], &[i64]) -> Option<f64>>);

fn label_statistics(classes: &[i64]) -> Vec<Named> {
    let as_f64 = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let alpha = move |level: Level| {
        move |a: &[i64], b: &[i64]| krippendorff_alpha(&as_f64(a), &as_f64(b), level)
    };
    let fixed: [(&str, LabelStat); 3] = [
        ("cohen_kappa", cohen_kappa),
        ("weighted_kappa_linear", weighted_kappa_linear),
        ("weighted_kappa_quadratic", weighted_kappa_quadratic),
    ];
    let mut out: Vec<Named> = fixed
        .into_iter()
        .map(|(name, f)| (name.to_string(), Box::new(f) as Box<_>))
        .collect();
    out.push(("alpha_nominal".into(), Box::new(alpha(Level::Nominal))));
    out.push(("alpha_ordinal".into(), Box::new(alpha(Level::Ordinal))));
    out.push(("alpha_interval".into(), Box::new(alpha(Level::Interval))));
    for &c in classes {
        out.push((
            format!("precision[{c}]"),
            Box::new(move |j: &[i64], h: &[i64]| share(j, h, c)),
        ));
        out.push((
            format!("recall[{c}]"),
            Box::new(move |j: &[i64], h: &[i64]| share(h, j, c)),
        ));
    }
    out
}

/// Of the items `first` puts in class `c`, the share `second` puts there too.
fn share(first: &[i64], second: &[i64], c: i64) -> Option<f64> {
    let (mut hit, mut total) = (0usize, 0usize);
    for (a, b) in first.iter().zip(second) {
        if *a == c {
            total += 1;
            hit += usize::from(*b == c);
        }
    }
    (total > 0).then(|| hit as f64 / total as f64)
}

/// Agreement statistics of `judge` against `human` labels of the same items, with intervals
/// over the resamples `draws` (index sets into the items: [`draw_indices`], or
/// [`expand_groups`] for topics). The judge is the first coder of each statistic.
pub fn agreement_intervals(
    judge: &[i64],
    human: &[i64],
    draws: &[Vec<usize>],
    level: f64,
) -> Vec<Interval> {
    let mut classes: Vec<i64> = judge.iter().chain(human).copied().collect();
    classes.sort_unstable();
    classes.dedup();
    let pick = |v: &[i64], d: &[usize]| d.iter().map(|&i| v[i]).collect::<Vec<i64>>();
    label_statistics(&classes)
        .into_iter()
        .map(|(statistic, f)| {
            let (low, high, resamples) =
                percentile_interval(draws, level, |d| f(&pick(judge, d), &pick(human, d)));
            Interval {
                statistic,
                value: f(judge, human),
                low,
                high,
                resamples,
            }
        })
        .collect()
}

/// Kendall τ-b between the runs' mean scores under judge and under human labels. `judge[r][t]`
/// and `human[r][t]`: run r on topic t (the same topics for every run). The interval resamples
/// topics (`draws` index topics).
pub fn ranking_tau_interval(
    judge: &[Vec<f64>],
    human: &[Vec<f64>],
    draws: &[Vec<usize>],
    level: f64,
) -> Interval {
    let tau = |topics: &[usize]| {
        let means = |m: &[Vec<f64>]| -> Vec<f64> {
            m.iter()
                .map(|run| topics.iter().map(|&t| run[t]).sum::<f64>() / topics.len() as f64)
                .collect()
        };
        kendall_tau_b(&means(judge), &means(human))
    };
    let all: Vec<usize> = (0..judge.first().map_or(0, Vec::len)).collect();
    let (low, high, resamples) = percentile_interval(draws, level, tau);
    Interval {
        statistic: "kendall_tau_runs".into(),
        value: if all.is_empty() { None } else { tau(&all) },
        low,
        high,
        resamples,
    }
}
