"""Oracle fixtures for crates/eval/src/calibration and `ragscope calibrate`.

Oracles, all independent of ragscope:
- PyPI ppi-python 0.2.3: ppi_mean_pointestimate, ppi_mean_ci (lam=1 and lam=None, i.e. PPI++),
  classical_mean_ci, _calc_lam_glm through them; scipy.stats.norm.ppf for the quantile;
- scikit-learn's cohen_kappa_score / precision_score / recall_score and the krippendorff
  package for agreement, evaluated on resamples drawn here by numpy (the Rust test feeds the
  same index sets to its bootstrap, so the interval ends must match);
- scipy's kendalltau for the run ranking; pytrec_eval for per-topic measures.

Also writes small qrels and run files and the JSON `ragscope calibrate` must print for them
(units built here from pytrec_eval's per-topic values, estimates from ppi-python).

Run: /tmp/calib-venv/bin/python tests/oracle/calibration/generate.py --out DIR
(`cargo xtask oracle` does, into crates/eval/tests/fixtures/calibration).
"""

import argparse
import json
import os
import warnings

import krippendorff
import numpy as np
import pytrec_eval
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from ppi_py.ppi import _calc_lam_glm
from scipy import stats
from sklearn.metrics import cohen_kappa_score, precision_score, recall_score

warnings.filterwarnings("ignore")


def floats(a):
    return [float(v) for v in a]


def lam_of(y, yhat, yu, w=None, wu=None):
    """The PPI++ lambda exactly as ppi_mean_ci computes it before recursing."""
    n, big_n = len(y), len(yu)
    w = np.ones(n) if w is None else w / w.sum() * n
    wu = np.ones(big_n) if wu is None else wu / wu.sum() * big_n
    y2, yh2, yu2 = y.reshape(-1, 1), yhat.reshape(-1, 1), yu.reshape(-1, 1)
    w2, wu2 = w.reshape(-1, 1), wu.reshape(-1, 1)
    theta = ppi_mean_pointestimate(y2, yh2, yu2, lam=1, w=w, w_unlabeled=wu)
    return float(_calc_lam_glm(w2 * (y2 - theta), w2 * (yh2 - theta), wu2 * (yu2 - theta),
                               np.eye(1), clip=True))


def estimates(y, yhat, yu, alpha, w=None, wu=None):
    out = {}
    lo, hi = classical_mean_ci(y, w=w, alpha=alpha)
    est = float(np.mean(y)) if w is None else float(np.mean(w / w.sum() * len(y) * y))
    out["classical"] = {"estimate": est, "low": float(lo), "high": float(hi)}
    for name, lam in [("ppi", 1.0), ("ppi++", None)]:
        lo, hi = ppi_mean_ci(y, yhat, yu, alpha=alpha, lam=lam, w=w, w_unlabeled=wu)
        est = ppi_mean_pointestimate(y, yhat, yu, lam=lam, w=w, w_unlabeled=wu)
        out[name] = {"estimate": float(np.squeeze(est)), "low": float(np.squeeze(lo)),
                     "high": float(np.squeeze(hi)),
                     "lambda": 1.0 if lam == 1.0 else lam_of(y, yhat, yu, w, wu)}
    return out


