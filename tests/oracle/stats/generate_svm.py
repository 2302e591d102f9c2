"""Oracle fixtures for ragscope's pairwise ranking SVM (crates/eval/src/rag/svm_rank.rs).

Builds UDCGθ-style training pairs (differences of 2k position features of contexts of the same
question, better minus worse) and solves the same primal with scikit-learn's liblinear:
LinearSVC(loss="hinge", dual=True, fit_intercept=False) on the differences. liblinear needs two
classes, so every other pair is negated with label −1, which leaves the hinge terms unchanged.

    python tests/oracle/stats/generate_svm.py --out crates/eval/tests/fixtures/rag
"""

import argparse
import json
import os

import numpy as np
import sklearn
from sklearn.svm import LinearSVC


def context_pairs(rng, questions, contexts, k):
    true_alpha = np.linspace(1.5, 0.8, k)
    true_beta = np.linspace(1.0, 0.6, k)
    pairs = []
    for _ in range(questions):
        feats, levels = [], []
        for _ in range(contexts):
            relevant = rng.uniform(size=k) < 0.3
            p = rng.beta(1, 3, size=k)
            u = np.where(relevant, 1 - p, -(1 - p))
            f = np.concatenate([np.maximum(u, 0), np.minimum(u, 0)])
            score = true_alpha @ f[:k] + true_beta @ f[k:] + rng.normal(scale=0.5)
            level = 2 if score > 0.3 else (1 if score > -0.3 else 0)
            feats.append(f)
            levels.append(level)
        for i in range(contexts):
            for j in range(i + 1, contexts):
                if levels[i] == levels[j]:
                    continue
                hi, lo = (i, j) if levels[i] > levels[j] else (j, i)
                pairs.append(feats[hi] - feats[lo])
    return np.array(pairs)


def objective(x, w, c):
    return 0.5 * w @ w + c * np.maximum(0, 1 - x @ w).sum()


def case(name, x, c):
    signs = np.where(np.arange(len(x)) % 2 == 0, 1.0, -1.0)
    svc = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=c, tol=1e-9,
                    max_iter=2_000_000, random_state=0)
    svc.fit(x * signs[:, None], signs)
    w = svc.coef_[0]
    return {"name": name, "c": c, "pairs": x.tolist(), "sklearn_weights": w.tolist(),
            "sklearn_objective": float(objective(x, w, c))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    cases = [
        case("k5_noisy_c1", context_pairs(rng, 40, 10, 5), 1.0),
        case("k5_noisy_c0.1", context_pairs(rng, 40, 10, 5), 0.1),
        case("k3_noisy_c10", context_pairs(rng, 30, 6, 3), 10.0),
    ]
    meta = {"generator": "tests/oracle/stats/generate_svm.py", "numpy": np.__version__,
            "scikit-learn": sklearn.__version__}
    with open(os.path.join(args.out, "svm_rank_sklearn.json"), "w") as f:
        json.dump({"meta": meta, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
