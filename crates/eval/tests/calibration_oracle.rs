//! Prediction-powered estimates, agreement intervals and calibration units against their
//! Python oracles (tests/oracle/calibration/generate.py → tests/fixtures/calibration,
//! committed): ppi-python 0.2.3, scipy, scikit-learn, krippendorff, pytrec_eval.

use ragscope_eval::calibration::agreement_ci::{
    agreement_intervals, expand_groups, ranking_tau_interval,
};
use ragscope_eval::calibration::units::{item_units, query_units};
use ragscope_eval::calibration::{classical, ppi, Estimate, Sample};
use ragscope_eval::stats::distributions::normal_quantile;
use ragscope_eval::Measure;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/calibration/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn indices(v: &Value) -> Vec<Vec<usize>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d.as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap() as usize)
                .collect()
        })
        .collect()
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, oracle {want} (|diff| {:e} > {tol:e})",
        (got - want).abs()
    );
}

fn same_estimate(got: &Estimate, want: &Value, what: &str) {
    close(got.estimate, want["estimate"].as_f64().unwrap(), 1e-9, what);
    close(got.low, want["low"].as_f64().unwrap(), 1e-9, what);
    close(got.high, want["high"].as_f64().unwrap(), 1e-9, what);
    if let Some(l) = want.get("lambda") {
        close(got.lambda, l.as_f64().unwrap(), 1e-9, what);
    }
}

#[test]
fn estimates_match_ppi_python_within_1e9() {
    let cases = fixture("ppi_mean.json");
    let cases = cases["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (y, yhat, yu) = (
            floats(&case["y"]),
            floats(&case["yhat"]),
            floats(&case["yhat_unlabelled"]),
        );
        let w = case.get("w").map(floats);
        let wu = case.get("w_unlabelled").map(floats);
        let alpha = case["alpha"].as_f64().unwrap();
        let sample = Sample {
            y: &y,
            yhat: &yhat,
            yhat_unlabelled: &yu,
            w: w.as_deref(),
            w_unlabelled: wu.as_deref(),
        };
        let c = classical(&y, w.as_deref(), alpha).unwrap();
        same_estimate(&c, &case["classical"], &format!("{name}: classical"));
        let p = ppi(&sample, Some(1.0), alpha).unwrap();
        same_estimate(&p, &case["ppi"], &format!("{name}: ppi"));
        let pp = ppi(&sample, None, alpha).unwrap();
        same_estimate(&pp, &case["ppi++"], &format!("{name}: ppi++"));
    }
}

/// The REFERENCE §17 numbers (6 decimals), independently of the fixture's full precision.
#[test]
fn reference_test_vector() {
    let y = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0];
    let yhat = [0.9, 0.2, 0.8, 0.6, 0.3, 0.7, 0.4, 0.9, 0.5, 0.8];
    let yu = [
        0.9, 0.1, 0.8, 0.7, 0.2, 0.6, 0.5, 0.9, 0.4, 0.8, 0.3, 0.7, 0.6, 0.95, 0.15, 0.85, 0.55,
        0.65, 0.35, 0.75,
    ];
    let s = Sample {
        y: &y,
        yhat: &yhat,
        yhat_unlabelled: &yu,
        w: None,
        w_unlabelled: None,
    };
    let c = classical(&y, None, 0.1).unwrap();
    close(c.low, 0.461638, 5e-7, "classical low");
    close(c.high, 0.938362, 5e-7, "classical high");
    let p = ppi(&s, Some(1.0), 0.1).unwrap();
    close(p.estimate, 0.6775, 5e-7, "ppi");
    close(p.low, 0.502256, 5e-7, "ppi low");
    close(p.high, 0.852744, 5e-7, "ppi high");
    let pp = ppi(&s, None, 0.1).unwrap();
    close(pp.lambda, 0.958039, 5e-7, "lambda");
    close(pp.estimate, 0.678444, 5e-7, "ppi++");
    close(pp.low, 0.502853, 5e-7, "ppi++ low");
    close(pp.high, 0.854036, 5e-7, "ppi++ high");
}

#[test]
fn normal_quantile_matches_scipy_to_1e12() {
    for case in fixture("normal_quantile.json")["cases"].as_array().unwrap() {
        let (p, want) = (case["p"].as_f64().unwrap(), case["ppf"].as_f64().unwrap());
        let got = normal_quantile(p);
        close(got, want, 1e-12 * want.abs().max(1.0), &format!("ppf({p})"));
    }
}

