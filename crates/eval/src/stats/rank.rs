//! Ranking with ties, as `scipy.stats.rankdata(method="average")`.

/// 1-based ranks; tied values share the average of the ranks they span.
pub fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && x[order[end]] == x[order[start]] {
            end += 1;
        }
        // Ranks start..end (0-based) → average of (start+1)..=end.
        let average = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = average;
        }
        start = end;
    }
    ranks
}

/// Sizes of the groups of tied values (groups of one included), in sorted-value order.
pub fn tie_group_sizes(x: &[f64]) -> Vec<usize> {
    let mut sorted: Vec<f64> = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut sizes = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && sorted[end] == sorted[start] {
            end += 1;
        }
        sizes.push(end - start);
        start = end;
    }
    sizes
}
