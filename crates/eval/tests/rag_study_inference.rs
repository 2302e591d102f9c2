//! The correlation study's inference against an independent computation
//! (tests/oracle/stats/generate_study_inference.py → fixtures/rag/study_inference.json):
//! bootstrap intervals and paired-test p-values against the exactly enumerated bootstrap
//! distribution (numpy; 6 questions, all 6^6 resamples), and UDCGθ trained end to end against
//! scikit-learn's liblinear with scipy's Spearman on its scores.

use ragscope_eval::rag::contexts;
use ragscope_eval::rag::correlation::{study, Coefficient, Metric, StudyConfig};
use ragscope_eval::rag::svm_rank::SvmOptions;
use ragscope_eval::rag::theta;
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/rag/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn expected() -> Value {
    serde_json::from_str(&fixture("study_inference.json")).unwrap()
}

const RESAMPLES: usize = 20_000;

fn small_study(seed: u64) -> ragscope_eval::rag::correlation::GroupResult {
    let sets = contexts::parse("study_small.jsonl", &fixture("study_small.jsonl"), None).unwrap();
    let config = StudyConfig {
        k: Some(3),
        resamples: RESAMPLES,
        seed,
        ..StudyConfig::default()
    };
    let mut result = study(&sets, &config).unwrap();
    assert_eq!(result.groups.len(), 1);
    result.groups.remove(0)
}

/// The Monte-Carlo 2.5%/97.5% quantiles must lie between the exact distribution's 2%–3% and
/// 97%–98% quantiles: with 20,000 draws the empirical CDF there has a standard deviation of
/// 0.0011, so leaving that bracket is a 4.5σ event for a correct bootstrap, while a wrong level,
/// unpaired draws or resampling contexts instead of questions lands far outside.
#[test]
fn bootstrap_intervals_match_the_exact_bootstrap_distribution() {
    let fx = expected();
    let intervals = fx["small"]["intervals"].as_object().unwrap();
    for seed in [0, 1] {
        let group = small_study(seed);
        assert_eq!(
            group.questions as u64,
            fx["small"]["questions"].as_u64().unwrap()
        );
        let mut checked = 0;
        for (name, coefficients) in intervals {
            let row = group
                .metrics
                .iter()
                .find(|r| r.metric.name() == name)
                .unwrap_or_else(|| panic!("{name} missing"));
            for (c, key) in [
                (Coefficient::Spearman, "spearman"),
                (Coefficient::KendallTauB, "kendall-tau-b"),
                (Coefficient::Pearson, "pearson"),
            ] {
                let e = &coefficients[key];
                let s = row.get(c);
                let f = |k: &str| e[k].as_f64().unwrap();
                assert!((s.mean - f("mean")).abs() < 1e-12, "{name} {key} mean");
                assert!(
                    f("q02") - 1e-12 <= s.ci_low && s.ci_low <= f("q03") + 1e-12,
                    "{name} {key} seed {seed}: low {} outside exact [{}, {}]",
                    s.ci_low,
                    f("q02"),
                    f("q03")
                );
                assert!(
                    f("q97") - 1e-12 <= s.ci_high && s.ci_high <= f("q98") + 1e-12,
                    "{name} {key} seed {seed}: high {} outside exact [{}, {}]",
                    s.ci_high,
                    f("q97"),
                    f("q98")
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 10 * 3);
    }
}

/// One-sided paired bootstrap p-values of "UDCG correlates better than X": within 5 Monte-Carlo
/// standard deviations (plus 1/B) of the exact p (its tie mass apart).
#[test]
fn paired_test_p_values_match_the_exact_bootstrap() {
    let fx = expected();
    let comparisons = fx["small"]["comparisons"].as_object().unwrap();
    let group = small_study(0);
    assert_eq!(fx["small"]["reference"], "UDCG");
    let mut checked = 0;
    for (name, e) in comparisons {
        let ours = group
            .comparisons
            .iter()
            .find(|c| c.other.name() == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(ours.reference, Metric::Udcg);
        assert_eq!(ours.resamples, RESAMPLES);
        let d = e["mean_difference"].as_f64().unwrap();
        assert!(
            (ours.mean_difference - d).abs() < 1e-12,
            "{name}: difference"
        );
        let (lo, hi) = (
            e["p_strict"].as_f64().unwrap(),
            e["p_loose"].as_f64().unwrap(),
        );
        let sd = |p: f64| (p * (1.0 - p) / RESAMPLES as f64).sqrt();
        let slack = 5.0 * sd(lo).max(sd(hi)) + 1.0 / RESAMPLES as f64;
        assert!(
            lo - slack <= ours.p_value && ours.p_value <= hi + slack,
            "{name}: p {} vs exact [{lo}, {hi}] ± {slack}",
            ours.p_value
        );
        checked += 1;
    }
    // The fixture holds p-values from 0 to about 0.5, so a two-sided or unshifted test fails.
    assert!(checked >= 9, "{checked}");
}

/// UDCGθ trained by our SVM equals liblinear's weights (both solve the same strictly convex
/// problem to a tolerance), and its mean Spearman ρ per group equals scipy's on σ(w·f).
#[test]
fn udcg_theta_matches_liblinear_and_scipy() {
    let fx = expected();
    let t = &fx["theta"];
    let k = t["k"].as_u64().unwrap() as usize;
    let sets = contexts::parse(
        "study_contexts.jsonl",
        &fixture(t["file"].as_str().unwrap()),
        None,
    )
    .unwrap();
    let options = SvmOptions {
        tolerance: 1e-10,
        max_epochs: 100_000,
        ..SvmOptions::default()
    };
    let model = theta::train(&sets, k, &options).unwrap();
    assert!(model.converged);
    assert_eq!(model.pairs as u64, t["pairs"].as_u64().unwrap());
    let theirs: Vec<f64> = t["alpha"]
        .as_array()
        .unwrap()
        .iter()
        .chain(t["beta"].as_array().unwrap())
        .map(|v| v.as_f64().unwrap())
        .collect();
    let ours: Vec<f64> = model.alpha.iter().chain(&model.beta).copied().collect();
    let norm = theirs.iter().map(|v| v * v).sum::<f64>().sqrt();
    let dist = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt();
    assert!(
        dist / norm < 1e-5,
        "weights {ours:?} vs liblinear {theirs:?}"
    );
    let config = StudyConfig {
        k: Some(k),
        theta: Some(model),
        resamples: 100,
        ..StudyConfig::default()
    };
    let result = study(&sets, &config).unwrap();
    let want = t["spearman_mean"].as_object().unwrap();
    assert_eq!(result.groups.len(), want.len());
    for g in &result.groups {
        let row = g
            .metrics
            .iter()
            .find(|r| r.metric == Metric::UdcgTheta)
            .expect("UDCGθ computed when a model is given");
        let w = want[&g.dataset].as_f64().unwrap();
        assert!(
            (row.spearman.mean - w).abs() < 1e-9,
            "{}: UDCGθ ρ {} vs scipy {w}",
            g.dataset,
            row.spearman.mean
        );
    }
}
