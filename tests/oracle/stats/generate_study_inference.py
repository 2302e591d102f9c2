"""Oracle for the inference parts of ragscope's correlation study (crates/eval/src/rag/correlation.rs):
the percentile-bootstrap intervals, the paired bootstrap test "A correlates better than B"
(Sakai 2006), and UDCGθ trained end to end.

Bootstrap: for a group of n = 6 questions the bootstrap distribution is enumerated exactly (all
6^6 equally likely index sequences), so the test can bracket the Monte-Carlo estimates of the
Rust code (B = 20,000 draws from its own seeded stream) instead of sharing a random stream:
  * intervals: the exact 2%/3% and 97%/98% quantiles of the resampled mean of every metric ×
    coefficient (numpy "linear" quantiles; the Rust 2.5%/97.5% estimates must fall between);
  * p-values: exact P[(m*_A − m*_B) − d ≥ d] for the reference UDCG against every other metric
    (d = observed mean difference of per-question Spearman ρ), with the mass of sequences lying
    within 1e-12 of the boundary reported apart (p_strict / p_loose) because sums in another order
    can land on either side of an exact tie.
Per-question coefficients come from scipy.stats (as in generate_study.py).

UDCGθ: pairs built from study_contexts.jsonl (k = 4) as the paper describes (2k features
[u⁺₁…u⁺ₖ, u⁻₁…u⁻ₖ], better minus worse within a question), solved by scikit-learn's liblinear
(LinearSVC hinge, dual, no intercept, C = 1), then σ(w·f) per context and the mean Spearman ρ
with the outcome order per group.

    python tests/oracle/stats/generate_study_inference.py --out crates/eval/tests/fixtures/rag
"""

import argparse
import itertools
import json
import os
import sys

import numpy as np
import sklearn
from scipy import stats
from sklearn.svm import LinearSVC

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate_study import LEVEL, corr, metrics, sigmoid  # noqa: E402

K_SMALL, N_SMALL, CONTEXTS = 3, 6, 8
REFERENCE = "UDCG"


def small_data(rng):
    lines = []
    for q in range(N_SMALL):
        pool = {}
        for i in range(8):
            rel = bool(rng.uniform() < 0.35)
            p = float(np.round(rng.uniform() ** (3 if rel else 1), 3))
            pool[f"d{i}"] = {"is_relevant": rel, "no_res_prob": p, "erag": float(np.round(rng.uniform(), 2))}
        ids = list(pool)
        contexts = []
        for _ in range(CONTEXTS):
            picked = list(rng.choice(ids, size=K_SMALL, replace=False))
            js = [pool[p] for p in picked]
            # Outcomes loosely follow utility so that metrics differ in how well they correlate.
            signal = sum((1 if j["is_relevant"] else -0.4) * (1 - j["no_res_prob"]) for j in js)
            noisy = signal + rng.normal(scale=0.6)
            outcome = "correct" if noisy > 0.6 else ("abstain" if noisy > -0.2 else "wrong")
            contexts.append({"passages": picked, "outcome": outcome})
        lines.append({"qid": f"s{q}", "dataset": "small", "model": "m", "passages": pool, "contexts": contexts})
    return lines


def per_question(lines, k):
    """Per-question coefficients of every metric: {metric: {coef: [..]}} over used questions."""
    per = {}
    for line in lines:
        pool = line["passages"]
        num_rel = sum(1 for j in pool.values() if j["is_relevant"])
        ctx = [c for c in line["contexts"] if len(c["passages"]) == k]
        outcome = [LEVEL[c["outcome"]] for c in ctx]
        if len(outcome) < 2 or len(set(outcome)) < 2:
            continue
        values = [metrics([pool[p] for p in c["passages"]], num_rel, k) for c in ctx]
        for name in values[0]:
            ys = [v[name] for v in values]
            d = per.setdefault(name, {"spearman": [], "kendall-tau-b": [], "pearson": []})
            d["spearman"].append(corr(stats.spearmanr, outcome, ys))
            d["kendall-tau-b"].append(corr(lambda a, b: stats.kendalltau(a, b, variant="b"), outcome, ys))
            d["pearson"].append(corr(stats.pearsonr, outcome, ys))
    return per


