//! Correlation coefficients (statistics only; significance comes from the paired tests).

use super::rank::{average_ranks, average_ranks_into};

/// Reusable buffers for [`spearman_with`].
#[derive(Debug, Default, Clone)]
pub struct RankScratch {
    order: Vec<usize>,
    rx: Vec<f64>,
    ry: Vec<f64>,
}

/// [`spearman`] without allocating (after the scratch has grown to the sample size).
pub fn spearman_with(x: &[f64], y: &[f64], scratch: &mut RankScratch) -> Option<f64> {
    if x.len() != y.len() {
        return None;
    }
    average_ranks_into(x, &mut scratch.order, &mut scratch.rx);
    average_ranks_into(y, &mut scratch.order, &mut scratch.ry);
    pearson(&scratch.rx, &scratch.ry)
}

/// Pearson's r = Σ(x−x̄)(y−ȳ) / √(Σ(x−x̄)² Σ(y−ȳ)²) (as `scipy.stats.pearsonr`).
/// `None` when fewer than 2 pairs or either side is constant (r undefined; scipy gives NaN).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// Spearman's ρ: Pearson's r of the average ranks (ties share their mean rank), as
/// `scipy.stats.spearmanr`. `None` when undefined (constant side, n < 2).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() {
        return None;
    }
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Kendall's τ-b = (C − D) / √((n₀ − n₁)(n₀ − n₂)), n₀ = n(n−1)/2 pairs, n₁/n₂ pairs tied in
/// x/y (Kendall 1945; `scipy.stats.kendalltau(variant="b")`). O(n²): meant for the small
/// per-question samples of the correlation study. `None` when undefined.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (mut s, mut tied_x, mut tied_y, mut pairs) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let sx = sign(x[i] - x[j]);
            let sy = sign(y[i] - y[j]);
            s += sx * sy;
            tied_x += i64::from(sx == 0);
            tied_y += i64::from(sy == 0);
            pairs += 1;
        }
    }
    let denominator = ((pairs - tied_x) as f64 * (pairs - tied_y) as f64).sqrt();
    if denominator == 0.0 {
        return None;
    }
    Some((s as f64 / denominator).clamp(-1.0, 1.0))
}

fn sign(v: f64) -> i64 {
    if v > 0.0 {
        1
    } else if v < 0.0 {
        -1
    } else {
        0
    }
}
