//! The pairwise ranking SVM against scikit-learn's liblinear (fixtures from
//! tests/oracle/stats/generate_svm.py) and on a separable toy problem.

use ragscope_eval::rag::svm_rank::{objective, train_pairwise, PairwiseData, SvmOptions};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/rag/svm_rank_sklearn.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn data_of(case: &Value) -> PairwiseData {
    let pairs = case["pairs"].as_array().unwrap();
    let dim = pairs[0].as_array().unwrap().len();
    let mut data = PairwiseData::new(dim);
    for p in pairs {
        data.push(p.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()));
    }
    data
}

#[test]
fn matches_liblinear_weights_and_objective() {
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let c = case["c"].as_f64().unwrap();
        let data = data_of(&case);
        let options = SvmOptions {
            c,
            tolerance: 1e-9,
            max_epochs: 200_000,
            seed: 1,
        };
        let solution = train_pairwise(&data, &options);
        assert!(solution.converged, "{name}: {} epochs", solution.epochs);
        let theirs: Vec<f64> = case["sklearn_weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let their_objective = case["sklearn_objective"].as_f64().unwrap();
        // Both solve the same strictly convex problem: objectives agree to 1e-7 relative and
        // the unique minimiser to 1e-4 relative in norm (both stop at a tolerance, not exactly).
        let rel = (solution.objective - their_objective).abs() / their_objective;
        assert!(
            rel < 1e-7,
            "{name}: objective {} vs {their_objective}",
            solution.objective
        );
        assert!((objective(&data, &theirs, c) - their_objective).abs() < 1e-9);
        let norm: f64 = theirs.iter().map(|w| w * w).sum::<f64>().sqrt();
        let dist: f64 = solution
            .weights
            .iter()
            .zip(&theirs)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        assert!(
            dist / norm < 1e-4,
            "{name}: weights differ by {}",
            dist / norm
        );
        // Decisions on the training pairs agree (no pair near the boundary flips).
        let flips = (0..data.len())
            .filter(|&i| {
                let row = data.row(i);
                let ours: f64 = row.iter().zip(&solution.weights).map(|(a, b)| a * b).sum();
                let lib: f64 = row.iter().zip(&theirs).map(|(a, b)| a * b).sum();
                (ours > 0.0) != (lib > 0.0) && lib.abs() > 1e-6
            })
            .count();
        assert_eq!(flips, 0, "{name}");
    }
}

#[test]
fn separable_toy_problem_orders_every_pair_with_margin() {
    // Better contexts always have the larger first feature: w must put weight on it and
    // give every difference a margin of at least 1 when C is large (hard-margin limit).
    let mut data = PairwiseData::new(2);
    for (a, b) in [(1.0, 0.3), (0.5, -0.2), (2.0, 1.0), (0.8, 0.5), (1.5, -1.0)] {
        data.push([a, b]);
    }
    let solution = train_pairwise(
        &data,
        &SvmOptions {
            c: 1e6,
            ..SvmOptions::default()
        },
    );
    assert!(solution.converged);
    for i in 0..data.len() {
        let margin: f64 = data
            .row(i)
            .iter()
            .zip(&solution.weights)
            .map(|(a, b)| a * b)
            .sum();
        assert!(margin >= 1.0 - 1e-6, "pair {i} margin {margin}");
    }
    // Hard-margin solution, analytically: the min-norm w with margin 1 on the shortest pair
    // x = (0.5, −0.2) is x/‖x‖² = (50/29, −20/29), and it already gives every other pair a
    // margin above 1 (1.52, 2.76, 1.03, 3.28), so it is the optimum.
    let (a, b) = (solution.weights[0], solution.weights[1]);
    assert!(
        (a - 50.0 / 29.0).abs() < 1e-5 && (b + 20.0 / 29.0).abs() < 1e-5,
        "{a} {b}"
    );
}

#[test]
fn same_seed_same_weights() {
    let case = &cases()[0];
    let data = data_of(case);
    let options = SvmOptions {
        c: 1.0,
        tolerance: 1e-3,
        max_epochs: 50,
        seed: 42,
    };
    let a = train_pairwise(&data, &options);
    let b = train_pairwise(&data, &options);
    assert_eq!(a, b);
}