def ppi_cases(rng):
    cases = []
    ref = {
        "name": "REFERENCE §17 test vector",
        "y": [1, 0, 1, 1, 0, 1, 0, 1, 1, 1],
        "yhat": [.9, .2, .8, .6, .3, .7, .4, .9, .5, .8],
        "yhat_unlabelled": [.9, .1, .8, .7, .2, .6, .5, .9, .4, .8, .3, .7, .6, .95, .15, .85,
                            .55, .65, .35, .75],
        "alpha": 0.1,
    }
    cases.append(ref)
    for i, (n, big_n, noise, binary) in enumerate([(20, 200, 0.3, True), (50, 1000, 0.1, False),
                                                   (8, 40, 1.0, False), (100, 300, 0.05, True),
                                                   (30, 30, 0.5, False)]):
        truth = rng.uniform(size=n + big_n)
        yhat_all = np.clip(truth + noise * rng.normal(size=n + big_n), 0, 1)
        y = (rng.uniform(size=n) < truth[:n]).astype(float) if binary else truth[:n]
        cases.append({"name": f"generated {i}", "y": floats(y), "yhat": floats(yhat_all[:n]),
                      "yhat_unlabelled": floats(yhat_all[n:]), "alpha": [0.05, 0.1, 0.2][i % 3]})
    # A judge that is anti-correlated: lambda clips to 0.
    y = rng.uniform(size=25)
    cases.append({"name": "clipped at 0", "y": floats(y), "yhat": floats(1 - y),
                  "yhat_unlabelled": floats(rng.uniform(size=60)), "alpha": 0.05})
    # Weighted (stratified: two strata sampled at 1/2 and 1/10; weights = 1/inclusion).
    for i in range(2):
        n, big_n = 40, 400
        w = np.where(rng.uniform(size=n) < 0.5, 2.0, 10.0)
        yhat = rng.uniform(size=n)
        y = np.clip(yhat + 0.2 * rng.normal(size=n), 0, 1)
        yu = rng.uniform(size=big_n)
        case = {"name": f"weighted {i}", "y": floats(y), "yhat": floats(yhat),
                "yhat_unlabelled": floats(yu), "w": floats(w), "alpha": 0.05}
        if i == 1:
            case["w_unlabelled"] = floats(rng.uniform(0.5, 2.0, size=big_n))
        cases.append(case)
    for c in cases:
        arr = lambda k: np.array(c[k], dtype=float) if k in c else None  # noqa: E731
        c.update(estimates(arr("y"), arr("yhat"), arr("yhat_unlabelled"), c["alpha"],
                           arr("w"), arr("w_unlabelled")))
    return cases


def quantiles():
    ps = [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.0125, 0.025, 0.05, 0.1, 0.25, 0.4, 0.5,
          0.6, 0.75, 0.9, 0.95, 0.975, 0.9875, 0.995, 0.999, 1 - 1e-5, 1 - 1e-10]
    return [{"p": p, "ppf": float(stats.norm.ppf(p))} for p in ps]


def agreement_stats(j, h, classes):
    out = {
        "cohen_kappa": cohen_kappa_score(j, h),
        "weighted_kappa_linear": cohen_kappa_score(
            j, h, weights="linear", labels=list(range(min(classes), max(classes) + 1))),
        "weighted_kappa_quadratic": cohen_kappa_score(
            j, h, weights="quadratic", labels=list(range(min(classes), max(classes) + 1))),
    }
    for level in ["nominal", "ordinal", "interval"]:
        try:
            a = krippendorff.alpha(reliability_data=[j, h], level_of_measurement=level,
                                   value_domain=classes if level == "ordinal" else None)
        except Exception:
            a = float("nan")
        out[f"alpha_{level}"] = a
    prec = precision_score(h, j, labels=classes, average=None, zero_division=np.nan)
    rec = recall_score(h, j, labels=classes, average=None, zero_division=np.nan)
    for c, p, r in zip(classes, prec, rec):
        out[f"precision[{c}]"] = p
        out[f"recall[{c}]"] = r
    return {k: (None if np.isnan(float(v)) else float(v)) for k, v in out.items()}


def agreement_cases(rng):
    cases = []
    for n, topics, resamples in [(60, 12, 200), (120, 25, 120)]:
        human = rng.integers(0, 4, size=n)
        judge = np.clip(human + rng.integers(-1, 2, size=n) * (rng.uniform(size=n) < 0.4), 0, 3)
        groups = np.sort(rng.integers(0, topics, size=n))
        # every topic present, numbered 0..topics-1 in order
        _, groups = np.unique(groups, return_inverse=True)
        classes = sorted(set(human.tolist()) | set(judge.tolist()))
        draws = [rng.integers(0, n, size=n).tolist() for _ in range(resamples)]
        stats_full = agreement_stats(judge.tolist(), human.tolist(), classes)
        bounds = {}
        for name in stats_full:
            values = []
            for d in draws:
                v = agreement_stats(judge[d].tolist(), human[d].tolist(), classes).get(name)
                if v is not None and np.isfinite(v):
                    values.append(v)
            bounds[name] = [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)),
                            len(values)]
        cases.append({"judge": judge.tolist(), "human": human.tolist(),
                      "groups": groups.tolist(), "draws": draws,
                      "statistics": stats_full, "intervals": bounds})
    return cases


