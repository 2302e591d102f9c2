"""Oracle fixtures for ragscope's nugget scores (crates/eval/src/answers/nugget_scores.rs).

Generates nuggetizer assignment files (many topics, 0-30 nuggets, missing importance, nuggetizer's
"failed" importance and assignment, more than 20 nuggets, empty answers, lines with and without
response_length) and records what the packages' own scoring code computes on them:

- nuggetizer==0.0.5: nuggetizer/core/metrics.py calculate_nugget_scores and
  calculate_global_metrics (per topic and the run's "all" line).
- open-rag-eval==0.3.0: AutoNuggetMetric._score_and_sort_nuggets (stable vital-first sort, keep 20;
  its LLM call answered by a stub that returns the file's labels) then
  AutoNuggetMetric._evaluate_answer on the kept nuggets and their assignments. open-rag-eval has
  no run score; the run mean recorded is statistics.mean of its per-topic scores.
- paper mode: the definitions of Pradeep et al. (arXiv 2411.09607) written out below in Python,
  independently of the Rust code.

Both packages are installed from PyPI with --no-deps: their full dependency trees (open-rag-eval
0.3.0 pins torch==2.7.1, transformers, streamlit, langchain, llama_index, unstructured[pdf]...;
nuggetizer 0.0.5 needs openai, tiktoken, flask...) are gigabytes and none of it is used by the
scoring code. The scoring modules are loaded by file path, with the packages' __init__ modules
(which import every judge and model backend) replaced by empty modules.

    python tests/oracle/answers/generate.py --out crates/eval/tests/fixtures/answers
"""

import argparse
import importlib.util
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import types

PACKAGES = ["nuggetizer==0.0.5", "open-rag-eval==0.3.0"]


def ensure_packages():
    site = sysconfig.get_paths()["purelib"]
    have = os.path.exists(os.path.join(site, "nuggetizer", "core", "metrics.py")) and os.path.exists(
        os.path.join(site, "open_rag_eval", "metrics", "autonugget_metric.py"))
    if not have:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               "--no-deps", *PACKAGES])
    return site


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def empty_package(name, path):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module


citation = None


def load_scorers(site):
    global citation
    metrics = load("nuggetizer_metrics", os.path.join(site, "nuggetizer", "core", "metrics.py"))
    ore = os.path.join(site, "open_rag_eval")
    empty_package("open_rag_eval", ore)
    empty_package("open_rag_eval.metrics", os.path.join(ore, "metrics"))
    empty_package("open_rag_eval.models", os.path.join(ore, "models"))
    judges = types.ModuleType("open_rag_eval.models.llm_judges")
    judges.LLMJudgeModel = object  # only used as a type annotation
    sys.modules["open_rag_eval.models.llm_judges"] = judges
    empty_package("open_rag_eval.data_classes", os.path.join(ore, "data_classes"))
    load("open_rag_eval.data_classes.rag_results", os.path.join(ore, "data_classes", "rag_results.py"))
    load("open_rag_eval.metrics.base_metrics", os.path.join(ore, "metrics", "base_metrics.py"))
    auto = load("open_rag_eval.metrics.autonugget_metric", os.path.join(ore, "metrics", "autonugget_metric.py"))
    citation = load("open_rag_eval.metrics.citation_metric", os.path.join(ore, "metrics", "citation_metric.py"))
    return metrics, auto, citation


class LabelStub:
    """Answers AutoNuggetMetric's importance prompts (batches of 10) with the file's labels."""

    def __init__(self, labels):
        self.batches = [labels[i:i + 10] for i in range(0, len(labels), 10)]

    def parse(self, prompt, response_format=None, model_kwargs=None):
        batch = self.batches.pop(0)
        return {"response": types.SimpleNamespace(importance=batch, refusal=None), "metadata": {}}


class SupportStub:
    """Answers CitationMetric's prompts with pseudo-random support labels."""

    def __init__(self, rng):
        self.rng = rng
        self.log = []

    def parse(self, prompt, response_format=None, model_kwargs=None):
        label = self.rng.choice(["full_support", "partial_support", "no_support"])
        self.log.append(label)
        support = citation.CitationSupportValues(label)
        return {"response": types.SimpleNamespace(support=support, refusal=None), "metadata": {}}


