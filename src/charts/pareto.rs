//! The Pareto frontier of (cost, quality) points: answer length L against V_strict, as in the
//! TREC 2024 RAG report's Figure 7 (shorter and better is better).

/// Indexes of the points no other point beats on both axes (x lower-or-equal and y
/// higher-or-equal, one strictly), ordered by x. Non-finite points are ignored.
pub fn frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].0.is_finite() && points[i].1.is_finite())
        .collect();
    // By x ascending, ties by y descending: then a point is on the frontier iff its y beats
    // every y seen before it.
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[b].1.total_cmp(&points[a].1))
    });
    let mut best = f64::NEG_INFINITY;
    let mut out = Vec::new();
    for i in order {
        if points[i].1 > best {
            best = points[i].1;
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::frontier;

    #[test]
    fn keeps_only_undominated_points() {
        // (length, V_strict)
        let p = [
            (10.0, 0.2),
            (20.0, 0.5),
            (15.0, 0.1),
            (30.0, 0.5),
            (40.0, 0.7),
            (5.0, 0.0),
        ];
        assert_eq!(frontier(&p), vec![5, 0, 1, 4]);
        assert_eq!(frontier(&[]), Vec::<usize>::new());
        assert_eq!(frontier(&[(1.0, f64::NAN), (2.0, 0.3)]), vec![1]);
        // Equal x: only the better one.
        assert_eq!(frontier(&[(3.0, 0.1), (3.0, 0.4)]), vec![1]);
    }
}
