//! Ranking with ties, as `scipy.stats.rankdata(method="average")`.

/// 1-based ranks; tied values share the average of the ranks they span.
pub fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut order = Vec::new();
    let mut ranks = Vec::new();
    average_ranks_into(x, &mut order, &mut ranks);
    ranks
}

/// [`average_ranks`] into caller-owned buffers, so hot loops rank without allocating.
pub fn average_ranks_into(x: &[f64], order: &mut Vec<usize>, ranks: &mut Vec<f64>) {
    order.clear();
    order.extend(0..x.len());
    if order.len() <= 32 {
        // The study ranks ~10 values at a time, where insertion sort beats a general sort.
        for i in 1..order.len() {
            let mut j = i;
            while j > 0 && x[order[j - 1]].total_cmp(&x[order[j]]).is_gt() {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    }
    ranks.clear();
    ranks.resize(x.len(), 0.0);
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
