"""Fixtures for the tournament and agreement code of crates/eval (answers/, stats/agreement.rs).

Oracles, all independent of ragscope:
- PyPI ragelo 0.7.0's EloRanker, run on a real ragelo Experiment built from the games (its own
  PairwiseGame sorting, game_id collapse and int() truncation), with random.shuffle replaced by
  either the identity (file order) or recorded permutations;
- a Bradley-Terry MLE by scipy.optimize (Newton trust-region on the log-likelihood), not MM;
- scikit-learn's cohen_kappa_score, the krippendorff package's alpha, scipy's kendalltau.

Run: tests/oracle/tournament/.venv/bin/python tests/oracle/tournament/generate.py --out DIR
(`cargo xtask oracle` does, into crates/eval/tests/fixtures/tournament).
"""

import json
import logging
import os
import random
import sys
import tempfile
import warnings

import krippendorff
import numpy as np
import scipy.optimize
import scipy.stats
from sklearn.metrics import cohen_kappa_score

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from ragelo import Experiment  # noqa: E402
from ragelo.agent_rankers.elo_ranker import EloRanker  # noqa: E402
from ragelo.types.configurations import EloAgentRankerConfig  # noqa: E402
from ragelo.types.answer_formats import PairwiseEvaluationAnswer  # noqa: E402
from ragelo.types.results import PairwiseGameEvaluatorResult  # noqa: E402
import ragelo.agent_rankers.elo_ranker as elo_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SHARED = os.path.join(ROOT, "..", "shared", "data", "ragelo")


def read_pairwise_csv(path):
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, skipinitialspace=True))
    return [(r["qid"], r["agent_a"].lstrip(), r["agent_b"].lstrip(), r["answer"].strip()) for r in rows]


def ragelo_elo(games, tournaments, permutations=None, k=32, initial=1000):
    """ragelo 0.7.0 EloRanker on an Experiment holding `games` (qid, agent_a, agent_b, verdict)."""
    tmp = tempfile.mkdtemp()
    exp = Experiment(
        experiment_name="oracle",
        save_path=os.path.join(tmp, "e.json"),
        save_on_disk=False,
        rich_print=False,
    )
    for qid, a, b, _ in games:
        exp.add_query(f"query {qid}", query_id=qid, should_save=False)
        for agent in (a, b):
            exp.add_agent_answer(f"answer of {agent}", agent=agent, query_id=qid, exist_ok=True, should_save=False)
    for qid, a, b, verdict in games:
        query = exp[qid]
        game = query.get_pairwise_game(a, b) or query.add_pairwise_game(a, b)
        result = PairwiseGameEvaluatorResult(
            qid=qid,
            agent_a=a,
            agent_b=b,
            evaluator_name="pairwise",
            answer=PairwiseEvaluationAnswer(
                answer_a_analysis="", answer_b_analysis="", comparison_reasoning="", winner=verdict),
        )
        exp.add_evaluation((query, game), result, should_save=False, exist_ok=True, should_print=False)
    config = EloAgentRankerConfig(tournaments=tournaments, elo_k=k, initial_score=initial, rich_print=False)
    ranker = EloRanker(config)
    perms = iter(permutations or [])

    def shuffle(items):
        if permutations is None:
            return
        p = next(perms)
        items[:] = [items[i] for i in p]

    saved = elo_module.random.shuffle
    elo_module.random.shuffle = shuffle
    try:
        result = ranker.run(exp)
    finally:
        elo_module.random.shuffle = saved
    schedule = [(q, a, b, w) for q, a, b, w in ranker.evaluations]
    return {
        "ratings": {a: {"rating": result.scores[a], "std": result.std_dev[a]} for a in result.agents},
        "schedule": schedule,
    }


def random_games(rng, n_queries, agents, both_orders, p_tie=0.2, skill=None):
    games = []
    for q in range(n_queries):
        qid = f"q{q}"
        for i in range(len(agents)):
            for j in range(i + 1, len(agents)):
                orders = [(agents[i], agents[j]), (agents[j], agents[i])] if both_orders else [
                    (agents[i], agents[j]) if rng.random() < 0.5 else (agents[j], agents[i])
                ]
                for a, b in orders:
                    sa = skill[a] if skill else 0
                    sb = skill[b] if skill else 0
                    p_a = 1 / (1 + 10 ** ((sb - sa) / 400))
                    u = rng.random()
                    if u < p_tie:
                        v = "C"
                    elif rng.random() < p_a:
                        v = "A"
                    else:
                        v = "B"
                    games.append((qid, a, b, v))
    rng.shuffle(games)
    return games