#[test]
fn agreement_and_its_bootstrap_match_sklearn_and_krippendorff() {
    for case in fixture("agreement_bootstrap.json")["cases"]
        .as_array()
        .unwrap()
    {
        let as_i64 = |v: &Value| -> Vec<i64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect()
        };
        let (judge, human) = (as_i64(&case["judge"]), as_i64(&case["human"]));
        let draws = indices(&case["draws"]);
        let got = agreement_intervals(&judge, &human, &draws, 0.95);
        let stats = case["statistics"].as_object().unwrap();
        assert_eq!(got.len(), stats.len(), "statistics");
        for row in &got {
            let want = &stats[&row.statistic];
            match (row.value, want.as_f64()) {
                (Some(g), Some(w)) => close(g, w, 1e-12, &row.statistic),
                (g, w) => assert_eq!(g, w, "{}", row.statistic),
            }
            let bounds = case["intervals"][&row.statistic].as_array().unwrap();
            close(row.low.unwrap(), bounds[0].as_f64().unwrap(), 1e-12, "low");
            close(
                row.high.unwrap(),
                bounds[1].as_f64().unwrap(),
                1e-12,
                "high",
            );
            assert_eq!(row.resamples as u64, bounds[2].as_u64().unwrap());
        }
        // A topic (cluster) resample keeps every item of the drawn topics.
        let groups: Vec<usize> = case["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_u64().unwrap() as usize)
            .collect();
        let drawn = expand_groups(&groups, &[0, 0, 2]);
        let size = |g: usize| groups.iter().filter(|&&x| x == g).count();
        assert_eq!(drawn.len(), 2 * size(0) + size(2));
        assert!(drawn.iter().all(|&i| groups[i] == 0 || groups[i] == 2));
    }
}

#[test]
fn run_ranking_tau_and_its_bootstrap_match_scipy() {
    let case = fixture("ranking_tau.json");
    let matrix =
        |v: &Value| -> Vec<Vec<f64>> { v.as_array().unwrap().iter().map(floats).collect() };
    let got = ranking_tau_interval(
        &matrix(&case["judge"]),
        &matrix(&case["human"]),
        &indices(&case["draws"]),
        0.95,
    );
    close(
        got.value.unwrap(),
        case["tau"].as_f64().unwrap(),
        1e-12,
        "tau",
    );
    close(
        got.low.unwrap(),
        case["low"].as_f64().unwrap(),
        1e-12,
        "low",
    );
    close(
        got.high.unwrap(),
        case["high"].as_f64().unwrap(),
        1e-12,
        "high",
    );
    assert_eq!(got.resamples as u64, case["resamples"].as_u64().unwrap());
}

fn read(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/calibration/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Per-topic values behind `--unit query` against pytrec_eval, and the units' estimates
/// against ppi-python (the numbers `ragscope calibrate` prints).
#[test]
fn units_match_pytrec_eval_and_ppi_python() {
    let judge = ragscope_eval::parse_qrels("judge.qrels", &read("judge.qrels")).unwrap();
    let human = ragscope_eval::parse_qrels("human.qrels", &read("human.qrels")).unwrap();
    let run_of = |name: &str| {
        let file = format!("run_{name}.txt");
        ragscope_eval::parse_run(&file, &read(&file)).unwrap()
    };
    for case in fixture("per_topic.json")["cases"].as_array().unwrap() {
        let measure: Measure = case["measure"].as_str().unwrap().parse().unwrap();
        let run = run_of(case["run"].as_str().unwrap());
        for (side, qrels) in [("judge", &judge), ("human", &human)] {
            let results = ragscope_eval::evaluate(qrels, &run, std::slice::from_ref(&measure));
            let want = case[side].as_object().unwrap();
            let got: Vec<(&str, f64)> = results.per_query(&measure).collect();
            assert_eq!(got.len(), want.len(), "{measure} {side}: topics");
            for (qid, v) in got {
                close(
                    v,
                    want[qid].as_f64().unwrap(),
                    1e-12,
                    &format!("{measure} {qid}"),
                );
            }
        }
    }
    let cases = fixture("calibrate_cli.json");
    for case in cases["cases"].as_array().unwrap() {
        if case.get("weights").is_some() {
            continue; // the weighted case goes through the CLI (crates/cli/tests/calibrate_cli.rs)
        }
        let measure: Measure = case["measure"].as_str().unwrap().parse().unwrap();
        let run = run_of(case["run"].as_str().unwrap());
        let k = measure.cutoff.unwrap() as usize;
        let units = match case["unit"].as_str().unwrap() {
            "item" => item_units(&run, &judge, &human, k, measure.level()),
            _ => query_units(&run, &judge, &human, &measure, k),
        };
        let what = format!("{} {} {}", case["unit"], measure, case["run"]);
        assert_eq!(
            units.judge.len() as u64,
            case["units"].as_u64().unwrap(),
            "{what}"
        );
        let (y, yhat) = units.labelled();
        assert_eq!(y.len() as u64, case["labelled"].as_u64().unwrap(), "{what}");
        let judge_mean = units.judge.iter().sum::<f64>() / units.judge.len() as f64;
        close(judge_mean, case["judge"].as_f64().unwrap(), 1e-12, &what);
        let alpha = case["alpha"].as_f64().unwrap();
        let sample = Sample {
            y: &y,
            yhat: &yhat,
            yhat_unlabelled: &units.judge,
            w: None,
            w_unlabelled: None,
        };
        same_estimate(
            &classical(&y, None, alpha).unwrap(),
            &case["classical"],
            &what,
        );
        same_estimate(
            &ppi(&sample, Some(1.0), alpha).unwrap(),
            &case["ppi"],
            &what,
        );
        same_estimate(&ppi(&sample, None, alpha).unwrap(), &case["ppi++"], &what);
    }
}