def ranking_case(rng):
    runs, topics, resamples = 6, 20, 300
    quality = rng.uniform(size=runs)
    human = np.clip(quality[:, None] + 0.3 * rng.normal(size=(runs, topics)), 0, 1)
    judge = np.clip(human + 0.15 * rng.normal(size=(runs, topics)), 0, 1)
    draws = [rng.integers(0, topics, size=topics).tolist() for _ in range(resamples)]

    def tau(idx):
        return stats.kendalltau(judge[:, idx].mean(1), human[:, idx].mean(1)).statistic

    values = [tau(d) for d in draws]
    values = [v for v in values if np.isfinite(v)]
    return {"judge": judge.tolist(), "human": human.tolist(), "draws": draws,
            "tau": float(tau(list(range(topics)))),
            "low": float(np.percentile(values, 2.5)), "high": float(np.percentile(values, 97.5)),
            "resamples": len(values)}


# ---- qrels, runs and what `ragscope calibrate` must print ----

def write_trec(rng, out):
    topics = [f"q{t}" for t in range(1, 41)]
    pool = {q: [f"d{q}_{i}" for i in range(15)] for q in topics}
    truth = {q: {d: int(rng.integers(0, 4)) for d in pool[q]} for q in topics}
    judge = {q: {d: int(np.clip(g + rng.choice([-1, 0, 0, 0, 1]), 0, 3))
                 for d, g in truth[q].items()} for q in topics}
    human = {}
    for q in topics:
        u = rng.uniform()
        if u < 0.45:  # fully graded topics
            human[q] = dict(truth[q])
        elif u < 0.6:  # half graded: incomplete, so unlabelled for --unit query
            human[q] = {d: g for d, g in truth[q].items() if rng.uniform() < 0.5}
    runs = {}
    for r, name in enumerate(["bm25", "dense", "hybrid"]):
        lines, ranked = [], {}
        for q in topics:
            # better runs put truly relevant documents higher
            score = {d: truth[q][d] * 0.3 * r + rng.normal() for d in pool[q]}
            docs = sorted(pool[q], key=lambda d: -score[d])[:10]
            ranked[q] = {d: float(score[d]) for d in docs}
            for rank, d in enumerate(docs, 1):
                lines.append(f"{q} Q0 {d} {rank} {score[d]:.6f} {name}\n")
        runs[name] = ranked
        with open(os.path.join(out, f"run_{name}.txt"), "w") as f:
            f.writelines(lines)

    def qrels_text(qrels):
        return "".join(f"{q} 0 {d} {g}\n" for q in qrels for d, g in qrels[q].items())

    with open(os.path.join(out, "judge.qrels"), "w") as f:
        f.write(qrels_text(judge))
    with open(os.path.join(out, "human.qrels"), "w") as f:
        f.write(qrels_text(human))
    with open(os.path.join(out, "human_audit.qrels"), "w") as f:
        f.write("# ragscope-sample: disagreements-first\n" + qrels_text(human))
    # scores as written (6 decimals), as the run parser reads them
    runs = {name: {q: {d: float(f"{s:.6f}") for d, s in docs.items()} for q, docs in r.items()}
            for name, r in runs.items()}
    return topics, judge, human, runs


def top_k(docs, k):
    # trec_eval: score descending, ties by docno descending
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:k]


