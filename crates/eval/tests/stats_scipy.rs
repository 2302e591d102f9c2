//! Statistics against scipy (fixtures from tests/oracle/stats/generate.py, committed).

use ragscope_eval::stats::correction::{benjamini_hochberg, bonferroni, holm};
use ragscope_eval::stats::correlation::{kendall_tau_b, pearson, spearman};
use ragscope_eval::stats::distributions::{normal_cdf, normal_sf, t_cdf, t_quantile, t_sf};
use ragscope_eval::stats::effect::{cohens_d_paired, mean_difference};
use ragscope_eval::stats::paired::{
    bootstrap_mean_ci, bootstrap_test, joint_resample_means, paired_t, quantile_sorted,
    randomization, Alternative,
};
use ragscope_eval::stats::wilcoxon::{wilcoxon, Method, WilcoxonOptions, ZeroMethod};
use serde_json::Value;

fn fixture(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/stats/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn vec(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, scipy {want} (|diff| {} > {tol})",
        (got - want).abs()
    );
}

fn alternative(name: &str) -> Alternative {
    match name {
        "two-sided" => Alternative::TwoSided,
        "greater" => Alternative::Greater,
        "less" => Alternative::Less,
        other => panic!("{other}"),
    }
}

#[test]
fn correlations_match_scipy_to_1e12() {
    for case in fixture("correlations") {
        let (x, y) = (vec(&case["x"]), vec(&case["y"]));
        close(
            pearson(&x, &y).unwrap(),
            case["pearson"].as_f64().unwrap(),
            1e-12,
            "pearson",
        );
        close(
            spearman(&x, &y).unwrap(),
            case["spearman"].as_f64().unwrap(),
            1e-12,
            "spearman",
        );
        close(
            kendall_tau_b(&x, &y).unwrap(),
            case["kendall_tau_b"].as_f64().unwrap(),
            1e-12,
            "kendall",
        );
    }
}

#[test]
fn paired_t_matches_scipy() {
    for case in fixture("t_tests") {
        let (a, b) = (vec(&case["a"]), vec(&case["b"]));
        for alt in ["two-sided", "greater", "less"] {
            let r = paired_t(&a, &b, alternative(alt)).unwrap();
            close(
                r.statistic,
                case[alt]["statistic"].as_f64().unwrap(),
                1e-10,
                "t",
            );
            close(r.p_value, case[alt]["pvalue"].as_f64().unwrap(), 1e-6, alt);
        }
        let ci = mean_difference(&a, &b, 0.95).unwrap();
        let want = vec(&case["mean_ci95"]);
        close(ci.ci_low, want[0], 1e-9, "ci low");
        close(ci.ci_high, want[1], 1e-9, "ci high");
        close(
            cohens_d_paired(&a, &b).unwrap(),
            case["cohens_dz"].as_f64().unwrap(),
            1e-12,
            "d_z",
        );
    }
}