def elo_cases(rng):
    cases = []
    for name, path in [
        ("tests_data", os.path.join(SHARED, "tests_data", "pairwise_answers_evaluations.csv")),
        ("notebook", os.path.join(SHARED, "notebooks", "pairwise_answers_evaluations.csv")),
    ]:
        games = read_pairwise_csv(path)
        for t in (1, 10):
            out = ragelo_elo(games, t)
            cases.append({"name": f"{name}_noshuffle_t{t}", "file": os.path.relpath(path, ROOT), "tournaments": t,
                          "permutations": None, "expected": out["ratings"]})
    # Generated: names out of alphabetical order in the file, both orders, ties, repeats.
    agents = ["zeta", "alpha", "Mid", "beta_2", "beta_10"]
    skill = {"zeta": 120, "alpha": -40, "Mid": 10, "beta_2": 60, "beta_10": -150}
    for index, both in enumerate([True, False, True]):
        games = random_games(rng, 6 + 3 * index, agents, both, skill=skill)
        if index == 2:
            games = games + games[:7]  # exact repeats: ragelo keeps the first verdict only
        for t, shuffled in ((1, False), (4, True)):
            perms = None
            if shuffled:
                n = len(ragelo_elo(games, 1)["schedule"])
                perms = [list(rng.permutation(n).tolist()) for _ in range(t)]
            out = ragelo_elo(games, t, perms, k=24 if index == 1 else 32, initial=1000 if index != 1 else 1500)
            cases.append({
                "name": f"generated{index}_t{t}_{'perm' if shuffled else 'noshuffle'}",
                "games": [list(g) for g in games],
                "k": 24 if index == 1 else 32,
                "initial": 1000 if index != 1 else 1500,
                "tournaments": t,
                "permutations": perms,
                "expected": out["ratings"],
            })
    return cases


def bt_oracle(agents, games, initial):
    """Bradley-Terry MLE (ties half a win each) by scipy's trust-region Newton on theta = ln pi."""
    index = {a: i for i, a in enumerate(agents)}
    n = len(agents)
    w = np.zeros((n, n))
    for _, a, b, v in games:
        s = {"A": 1.0, "B": 0.0, "C": 0.5}[v]
        w[index[a], index[b]] += s
        w[index[b], index[a]] += 1 - s
    m = w + w.T

    def nll(theta):
        d = theta[:, None] - theta[None, :]
        return -np.sum(w * (d - np.logaddexp(0, d)))

    def grad(theta):
        p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
        return -(w.sum(1) - (m * p).sum(1))

    def hess(theta):
        p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
        h = m * p * (1 - p)
        return np.diag(h.sum(1)) - h

    res = scipy.optimize.minimize(nll, np.zeros(n), jac=grad, hess=hess, method="trust-exact",
                                  options={"gtol": 1e-12, "maxiter": 10000})
    theta = res.x - res.x.mean()
    r = 400 * theta / np.log(10)
    r = r - r.mean() + initial
    return {a: float(r[index[a]]) for a in agents}


def bt_cases(rng):
    cases = []
    games = read_pairwise_csv(os.path.join(SHARED, "notebooks", "pairwise_answers_evaluations.csv"))
    agents = list(dict.fromkeys([g[1] for g in games] + [g[2] for g in games]))
    cases.append({"name": "notebook", "file": "../shared/data/ragelo/notebooks/pairwise_answers_evaluations.csv",
                  "initial": 1000, "expected": bt_oracle(agents, games, 1000)})
    for index in range(3):
        names = [f"agent{i}" for i in range(3 + 2 * index)]
        skill = {a: float(rng.normal(0, 150)) for a in names}
        games = random_games(rng, 5 + 5 * index, names, index != 1, p_tie=0.15, skill=skill)
        agents = list(dict.fromkeys([g[1] for g in games] + [g[2] for g in games]))
        initial = 1000 if index else 1200
        cases.append({"name": f"generated{index}", "games": [list(g) for g in games], "initial": initial,
                      "expected": bt_oracle(agents, games, initial)})
    return cases


