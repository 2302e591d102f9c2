"""Oracle for eRAG as a registered measure (`ragscope eval/compare --erag-outcomes`): a small
fixture (qrels, two runs, an outcomes file in the format `ragscope answer --erag` writes) and the
expected per-topic values of eRAG-P@k and eRAG-success@k (Salemi & Zamani, SIGIR 2024: each
passage scored by the downstream metric of the answer generated from it alone; P = sum of the
top-k scores / k, success = their max), computed here independently: runs ranked as trec_eval
does (score descending, then docno descending), ROUGE-L from the PyPI `rouge-score` package, the
substring / exact match from the lost-in-the-middle repository's `metrics.py`.

    python tests/oracle/rouge/generate_erag.py --out crates/cli/tests/fixtures/erag
"""

import argparse
import json
import math
import os
import statistics

from generate import best_subspan_em, exact_match, rouge_l

GOLDS = {
    "q1": ["Paris"],
    "q2": ["George Washington", "Washington"],
    "q3": ["1969"],
    "q4": ["blue whale"],
}

# qid -> docno -> (answer generated from that passage alone, or None) and, for answers missing,
# a stored (score, metric).
ANSWERS = {
    "q1": {"d1": "Paris", "d2": "The capital of France is Paris.", "d3": "NO-RESPONSE",
           "d4": "Lyon", "d5": "paris, france\nmore"},
    "q2": {"d1": "Washington", "d2": "John Adams", "d3": "George Washington was the first",
           "d4": "NO-RESPONSE"},
    "q3": {"d1": "July 20, 1969", "d2": "1968", "d3": "in the year 1969 the moon"},
}
STORED = {"q3": {"d4": (0.25, "rouge_l")}}

QRELS = [("q1", "d1", 1), ("q1", "d2", 1), ("q1", "d3", 0), ("q2", "d1", 1), ("q2", "d4", 0),
         ("q3", "d1", 1), ("q3", "d3", 1), ("q4", "d1", 1)]

RUNS = {
    "run_a": [("q1", "d1", 9.0), ("q1", "d3", 8.0), ("q1", "d2", 7.5), ("q1", "d9", 7.0),
              ("q2", "d2", 5.0), ("q2", "d1", 4.0), ("q2", "d3", 3.0),
              ("q3", "d4", 2.0), ("q3", "d1", 1.5), ("q3", "d2", 1.0), ("q3", "d3", 0.5),
              ("q4", "d1", 1.0)],
    "run_b": [("q1", "d5", 3.0), ("q1", "d4", 3.0), ("q1", "d3", 2.0),
              ("q2", "d3", 9.0), ("q2", "d4", 8.0), ("q2", "d2", 7.0), ("q2", "d1", 6.0),
              ("q3", "d2", 5.0), ("q3", "d3", 4.0)],
}

MEASURES = [("eRAG-P@2", "P", "substring", 2), ("eRAG-success@2", "success", "substring", 2),
            ("eRAG-P@5", "P", "substring", 5), ("eRAG-P(metric=em)@3", "P", "em", 3),
            ("eRAG-success(metric=em)@3", "success", "em", 3),
            ("eRAG-P(metric=rouge_l)@3", "P", "rouge_l", 3),
            ("eRAG-success(metric=rouge_l)@4", "success", "rouge_l", 4)]

METRICS = {"substring": best_subspan_em, "em": exact_match, "rouge_l": rouge_l}


def passage_score(qid, docno, metric):
    answer = ANSWERS.get(qid, {}).get(docno)
    if answer is not None:
        return METRICS[metric](answer.split("\n")[0], GOLDS[qid])
    stored = STORED.get(qid, {}).get(docno)
    if stored is not None and stored[1] == metric:
        return stored[0]
    return None


def ranking(run, qid):
    rows = [(d, s) for q, d, s in RUNS[run] if q == qid]
    rows.sort(key=lambda r: r[0], reverse=True)
    rows.sort(key=lambda r: r[1], reverse=True)
    return [d for d, _ in rows]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = args.out
    with open(os.path.join(out, "qrels.txt"), "w") as f:
        for q, d, r in QRELS:
            f.write(f"{q} 0 {d} {r}\n")
    for run, rows in RUNS.items():
        with open(os.path.join(out, f"{run}.txt"), "w") as f:
            for rank, (q, d, s) in enumerate(rows, 1):
                f.write(f"{q} Q0 {d} {rank} {s} {run}\n")
    with open(os.path.join(out, "outcomes.jsonl"), "w") as f:
        for qid in sorted(set(ANSWERS) | set(STORED)):
            passages = {}
            for d, a in ANSWERS.get(qid, {}).items():
                passages[d] = {"text": f"passage {d}", "is_relevant": True, "no_res_prob": 0.5, "erag": best_subspan_em(a.split("\n")[0], GOLDS[qid]),
                               "erag_answer": a, "erag_metric": "substring"}
            for d, (s, m) in STORED.get(qid, {}).items():
                passages[d] = {"text": f"passage {d}", "is_relevant": False, "no_res_prob": 0.5, "erag": s, "erag_metric": m}
            line = {"qid": qid, "dataset": "toy", "question": f"question {qid}", "answers": GOLDS[qid],
                    "passages": passages, "contexts": [{"passages": list(passages)[:2], "outcome": "wrong"}],
                    "model": "toy-model"}
            f.write(json.dumps(line) + "\n")
    topics = sorted({q for q, _, _ in QRELS})
    expected = {"generator": "tests/oracle/rouge/generate_erag.py", "measures": [m[0] for m in MEASURES], "runs": {}}
    for run in RUNS:
        per_topic, unscored = {}, {}
        for qid in topics:
            ranked = ranking(run, qid)
            if not ranked:
                continue  # eval (without -c) scores only topics the run has
            values = {}
            for name, agg, metric, k in MEASURES:
                scores = [passage_score(qid, d, metric) for d in ranked[:k]]
                unscored[name] = unscored.get(name, 0) + sum(s is None for s in scores)
                scores = [0.0 if s is None else s for s in scores]
                values[name] = sum(scores) / k if agg == "P" else max(scores + [0.0])
            per_topic[qid] = values
        means = {name: sum(v[name] for v in per_topic.values()) / len(per_topic) for name, *_ in MEASURES}
        expected["runs"][run] = {"per_topic": per_topic, "mean": means, "unscored": unscored}
    # `compare` scores every qrels topic (trec_eval -c: a missing topic is an empty ranking, 0)
    # and tests each run against the baseline (run_a) with the paired t statistic.
    compare = {}
    for name, *_ in MEASURES:
        cols = {run: [expected["runs"][run]["per_topic"].get(q, {}).get(name, 0.0) for q in topics] for run in RUNS}
        d = [b - a for a, b in zip(cols["run_a"], cols["run_b"])]
        sd = statistics.stdev(d)
        compare[name] = {"mean": {run: sum(c) / len(c) for run, c in cols.items()},
                         "difference": sum(d) / len(d),
                         "t": (sum(d) / len(d)) / (sd / math.sqrt(len(d))) if sd > 0 else None}
    expected["compare"] = compare
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