#[test]
fn wilcoxon_matches_scipy_in_every_mode() {
    let mut checked = 0;
    for case in fixture("wilcoxon") {
        let (a, b) = (vec(&case["a"]), vec(&case["b"]));
        let name = case["name"].as_str().unwrap();
        for run in case["runs"].as_array().unwrap() {
            let options = WilcoxonOptions {
                zero_method: match run["zero_method"].as_str().unwrap() {
                    "wilcox" => ZeroMethod::Wilcox,
                    "pratt" => ZeroMethod::Pratt,
                    _ => ZeroMethod::Zsplit,
                },
                correction: run["correction"].as_bool().unwrap(),
                alternative: alternative(run["alternative"].as_str().unwrap()),
                method: match run["method"].as_str().unwrap() {
                    "auto" => Method::Auto,
                    "exact" => Method::Exact,
                    _ => Method::Asymptotic,
                },
            };
            let what = format!("{name} {run}");
            let Some(p) = run["pvalue"].as_f64() else {
                assert!(wilcoxon(&a, &b, options).is_err(), "{what}");
                continue;
            };
            let r = wilcoxon(&a, &b, options).unwrap();
            close(r.statistic, run["statistic"].as_f64().unwrap(), 1e-9, &what);
            close(r.p_value, p, 1e-6, &what);
            if let Some(z) = run["zstatistic"].as_f64() {
                close(r.z.unwrap(), z, 1e-9, &what);
            }
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked}");
}

#[test]
fn randomization_matches_scipy_exactly_or_within_monte_carlo_error() {
    for case in fixture("randomization") {
        let (a, b) = (vec(&case["a"]), vec(&case["b"]));
        for alt in ["two-sided", "greater", "less"] {
            let want = case[alt].as_f64().unwrap();
            if case["exact"].as_bool().unwrap() {
                let r = randomization(&a, &b, alternative(alt), 9999, 7).unwrap();
                close(r.p_value, want, 1e-12, alt);
            } else {
                let resamples = 100_000;
                let r = randomization(&a, &b, alternative(alt), resamples, 7).unwrap();
                let oracle_b = case["oracle_resamples"].as_f64().unwrap();
                // 4 standard errors of the difference of two independent estimates (a one-sided
                // p is a proportion; the two-sided one is twice a proportion).
                let p1 = if alt == "two-sided" { want / 2.0 } else { want }.clamp(1e-4, 0.5);
                let se = (p1 * (1.0 - p1) * (1.0 / resamples as f64 + 1.0 / oracle_b)).sqrt();
                let factor = if alt == "two-sided" { 2.0 } else { 1.0 };
                close(r.p_value, want, 4.0 * factor * se, alt);
            }
        }
    }
}

#[test]
fn bootstrap_matches_numpy_and_scipy_within_monte_carlo_error() {
    for case in fixture("bootstrap") {
        let (a, b) = (vec(&case["a"]), vec(&case["b"]));
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let resamples = 50_000;
        let oracle_b = case["oracle_resamples"].as_f64().unwrap();
        let se_mean = case["standard_error"].as_f64().unwrap();
        let (low, high) = bootstrap_mean_ci(&d, 0.95, resamples, 11).unwrap();
        let want = vec(&case["ci95_percentile"]);
        // A 2.5% quantile of B means has a standard error of about
        // √(0.025·0.975/B)/φ(1.96)·se_mean ≈ 2.7·se_mean/√B.
        let q_se = 2.7 * se_mean * (1.0 / resamples as f64 + 1.0 / oracle_b).sqrt();
        close(low, want[0], 4.0 * q_se, "ci low");
        close(high, want[1], 4.0 * q_se, "ci high");
        // The study's joint resampler gives the same interval (paired with a second series).
        let rows: Vec<f64> = d.iter().flat_map(|v| [*v, -v]).collect();
        let mut means = joint_resample_means(&rows, 2, resamples, 5);
        means[0].sort_by(f64::total_cmp);
        close(
            quantile_sorted(&means[0], 0.025),
            want[0],
            4.0 * q_se,
            "joint low",
        );
        close(
            quantile_sorted(&means[0], 0.975),
            want[1],
            4.0 * q_se,
            "joint high",
        );
        for (alt, key) in [
            (Alternative::TwoSided, "p_two_sided"),
            (Alternative::Greater, "p_greater"),
            (Alternative::Less, "p_less"),
        ] {
            let want = case[key].as_f64().unwrap();
            let r = bootstrap_test(&a, &b, alt, resamples, 13).unwrap();
            let p = want.clamp(1e-4, 0.5);
            let se = (p * (1.0 - p) * (1.0 / resamples as f64 + 1.0 / oracle_b)).sqrt();
            close(r.p_value, want, 4.0 * se, key);
        }
    }
}

#[test]
fn distributions_match_scipy() {
    let path = format!(
        "{}/tests/fixtures/stats/distributions.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for c in v["cases"]["t"].as_array().unwrap() {
        let (t, df) = (c["t"].as_f64().unwrap(), c["df"].as_f64().unwrap());
        close(t_cdf(t, df), c["cdf"].as_f64().unwrap(), 1e-12, "t cdf");
        close(t_sf(t, df), c["sf"].as_f64().unwrap(), 1e-12, "t sf");
    }
    for c in v["cases"]["t_quantile"].as_array().unwrap() {
        let (p, df) = (c["p"].as_f64().unwrap(), c["df"].as_f64().unwrap());
        close(t_quantile(p, df), c["ppf"].as_f64().unwrap(), 1e-9, "t ppf");
    }
    for c in v["cases"]["normal"].as_array().unwrap() {
        let z = c["z"].as_f64().unwrap();
        // statrs' erfc is good to ~4e-11 relative, far inside the 1e-6 needed for p-values.
        let (cdf, sf) = (c["cdf"].as_f64().unwrap(), c["sf"].as_f64().unwrap());
        close(normal_cdf(z), cdf, 1e-9 * cdf, "Φ");
        close(normal_sf(z), sf, 1e-9 * sf, "1−Φ");
    }
}

#[test]
fn benjamini_hochberg_matches_scipy() {
    for case in fixture("corrections") {
        let p = vec(&case["p"]);
        let want = vec(&case["bh"]);
        for (g, w) in benjamini_hochberg(&p).iter().zip(&want) {
            close(*g, *w, 1e-14, "bh");
        }
    }
}

#[test]
fn holm_and_bonferroni_on_holms_textbook_example() {
    // Worked by hand from Holm's (1979) definition: sorted p 0.005, 0.01, 0.03, 0.04 times
    // 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04, made monotone → 0.02, 0.03, 0.06, 0.06.
    // scipy has no Holm correction, so there is no library oracle here.
    let p = [0.01, 0.04, 0.03, 0.005];
    let h = holm(&p);
    for (g, w) in h.iter().zip([0.03, 0.06, 0.06, 0.02]) {
        close(*g, w, 1e-15, "holm");
    }
    let b = bonferroni(&p);
    for (g, w) in b.iter().zip([0.04, 0.16, 0.12, 0.02]) {
        close(*g, w, 1e-15, "bonferroni");
    }
}

#[test]
fn compare_api_reports_the_scipy_values() {
    use ragscope_eval::stats::{compare, holm, Test};
    let mut p_values = Vec::new();
    for case in fixture("t_tests") {
        let (a, b) = (vec(&case["a"]), vec(&case["b"]));
        // compare(baseline, other) tests other − baseline, i.e. ttest_rel(other, baseline).
        let r = compare(&b, &a, Test::PairedT, 1).unwrap();
        close(
            r.p_value,
            case["two-sided"]["pvalue"].as_f64().unwrap(),
            1e-6,
            "p",
        );
        let ci = vec(&case["mean_ci95"]);
        close(r.ci_low, ci[0], 1e-9, "ci");
        close(r.ci_high, ci[1], 1e-9, "ci");
        close(r.cohens_d, case["cohens_dz"].as_f64().unwrap(), 1e-12, "d");
        assert!(
            r.bootstrap_ci_low <= r.mean_difference && r.mean_difference <= r.bootstrap_ci_high
        );
        assert_eq!(r, compare(&b, &a, Test::PairedT, 1).unwrap(), "seeded");
        p_values.push(r.p_value);
    }
    let adjusted = holm(&p_values);
    assert!(adjusted
        .iter()
        .zip(&p_values)
        .all(|(h, p)| h >= p && *h <= 1.0));
}