def cli_cases(topics, judge, human, runs, out):
    cases = []
    measures = [("P@5", "P_5", 5, 1), ("nDCG@5", "ndcg_cut_5", 5, 1), ("P(rel=2)@5", "P_5", 5, 2)]
    per_topic = []
    for measure, trec, k, level in measures:
        for name, run in runs.items():
            ev = lambda q, lv: pytrec_eval.RelevanceEvaluator(  # noqa: E731
                q, {trec}, relevance_level=lv).evaluate(run)
            by_judge, by_human = ev(judge, level), ev(human, level)
            per_topic.append({"measure": measure, "run": name,
                              "judge": {q: v[trec] for q, v in sorted(by_judge.items())},
                              "human": {q: v[trec] for q, v in sorted(by_human.items())}})
            for unit in ["query", "item"] if measure.startswith("P") else ["query"]:
                if unit == "query":
                    ids = sorted(by_judge)
                    yhat_all = [by_judge[q][trec] for q in ids]
                    lab = [q for q in ids if q in human and
                           all(d in human[q] for d in top_k(run[q], k))]
                    y = [by_human[q][trec] for q in lab]
                    yhat = [by_judge[q][trec] for q in lab]
                else:
                    yhat_all, y, yhat = [], [], []
                    for q in sorted(run):
                        if q not in judge:
                            continue
                        for d in top_k(run[q], k):
                            jv = float(judge[q].get(d, 0) >= level)
                            yhat_all.append(jv)
                            if q in human and d in human[q]:
                                y.append(float(human[q][d] >= level))
                                yhat.append(jv)
                alpha = 0.05 if measure != "nDCG@5" else 0.1
                e = estimates(np.array(y), np.array(yhat), np.array(yhat_all), alpha)
                lab_n = len(y)
                case = {"measure": measure, "unit": unit, "alpha": alpha, "run": name,
                        "units": len(yhat_all), "labelled": lab_n,
                        "judge": float(np.mean(yhat_all))}
                cases.append({**case, **e})
                if (measure, unit, name) == ("P@5", "item", "bm25"):
                    # a stratified design: topics q1..q19 at weight 2, the rest at 5
                    weight = lambda q: 2.0 if int(q[1:]) < 20 else 5.0  # noqa: E731
                    lines, w = [], []
                    for q in sorted(run):
                        for d in top_k(run[q], k):
                            lines.append(f"{q} {d} {weight(q)}\n")
                            if q in human and d in human[q]:
                                w.append(weight(q))
                    with open(os.path.join(out, "weights_item.txt"), "w") as f:
                        f.writelines(lines)
                    e = estimates(np.array(y), np.array(yhat), np.array(yhat_all), alpha,
                                  np.array(w))
                    cases.append({**case, "weights": "weights_item.txt", **e})
    return cases, per_topic


def cli_agreement(judge, human, runs):
    """What `ragscope calibrate --agreement -m P@5` reports (point values): agreement on the
    items both qrels grade; Kendall tau of the runs' mean P@5 under judge and human qrels on the
    topics every run has labelled (the human graded the whole top 5)."""
    items = [(q, d) for q in human for d in human[q] if q in judge and d in judge[q]]
    j = [judge[q][d] for q, d in items]
    h = [human[q][d] for q, d in items]
    classes = sorted(set(j) | set(h))
    common = [q for q in sorted(human)
              if all(q in r and all(d in human[q] for d in top_k(r[q], 5)) for r in runs.values())]
    means = {}
    for side, qrels in [("judge", judge), ("human", human)]:
        means[side] = []
        for run in runs.values():
            ev = pytrec_eval.RelevanceEvaluator(qrels, {"P_5"}).evaluate(
                {q: run[q] for q in common})
            means[side].append(float(np.mean([ev[q]["P_5"] for q in common])))
    return {"items": len(items), "disagreements": sum(a != b for a, b in zip(j, h)),
            "statistics": agreement_stats(j, h, classes), "topics": len(common),
            "tau": float(stats.kendalltau(means["judge"], means["human"]).statistic)}


def nugget_cases(rng, out):
    """Nuggetizer assignment files by a judge (every topic) and a human (a random 40% of the
    topics of each run), and what `ragscope calibrate --nuggets` must print for them. Per topic
    (Pradeep et al. 2024, section 3): V_strict = supported vital / vital nuggets, A = (supported
    + half the partially supported) / all nuggets; 0 with no nugget of the kind."""
    topics = [str(1000 + i) for i in range(30)]
    labels = ["support", "partial_support", "not_support"]
    judge_lines, human_lines, scores = [], [], {}
    for run in ["run-a", "run-b"]:
        for q in topics:
            k = int(rng.integers(2, 8))
            imp = [str(x) for x in rng.choice(["vital", "okay"], size=k)]
            human = [str(x) for x in rng.choice(labels, size=k, p=[0.4, 0.2, 0.4])]
            judge = [h if rng.uniform() < 0.7 else str(rng.choice(labels)) for h in human]
            for who, assigned, lines in [("judge", judge, judge_lines),
                                         ("human", human, human_lines)]:
                if who == "human" and rng.uniform() >= 0.4:
                    continue
                nuggets = [{"text": f"q{q} nugget {i}", "importance": imp[i],
                            "assignment": assigned[i]} for i in range(k)]
                lines.append(json.dumps({"query": f"question {q}", "qid": q,
                                         "answer_text": "an answer", "run_id": run,
                                         "nuggets": nuggets}) + "\n")
                vital = [a for i, a in enumerate(assigned) if imp[i] == "vital"]
                v_strict = sum(a == "support" for a in vital) / len(vital) if vital else 0.0
                s = {"support": 1.0, "partial_support": 0.5}
                a_score = sum(s.get(a, 0.0) for a in assigned) / k
                scores[(who, run, q)] = {"V_strict": v_strict, "A": a_score}
    for name, lines in [("judge_nuggets.jsonl", judge_lines), ("human_nuggets.jsonl", human_lines)]:
        with open(os.path.join(out, name), "w") as f:
            f.writelines(lines)
    cases = []
    for measure in ["V_strict", "A"]:
        for run in ["run-a", "run-b"]:
            yhat_all = [scores[("judge", run, q)][measure] for q in topics]
            lab = [q for q in topics if ("human", run, q) in scores]
            y = [scores[("human", run, q)][measure] for q in lab]
            yhat = [scores[("judge", run, q)][measure] for q in lab]
            e = estimates(np.array(y), np.array(yhat), np.array(yhat_all), 0.05)
            cases.append({"measure": measure, "run": run, "units": len(topics),
                          "labelled": len(lab), "judge": float(np.mean(yhat_all)), **e})
    return cases