def exact_bootstrap(per):
    n = len(per[REFERENCE]["spearman"])
    assert n == N_SMALL, n
    seqs = np.array(list(itertools.product(range(n), repeat=n)))  # n^n × n
    intervals, comparisons = {}, {}
    for name, coefs in per.items():
        intervals[name] = {}
        for c, v in coefs.items():
            means = np.asarray(v)[seqs].mean(axis=1)
            q = np.quantile(means, [0.02, 0.03, 0.97, 0.98])
            intervals[name][c] = {"mean": float(np.mean(v)), "q02": q[0], "q03": q[1], "q97": q[2], "q98": q[3]}
    ref = np.asarray(per[REFERENCE]["spearman"])
    for name, coefs in per.items():
        if name == REFERENCE:
            continue
        other = np.asarray(coefs["spearman"])
        d = ref.mean() - other.mean()
        diff = ref[seqs].mean(axis=1) - other[seqs].mean(axis=1)
        stat = (diff - d) - d
        comparisons[name] = {"mean_difference": float(d),
                             "p_strict": float(np.mean(stat > 1e-12)),
                             "p_loose": float(np.mean(stat >= -1e-12))}
    for name in intervals:
        for c in intervals[name]:
            intervals[name][c] = {k: float(v) for k, v in intervals[name][c].items()}
    return intervals, comparisons


def features(js, k):
    f = np.zeros(2 * k)
    for i, j in enumerate(js[:k]):
        u = (1 if j["is_relevant"] else -1) * (1 - j["no_res_prob"])
        if u > 0:
            f[i] = u
        else:
            f[k + i] = u
    return f


def theta(lines, k):
    pairs = []
    for line in lines:
        pool = line["passages"]
        rows = [(LEVEL[c["outcome"]], features([pool[p] for p in c["passages"]], k))
                for c in line["contexts"] if len(c["passages"]) == k]
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                if rows[i][0] == rows[j][0]:
                    continue
                hi, lo = (rows[i], rows[j]) if rows[i][0] > rows[j][0] else (rows[j], rows[i])
                pairs.append(hi[1] - lo[1])
    X = np.array(pairs)
    y = np.ones(len(X))
    X[1::2] *= -1  # liblinear needs two classes; negating a pair and its label keeps its hinge term
    y[1::2] = -1
    svm = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=1.0, tol=1e-10, max_iter=10_000_000)
    svm.fit(X, y)
    w = svm.coef_[0]
    groups = {}
    for line in lines:
        pool = line["passages"]
        ctx = [c for c in line["contexts"] if len(c["passages"]) == k]
        outcome = [LEVEL[c["outcome"]] for c in ctx]
        if len(outcome) < 2 or len(set(outcome)) < 2:
            continue
        scores = [sigmoid(float(w @ features([pool[p] for p in c["passages"]], k))) for c in ctx]
        g = groups.setdefault(line["dataset"], [])
        g.append(corr(stats.spearmanr, outcome, scores))
    return {"k": k, "pairs": len(pairs), "alpha": [float(x) for x in w[:k]], "beta": [float(x) for x in w[k:]],
            "spearman_mean": {ds: float(np.mean(v)) for ds, v in groups.items()}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    small = small_data(rng)
    with open(os.path.join(args.out, "study_small.jsonl"), "w") as f:
        for line in small:
            f.write(json.dumps(line) + "\n")
    intervals, comparisons = exact_bootstrap(per_question(small, K_SMALL))
    with open(os.path.join(args.out, "study_contexts.jsonl")) as f:
        big = [json.loads(line) for line in f if line.strip()]
    out = {"generator": "tests/oracle/stats/generate_study_inference.py",
           "versions": {"numpy": np.__version__, "sklearn": sklearn.__version__},
           "small": {"file": "study_small.jsonl", "k": K_SMALL, "questions": N_SMALL, "reference": REFERENCE,
                     "intervals": intervals, "comparisons": comparisons},
           "theta": dict(file="study_contexts.jsonl", **theta(big, 4))}
    with open(os.path.join(args.out, "study_inference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