def results_csv(rng, auto, rag_results, path):
    """An Open RAG Eval results CSV (TRECEvaluator.to_csv's columns, json.dumps'd cells) whose
    citation scores come from CitationMetric.compute and nugget scores from _evaluate_answer."""
    import csv
    expected = []
    rows = []
    for q in range(6):
        qid = f"query_{q + 1}"
        row = {"query_id": qid, "query": f"question {q + 1}?"}
        for run in (1, 2):
            prefix = f"run_{run}_"
            passages = {f"[{i}]": words(rng, 3, 8) for i in range(1, 5)}
            parts = []
            for p in range(rng.randint(1, 4)):
                cites = sorted(rng.sample(range(1, 7), rng.randint(0, 3)))  # [5], [6] are missing
                parts.append(rag_results.GeneratedAnswerPart(text=words(rng, 2, 9), citations=[f"[{c}]" for c in cites]))
            result = rag_results.RAGResult(
                retrieval_result=rag_results.RetrievalResult(query=row["query"], retrieved_passages=passages),
                generation_result=rag_results.AugmentedGenerationResult(query=row["query"], generated_answer=parts))
            stub = SupportStub(rng)
            scores = citation.CitationMetric(stub).compute(result)
            # The raw judgments in call order (citations of missing passages are never judged).
            labels_iter = iter(stub.log)
            judgments = [[[c, next(labels_iter) if c in passages else None] for c in p.citations]
                         for p in parts]
            scores.pop("token_usage")
            nuggets = [f"{qid} run {run} nugget {i}" for i in range(rng.randint(0, 24))]
            labels = [rng.choice(["vital", "okay"]) for _ in nuggets]
            metric = auto.AutoNuggetMetric(model=LabelStub(labels))
            (kept, kept_labels), _ = metric._score_and_sort_nuggets(row["query"], nuggets)
            assignments = [rng.choice(["support", "partial_support", "not_support"]) for _ in kept]
            nugget_scores = metric._evaluate_answer(kept, kept_labels, assignments) if kept else None
            answered = rng.choice(["yes", "yes", "no"])
            row[prefix + "retrieved_passages"] = json.dumps(passages)
            row[prefix + "generated_answer"] = json.dumps([{"text": p.text, "citations": p.citations} for p in parts])
            row[prefix + "retrieval_score_umbrela_scores"] = json.dumps({k: rng.randint(0, 3) for k in passages})
            row[prefix + "generation_score_autonugget_scores"] = json.dumps(
                {"nuggetizer_scores": nugget_scores, "nuggets": kept, "labels": kept_labels,
                 "assignments": assignments} if kept else {})
            row[prefix + "generation_score_citation_scores"] = json.dumps(scores)
            row[prefix + "generation_score_citation_f1_score"] = json.dumps(scores["f1"])
            row[prefix + "generation_score_no_answer_score"] = json.dumps({"query_answered": answered})
            expected.append({"query_id": qid, "run": run, "precision": scores["weighted_precision"],
                             "recall": scores["weighted_recall"], "f1": scores["f1"],
                             "answered": answered, "nuggetizer_scores": nugget_scores,
                             "judgments": judgments})
        rows.append(row)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return expected


def words(rng, lo, hi):
    vocab = ["python", "data", "web", "the", "is", "used", "for", "analysis", "and", "of", "toddler",
             "potty", "every", "hours", "sun", "moon"]
    return " ".join(rng.choice(vocab) for _ in range(rng.randint(lo, hi)))


def generate_run(rng, run_id, n_topics, with_run_id):
    records = []
    for t in range(n_topics):
        qid = f"{1000 + t}"
        n = rng.choice([0, 1, 2, 3, 5, 8, 10, 12, 15, 19, 20, 21, 22, 25, 28, 30])
        nuggets = []
        for i in range(n):
            nug = {"text": f"q{qid} nugget {i}: {words(rng, 1, 4)}"}
            r = rng.random()
            if r < 0.08:
                pass  # missing importance: vital
            elif r < 0.11:
                nug["importance"] = "failed"
            else:
                nug["importance"] = "vital" if rng.random() < 0.45 else "okay"
            a = rng.random()
            nug["assignment"] = ("support" if a < 0.35 else "partial_support" if a < 0.6
                                 else "not_support" if a < 0.96 else "failed")
            nuggets.append(nug)
        empty = rng.random() < 0.1
        answer = "" if empty else words(rng, 3, 60)
        rec = {"query": f"question {qid}", "qid": qid, "answer_text": answer}
        if rng.random() < 0.6:
            rec["response_length"] = len(answer.split()) + rng.randint(0, 5)
        if with_run_id:
            rec["run_id"] = run_id
        rec["nuggets"] = nuggets
        records.append(rec)
    return records


