"""Oracle for ragscope's correlation study (crates/eval/src/rag/correlation.rs).

Writes a small context-set JSONL (two datasets, mixed outcomes, ties, a question with one
outcome only, a context of another size) and the per-group mean correlations computed
independently here: metrics from their published formulas in plain Python, correlations by
scipy.stats.{spearmanr, kendalltau, pearsonr}. Conventions mirrored from the Rust doc: questions
whose contexts share one outcome are skipped; a metric constant over a question scores 0.

    python tests/oracle/stats/generate_study.py --out crates/eval/tests/fixtures/rag
"""

import argparse
import json
import math
import os

import numpy as np
from scipy import stats

LEVEL = {"wrong": 0, "abstain": 1, "correct": 2}
GAMMA = 1 / 3


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def utility(j):
    return (1 if j["is_relevant"] else -1) * (1 - j["no_res_prob"])


def udcg(js, k, gamma, binary=False):
    us = [(1 if j["is_relevant"] else -1) if binary else utility(j) for j in js]
    return sigmoid((sum(u for u in us if u > 0) + gamma * sum(u for u in us if u <= 0)) / k)


def metrics(js, num_rel, k):
    rel = [j["is_relevant"] for j in js]
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(rel) if r)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(num_rel, k)))
    first = next((i for i, r in enumerate(rel) if r), None)
    hits_so_far, ap = 0, 0.0
    for i, r in enumerate(rel):
        if r:
            hits_so_far += 1
            ap += hits_so_far / (i + 1)
    erag = [j["erag"] for j in js]
    return {
        "UDCG": udcg(js, k, GAMMA),
        "UDCG-rel": udcg(js, k, 0.0),
        "UDCG-binary": udcg(js, k, GAMMA, binary=True),
        "nDCG": dcg / idcg if idcg > 0 else 0.0,
        "MRR": 0.0 if first is None else 1 / (first + 1),
        "MAP": ap / num_rel if num_rel else 0.0,
        "Precision": sum(rel) / len(rel),
        "HITS": float(any(rel)),
        "eRAG-P": float(np.mean(erag)),
        "eRAG-success": float(max(erag)),
    }


def make_data(rng):
    lines = []
    for dataset, model, nq in [("nq", "llama", 12), ("popqa", "qwen", 9)]:
        for q in range(nq):
            pool = {}
            for i in range(12):
                rel = bool(rng.uniform() < 0.3)
                p = float(np.round(rng.uniform() ** (3 if rel else 1), 3))
                pool[f"d{i}"] = {"is_relevant": rel, "no_res_prob": p,
                                 "erag": float(np.round(rng.uniform(), 2))}
            ids = list(pool)
            contexts = []
            for c in range(8):
                picked = list(rng.choice(ids, size=4, replace=False))
                if q == 0:
                    outcome = "correct"  # one outcome only: skipped
                else:
                    outcome = ["wrong", "abstain", "correct"][int(rng.integers(0, 3))]
                contexts.append({"passages": picked, "outcome": outcome})
            if q == 1:
                # Every context identical in relevance: HITS and others constant → ρ = 0 rule.
                contexts = [{"passages": ["d0", "d1", "d2", "d3"][::s], "outcome": o}
                            for s, o in [(1, "correct"), (-1, "wrong")]]
            if q == 2:
                contexts.append({"passages": ids[:3], "outcome": "wrong"})  # other size
            lines.append({"qid": f"q{q}", "dataset": dataset, "model": model,
                          "question": "ignored", "passages": pool, "contexts": contexts})
    return lines


def corr(fn, x, y):
    if len(set(y)) < 2:
        return 0.0
    return float(fn(x, y).statistic)


def expected(lines, k):
    groups = {}
    for line in lines:
        key = (line["dataset"], line["model"])
        g = groups.setdefault(key, {"questions": 0, "skipped": 0, "per": {}})
        pool = line["passages"]
        num_rel = sum(1 for j in pool.values() if j["is_relevant"])
        ctx = [c for c in line["contexts"] if len(c["passages"]) == k]
        outcome = [LEVEL[c["outcome"]] for c in ctx]
        if len(outcome) < 2 or len(set(outcome)) < 2:
            g["skipped"] += 1
            continue
        g["questions"] += 1
        values = [metrics([pool[p] for p in c["passages"]], num_rel, k) for c in ctx]
        for name in values[0]:
            ys = [v[name] for v in values]
            per = g["per"].setdefault(name, {"spearman": [], "kendall-tau-b": [], "pearson": []})
            per["spearman"].append(corr(stats.spearmanr, outcome, ys))
            per["kendall-tau-b"].append(corr(lambda a, b: stats.kendalltau(a, b, variant="b"),
                                             outcome, ys))
            per["pearson"].append(corr(stats.pearsonr, outcome, ys))
    out = []
    for (dataset, model), g in groups.items():
        out.append({
            "dataset": dataset, "model": model, "questions": g["questions"],
            "skipped_constant_outcome": g["skipped"],
            "means": {name: {c: float(np.mean(v)) for c, v in per.items()}
                      for name, per in g["per"].items()},
        })
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    lines = make_data(rng)
    with open(os.path.join(args.out, "study_contexts.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    with open(os.path.join(args.out, "study_expected.json"), "w") as f:
        json.dump({"generator": "tests/oracle/stats/generate_study.py", "k": 4,
                   "groups": expected(lines, 4)}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