def pairwise_cases(rng, out):
    """RAGElo pairwise CSVs by a judge (every game) and a human (a random 40% of the games), and
    what `ragscope calibrate --pairwise -m win_rate` must print: per pair of agents (first
    appearance order), the units are the games between them, valued as the first agent's score
    (RAGElo's mapping: win 1, tie 0.5, loss 0)."""
    agents = ["alpha", "beta", "gamma"]
    strength = {"alpha": 0.6, "beta": 0.0, "gamma": -0.4}
    pairs = [("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")]
    judge_rows, human_rows, games = [], [], []
    for q in range(25):
        for x, y in pairs:
            for a, b in [(x, y), (y, x)]:
                p_a = 1 / (1 + np.exp(-(strength[a] - strength[b] + 0.2)))
                u = rng.uniform()
                human = "A" if u < p_a * 0.85 else ("C" if u < p_a * 0.85 + 0.15 else "B")
                judge = human if rng.uniform() < 0.7 else str(rng.choice(["A", "B", "C"]))
                judge_rows.append(f"q{q},{a},{b},{judge}\n")
                labelled = rng.uniform() < 0.4
                if labelled:
                    human_rows.append(f"q{q},{a},{b},{human}\n")
                games.append((a, b, judge, human if labelled else None))
    for name, rows in [("judge_pairwise.csv", judge_rows), ("human_pairwise.csv", human_rows)]:
        with open(os.path.join(out, name), "w") as f:
            f.write("qid,agent_a,agent_b,answer\n")
            f.writelines(rows)

    def score(first, a, verdict):
        s = {"A": 1.0, "B": 0.0, "C": 0.5}[verdict]
        return s if a == first else 1.0 - s

    cases = []
    for x, y in pairs:
        mine = [g for g in games if {g[0], g[1]} == {x, y}]
        yhat_all = [score(x, g[0], g[2]) for g in mine]
        y_lab = [score(x, g[0], g[3]) for g in mine if g[3] is not None]
        yhat = [score(x, g[0], g[2]) for g in mine if g[3] is not None]
        e = estimates(np.array(y_lab), np.array(yhat), np.array(yhat_all), 0.05)
        cases.append({"run": f"{x} vs {y}", "units": len(mine), "labelled": len(y_lab),
                      "judge": float(np.mean(yhat_all)), **e})
    return cases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(40)

    def dump(name, value):
        with open(os.path.join(out, name), "w") as f:
            json.dump(value, f, indent=1)
            f.write("\n")

    dump("ppi_mean.json", {"cases": ppi_cases(rng)})
    dump("normal_quantile.json", {"cases": quantiles()})
    dump("agreement_bootstrap.json", {"cases": agreement_cases(rng)})
    dump("ranking_tau.json", ranking_case(rng))
    topics, judge, human, runs = write_trec(rng, out)
    cases, per_topic = cli_cases(topics, judge, human, runs, out)
    dump("calibrate_cli.json", {"cases": cases,
                                "agreement": cli_agreement(judge, human, runs),
                                "nugget_cases": nugget_cases(rng, out),
                                "pairwise_cases": pairwise_cases(rng, out)})
    dump("per_topic.json", {"cases": per_topic})


if __name__ == "__main__":
    main()
