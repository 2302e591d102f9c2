"""Oracle fixtures for ragscope's statistics (crates/eval/src/stats).

Generates paired samples with numpy and records what scipy computes on them. The Rust tests
(crates/eval/tests/stats_*.rs) read the JSON and compare without Python.

    python tests/oracle/stats/generate.py --out crates/eval/tests/fixtures/stats
"""

import argparse
import json
import os

import numpy as np
import scipy
from scipy import stats


def floats(a):
    return [float(v) for v in a]


def none_if_nan(v):
    v = float(v)
    return None if np.isnan(v) else v


def correlations(rng):
    cases = []
    for n, kind in [(5, "cont"), (10, "ties"), (10, "cont"), (25, "ties"), (50, "cont"),
                    (7, "outcome"), (10, "outcome"), (30, "ties")]:
        if kind == "cont":
            x = rng.normal(size=n)
            y = 0.5 * x + rng.normal(size=n)
        elif kind == "ties":
            x = rng.integers(0, 4, size=n).astype(float)
            y = x + rng.integers(0, 3, size=n)
        else:  # ideal outcome order (0/1/2) against a continuous metric, as in the study
            x = rng.integers(0, 3, size=n).astype(float)
            y = rng.uniform(size=n) + 0.3 * x
        cases.append({
            "x": floats(x), "y": floats(y),
            "pearson": float(stats.pearsonr(x, y).statistic),
            "spearman": float(stats.spearmanr(x, y).statistic),
            "kendall_tau_b": float(stats.kendalltau(x, y, variant="b").statistic),
        })
    return cases


def paired_sample(rng, n, shift, ties=False, zeros=0):
    a = rng.uniform(size=n)
    b = a - shift + 0.2 * rng.normal(size=n)
    if ties:
        a = np.round(a * 4) / 4
        b = np.round(b * 4) / 4
    if zeros:
        b[:zeros] = a[:zeros]
    return a, b


def t_tests(rng):
    cases = []
    for n, shift in [(5, 0.1), (12, 0.0), (30, 0.05), (80, 0.02)]:
        a, b = paired_sample(rng, n, shift)
        case = {"a": floats(a), "b": floats(b)}
        for alt in ["two-sided", "greater", "less"]:
            r = stats.ttest_rel(a, b, alternative=alt)
            case[alt] = {"statistic": float(r.statistic), "pvalue": float(r.pvalue)}
        ci = stats.ttest_rel(a, b).confidence_interval(0.95)
        d = a - b
        case["mean_ci95"] = [float(ci.low), float(ci.high)]
        case["cohens_dz"] = float(np.mean(d) / np.std(d, ddof=1))
        cases.append(case)
    return cases


def wilcoxon_cases(rng):
    cases = []
    samples = [
        ("exact_n8", *paired_sample(rng, 8, 0.1)),
        ("exact_n20", *paired_sample(rng, 20, 0.05)),
        ("exact_n45", *paired_sample(rng, 45, 0.02)),
        ("asymptotic_n60", *paired_sample(rng, 60, 0.03)),
        ("ties_zeros_n10", *paired_sample(rng, 10, 0.1, ties=True, zeros=2)),
        ("ties_n12", *paired_sample(rng, 12, 0.1, ties=True)),
        ("ties_zeros_n30", *paired_sample(rng, 30, 0.05, ties=True, zeros=3)),
        ("ties_zeros_n70", *paired_sample(rng, 70, 0.03, ties=True, zeros=5)),
    ]
    for name, a, b in samples:
        runs = []
        for zero_method in ["wilcox", "pratt", "zsplit"]:
            for correction in [False, True]:
                for method in ["auto", "asymptotic", "exact"]:
                    for alt in ["two-sided", "greater", "less"]:
                        r = stats.wilcoxon(a, b, zero_method=zero_method, correction=correction,
                                           alternative=alt, method=method)
                        runs.append({
                            "zero_method": zero_method, "correction": correction,
                            "method": method, "alternative": alt,
                            "statistic": none_if_nan(r.statistic),
                            "pvalue": none_if_nan(r.pvalue),
                            "zstatistic": none_if_nan(getattr(r, "zstatistic", np.nan)),
                        })
        cases.append({"name": name, "a": floats(a), "b": floats(b), "runs": runs})
    return cases


def mean_stat(d, axis=-1):
    return np.mean(d, axis=axis)


