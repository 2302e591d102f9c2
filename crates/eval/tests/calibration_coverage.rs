//! Coverage of the 95% PPI and PPI++ intervals by simulation: units whose true mean is known,
//! a uniform random sample of them labelled, 1,000 seeded trials. The intervals are asymptotic,
//! so the bar is 93%, not 95%.

use ragscope_eval::calibration::{ppi, Sample};
use ragscope_eval::stats::rng::SeededRng;

const TRIALS: u64 = 1_000;

/// One population of `big_n` units: p ~ U(0, 1), Y ~ Bernoulli(p) (so E[Y] = 1/2), and a judge
/// that sees p through noise and a bias (so the judge alone would be wrong).
fn population(rng: &mut SeededRng, big_n: usize) -> (Vec<f64>, Vec<f64>) {
    (0..big_n)
        .map(|_| {
            let p = rng.unit();
            let y = f64::from(u8::from(rng.unit() < p));
            let noise = 0.4 * (rng.unit() - 0.5);
            ((y), (0.8 * p + 0.15 + noise).clamp(0.0, 1.0))
        })
        .unzip()
}

fn covers(low: f64, high: f64, truth: f64) -> bool {
    low <= truth && truth <= high
}

#[test]
fn ppi_and_ppi_plus_plus_cover_the_true_mean() {
    let (big_n, n) = (1000, 100);
    let (mut ppi_hits, mut pp_hits, mut judge_hits) = (0, 0, 0);
    for trial in 0..TRIALS {
        let mut rng = SeededRng::new(trial);
        let (y_all, yhat_all) = population(&mut rng, big_n);
        let mut order: Vec<usize> = (0..big_n).collect();
        rng.shuffle(&mut order);
        let labelled = &order[..n];
        let y: Vec<f64> = labelled.iter().map(|&i| y_all[i]).collect();
        let yhat: Vec<f64> = labelled.iter().map(|&i| yhat_all[i]).collect();
        let sample = Sample {
            y: &y,
            yhat: &yhat,
            yhat_unlabelled: &yhat_all,
            w: None,
            w_unlabelled: None,
        };
        let p = ppi(&sample, Some(1.0), 0.05).unwrap();
        let pp = ppi(&sample, None, 0.05).unwrap();
        ppi_hits += usize::from(covers(p.low, p.high, 0.5));
        pp_hits += usize::from(covers(pp.low, pp.high, 0.5));
        // The judge's own mean is biased: it must miss most of the time, or the test is weak.
        let judge = yhat_all.iter().sum::<f64>() / big_n as f64;
        judge_hits += usize::from((judge - 0.5).abs() < 0.01);
    }
    let rate = |hits: usize| hits as f64 / TRIALS as f64;
    eprintln!("PPI {} PPI++ {}", rate(ppi_hits), rate(pp_hits));
    assert!(rate(ppi_hits) >= 0.93, "PPI covered {}", rate(ppi_hits));
    assert!(rate(pp_hits) >= 0.93, "PPI++ covered {}", rate(pp_hits));
    assert!(
        rate(judge_hits) < 0.5,
        "judge alone within 0.01: {}",
        rate(judge_hits)
    );
}

/// A stratified sample: units the judge rates high are labelled at 1 in 4, the rest at 1 in
/// 16; inverse-inclusion weights make the estimate unbiased for the population's mean.
#[test]
fn weighted_ppi_covers_under_stratified_sampling() {
    let big_n = 800;
    let (mut hits, mut unweighted_hits) = (0, 0);
    for trial in 0..TRIALS {
        let mut rng = SeededRng::new(10_000 + trial);
        let (y_all, yhat_all) = population(&mut rng, big_n);
        let truth = y_all.iter().sum::<f64>() / big_n as f64;
        let (mut y, mut yhat, mut w) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..big_n {
            let rate = if yhat_all[i] > 0.5 { 0.25 } else { 1.0 / 16.0 };
            if rng.unit() < rate {
                y.push(y_all[i]);
                yhat.push(yhat_all[i]);
                w.push(1.0 / rate);
            }
        }
        let weighted = Sample {
            y: &y,
            yhat: &yhat,
            yhat_unlabelled: &yhat_all,
            w: Some(&w),
            w_unlabelled: None,
        };
        let e = ppi(&weighted, None, 0.05).unwrap();
        hits += usize::from(covers(e.low, e.high, truth));
        let plain = ppi(
            &Sample {
                w: None,
                ..weighted
            },
            Some(0.0),
            0.05,
        )
        .unwrap();
        unweighted_hits += usize::from(covers(plain.low, plain.high, truth));
    }
    let rate = |h: usize| h as f64 / TRIALS as f64;
    assert!(rate(hits) >= 0.93, "weighted PPI++ covered {}", rate(hits));
    // Without weights the over-sampled stratum biases the classical mean: it must cover less.
    assert!(
        rate(unweighted_hits) < 0.9,
        "unweighted covered {}",
        rate(unweighted_hits)
    );
}