def paper_scores(nuggets, answer_text):
    """The paper's definitions (arXiv 2411.09607 §3), written independently of the Rust code."""
    def s(n):
        return {"support": 1.0, "partial_support": 0.5}.get(n["assignment"], 0.0)

    def strict(n):
        return 1.0 if n["assignment"] == "support" else 0.0

    vital = [n for n in nuggets if n.get("importance", "vital") == "vital"]
    okay = [n for n in nuggets if n.get("importance", "vital") == "okay"]

    def frac(items, f):
        return sum(f(n) for n in items) / len(items) if items else 0.0

    def weighted(f):
        den = len(vital) + 0.5 * len(okay)
        return (sum(f(n) for n in vital) + 0.5 * sum(f(n) for n in okay)) / den if den else 0.0

    return {"A": frac(nuggets, s), "A_strict": frac(nuggets, strict), "V": frac(vital, s),
            "V_strict": frac(vital, strict), "W": weighted(s), "W_strict": weighted(strict),
            "L": float(len(answer_text.split()))}


def with_default_importance(nuggets):
    # A nugget without importance loads as vital (REFERENCE.md §4, nuggetizer's convention).
    return [dict(n, importance=n.get("importance", "vital")) for n in nuggets]


def nuggetizer_scores(metrics, rec):
    m = metrics.calculate_nugget_scores(rec["qid"], with_default_importance(rec["nuggets"]))
    paper = paper_scores(rec["nuggets"], rec["answer_text"])
    length = rec.get("response_length", len(rec["answer_text"].split()))
    return {"A": m.all_score, "A_strict": m.strict_all_score, "V": m.vital_score,
            "V_strict": m.strict_vital_score, "W": paper["W"], "W_strict": paper["W_strict"],
            "L": float(length)}


def ore_scores(auto, rec):
    nuggets = with_default_importance(rec["nuggets"])
    texts = [n["text"] for n in nuggets]
    labels = [n["importance"] for n in nuggets]
    metric = auto.AutoNuggetMetric(model=LabelStub(labels))
    (kept, kept_labels), _ = metric._score_and_sort_nuggets(rec["query"], texts)
    by_text = {n["text"]: n["assignment"] for n in nuggets}
    scores = metric._evaluate_answer(kept, kept_labels, [by_text[t] for t in kept])
    return {"A": scores["All"], "A_strict": scores["All Strict"], "V": scores["Vital"],
            "V_strict": scores["Vital Strict"], "W": scores["Weighted"],
            "W_strict": scores["Weighted Strict"], "L": float(len(rec["answer_text"].split()))}


def mean_of(topics):
    keys = ["A", "A_strict", "V", "V_strict", "W", "W_strict", "L"]
    return {k: statistics.mean(t[k] for t in topics.values()) for k in keys}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)  # CitationMetric logs every citation of a missing passage
    site = ensure_packages()
    metrics, auto, citation = load_scorers(site)
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(20241122)
    runs = [("run-alpha", True), ("run-beta", False), ("run-gamma", True)]
    expected = {"source": "tests/oracle/answers/generate.py: nuggetizer==0.0.5 core/metrics.py, "
                          "open-rag-eval==0.3.0 AutoNuggetMetric, paper definitions",
                "files": [], "modes": {"paper": [], "nuggetizer": [], "open-rag-eval": []}}
    for run_id, with_run_id in runs:
        records = generate_run(rng, run_id, 24, with_run_id)
        name = f"{run_id}.jsonl"
        with open(os.path.join(args.out, name), "w") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")
        expected["files"].append(name)
        per_mode = {
            "paper": {r["qid"]: paper_scores(r["nuggets"], r["answer_text"]) for r in records},
            "nuggetizer": {r["qid"]: nuggetizer_scores(metrics, r) for r in records},
            "open-rag-eval": {r["qid"]: ore_scores(auto, r) for r in records},
        }
        # nuggetizer's own run line ("qid": "all") for its four scores.
        glob = metrics.calculate_global_metrics(
            [dict(r, nuggets=with_default_importance(r["nuggets"])) for r in records])
        for mode, topics in per_mode.items():
            entry = {"run_id": run_id, "mean": mean_of(topics), "topics": topics}
            if mode == "nuggetizer":
                entry["nuggetizer_all"] = glob
            expected["modes"][mode].append(entry)
    rag_results = sys.modules["open_rag_eval.data_classes.rag_results"]
    expected["ore_results"] = results_csv(rng, auto, rag_results, os.path.join(args.out, "ore_results.csv"))
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