def randomization_cases(rng):
    cases = []
    # Exact: 2^n <= resamples, so scipy enumerates every sign pattern.
    for n, shift in [(8, 0.1), (12, 0.03)]:
        a, b = paired_sample(rng, n, shift)
        d = a - b
        case = {"a": floats(a), "b": floats(b), "resamples": 9999, "exact": True}
        for alt in ["two-sided", "greater", "less"]:
            r = stats.permutation_test((d,), mean_stat, permutation_type="samples",
                                       n_resamples=9999, alternative=alt, vectorized=True)
            case[alt] = float(r.pvalue)
        cases.append(case)
    # Monte Carlo: the oracle is scipy with many resamples; Rust must agree within the
    # Monte-Carlo error bound of both estimates.
    for n, shift in [(40, 0.03), (60, 0.0)]:
        a, b = paired_sample(rng, n, shift)
        d = a - b
        oracle_resamples = 200000
        case = {"a": floats(a), "b": floats(b), "exact": False,
                "oracle_resamples": oracle_resamples}
        for alt in ["two-sided", "greater", "less"]:
            r = stats.permutation_test((d,), mean_stat, permutation_type="samples",
                                       n_resamples=oracle_resamples, alternative=alt,
                                       vectorized=True, rng=np.random.default_rng(1))
            case[alt] = float(r.pvalue)
        cases.append(case)
    return cases


def bootstrap_cases(rng):
    cases = []
    for n, shift in [(25, 0.05), (60, 0.0)]:
        a, b = paired_sample(rng, n, shift)
        d = a - b
        oracle_resamples = 200000
        ci = stats.bootstrap((d,), mean_stat, method="percentile", n_resamples=oracle_resamples,
                             confidence_level=0.95, vectorized=True,
                             rng=np.random.default_rng(2)).confidence_interval
        # Paired bootstrap test (Sakai 2006) by numpy: shift to mean 0, resample.
        g = np.random.default_rng(3)
        shifted = d - d.mean()
        idx = g.integers(0, n, size=(oracle_resamples, n))
        means = shifted[idx].mean(axis=1)
        obs = d.mean()
        cases.append({
            "a": floats(a), "b": floats(b), "oracle_resamples": oracle_resamples,
            "ci95_percentile": [float(ci.low), float(ci.high)],
            "standard_error": float(np.std(d, ddof=1) / np.sqrt(n)),
            "p_two_sided": float(np.mean(np.abs(means) >= abs(obs))),
            "p_greater": float(np.mean(means >= obs)),
            "p_less": float(np.mean(means <= obs)),
        })
    return cases


def distribution_cases():
    out = []
    for df in [1, 2, 4, 9, 29, 99, 1000]:
        for t in [-6.0, -2.5, -1.0, -0.1, 0.0, 0.7, 1.96, 3.3, 12.0]:
            out.append({"df": df, "t": t, "cdf": float(stats.t.cdf(t, df)),
                        "sf": float(stats.t.sf(t, df))})
    quantiles = [{"df": df, "p": p, "ppf": float(stats.t.ppf(p, df))}
                 for df in [1, 4, 9, 29, 99] for p in [0.025, 0.5, 0.9, 0.975, 0.995]]
    normal = [{"z": z, "cdf": float(stats.norm.cdf(z)), "sf": float(stats.norm.sf(z))}
              for z in [-8.0, -3.0, -1.0, 0.0, 0.5, 1.96, 4.0, 9.0]]
    return {"t": out, "t_quantile": quantiles, "normal": normal}


def correction_cases(rng):
    out = []
    for m in [1, 4, 10]:
        p = rng.uniform(size=m) ** 2
        out.append({"p": floats(p),
                    "bh": floats(stats.false_discovery_control(p, method="bh"))})
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(20261120)
    fixtures = {
        "correlations": correlations(rng),
        "t_tests": t_tests(rng),
        "wilcoxon": wilcoxon_cases(rng),
        "randomization": randomization_cases(rng),
        "bootstrap": bootstrap_cases(rng),
        "distributions": distribution_cases(),
        "corrections": correction_cases(rng),
    }
    meta = {"generator": "tests/oracle/stats/generate.py", "numpy": np.__version__,
            "scipy": scipy.__version__}
    for name, data in fixtures.items():
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump({"meta": meta, "cases": data}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
