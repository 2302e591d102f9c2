//! Multiple-testing corrections; each returns adjusted p-values in the input order.

/// Bonferroni: p·m, capped at 1 (controls the family-wise error rate).
pub fn bonferroni(p: &[f64]) -> Vec<f64> {
    let m = p.len() as f64;
    p.iter().map(|v| (v * m).min(1.0)).collect()
}

/// Holm's step-down (Holm 1979): with p sorted ascending, adjusted p₍ᵢ₎ =
/// max_{j≤i} min(1, (m − j + 1)·p₍ⱼ₎). Uniformly more powerful than Bonferroni, same FWER.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Benjamini–Hochberg step-up (false discovery rate), as
/// `scipy.stats.false_discovery_control(p, method="bh")`: with p sorted ascending,
/// adjusted p₍ᵢ₎ = min_{j≥i} min(1, m·p₍ⱼ₎/j).
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(m as f64 * p[i] / (rank + 1) as f64).min(1.0);
        adjusted[i] = running;
    }
    adjusted
}