def label_case(name, a, b):
    a, b = np.asarray(a), np.asarray(b)
    labels = list(range(int(min(a.min(), b.min())), int(max(a.max(), b.max())) + 1))
    data = np.array([a, b], dtype=float)
    return {
        "name": name,
        "a": a.tolist(),
        "b": b.tolist(),
        "cohen": float(cohen_kappa_score(a, b)),
        "linear": float(cohen_kappa_score(a, b, weights="linear", labels=labels)),
        "quadratic": float(cohen_kappa_score(a, b, weights="quadratic", labels=labels)),
        "alpha_nominal": float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")),
        "alpha_ordinal": float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")),
        "alpha_interval": float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval")),
    }


def agreement_cases(rng):
    # umbrela's ensemble test judges (shared/data/umbrela/ensemble_case_inputs.json), d0..d3.
    cases = [label_case("umbrela_judges", [2, 1, 2, 3], [1, 1, 3, 3])]
    for index, (n, grades) in enumerate([(40, 4), (200, 4), (25, 2), (120, 3)]):
        a = rng.integers(0, grades, n)
        noise = rng.integers(-1, 2, n) * (rng.random(n) < 0.4)
        b = np.clip(a + noise, 0, grades - 1)
        if index == 3:
            b = np.where(b == 1, 2, b)  # a grade only one side uses
        cases.append(label_case(f"labels{index}", a, b))
    return cases


def kendall(x, y):
    t = scipy.stats.kendalltau(x, y, variant="b").statistic
    return None if np.isnan(t) else float(t)


def run_agreement_cases(rng):
    cases = []
    for index in range(3):
        runs = [f"run{i}" for i in range(4 + 3 * index)]
        topics = [f"t{i}" for i in range(5 + 4 * index)]
        quality = rng.random(len(runs))
        cells = []
        for r, run in enumerate(runs):
            for topic in topics:
                if rng.random() < 0.1:
                    continue  # a topic the run was not scored on
                x = float(np.clip(quality[r] + rng.normal(0, 0.2), 0, 1))
                y = float(np.clip(x + rng.normal(0, 0.15), 0, 1))
                if index == 2:
                    x, y = round(x * 4) / 4, round(y * 4) / 4  # ties
                cells.append([topic, run, x, y])
        runs_seen = sorted({c[1] for c in cells})
        means_a = [np.mean([c[2] for c in cells if c[1] == r]) for r in runs_seen]
        means_b = [np.mean([c[3] for c in cells if c[1] == r]) for r in runs_seen]
        per_topic = []
        for topic in sorted({c[0] for c in cells}):
            xs = [c[2] for c in cells if c[0] == topic]
            ys = [c[3] for c in cells if c[0] == topic]
            if len(xs) >= 2:
                t = kendall(xs, ys)
                if t is not None:
                    per_topic.append(t)
        cases.append({
            "name": f"runs{index}",
            "cells": cells,
            "run_means": kendall(means_a, means_b),
            "runs": len(runs_seen),
            "all_pairs": kendall([c[2] for c in cells], [c[3] for c in cells]),
            "per_topic": float(np.mean(per_topic)),
            "topics": len(per_topic),
        })
    return cases


def main():
    args = sys.argv[1:]
    out = args[args.index("--out") + 1] if "--out" in args else os.path.join(
        ROOT, "crates", "eval", "tests", "fixtures", "tournament")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261122)
    random.seed(0)
    for name, cases in [
        ("ragelo_elo.json", elo_cases(rng)),
        ("bradley_terry.json", bt_cases(rng)),
        ("agreement_labels.json", agreement_cases(rng)),
        ("agreement_runs.json", run_agreement_cases(rng)),
    ]:
        with open(os.path.join(out, name), "w") as f:
            json.dump({"generator": "tests/oracle/tournament/generate.py", "cases": cases}, f, indent=1)
            f.write("\n")
        print(f"wrote {name}: {len(cases)} cases")


if __name__ == "__main__":
    main()
