"""`cargo xtask bench python`: in-process evaluation from Python on the 1,000-query x 1,000-doc
workload of `bench metrics` (metrics.generate): ragscope's pytrec_eval drop-in vs
pytrec-eval-terrier, ranx (cold: its first call JIT-compiles; warm) and ir_measures, dict in and
dict out (the conversion of Python objects counts), plus ragscope from files and DataFrames.

Each tool runs in its own process (peak RSS is its own), `--repeat` timed calls after one
warm-up (none for "cold"); medians and the worst reading are printed, never asserted.
"""
import argparse, json, os, resource, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from metrics import generate  # noqa: E402

TREC = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"}
NAMES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]


def read(qrels_path, run_path):
    qrels, run = {}, {}
    for line in open(qrels_path):
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    for line in open(run_path):
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return qrels, run


def tool(name, qrels_path, run_path):
    """A callable doing one evaluation, and whether it needs a warm-up."""
    if name == "ragscope (files)":
        import ragscope

        return lambda: ragscope.evaluate(qrels_path, run_path, NAMES, per_query=True)
    qrels, run = read(qrels_path, run_path)
    if name == "ragscope.pytrec_eval":
        from ragscope.pytrec_eval import RelevanceEvaluator

        return lambda: RelevanceEvaluator(qrels, TREC).evaluate(run)
    if name == "pytrec_eval":
        from pytrec_eval import RelevanceEvaluator

        return lambda: RelevanceEvaluator(qrels, TREC).evaluate(run)
    if name == "ragscope (DataFrame)":
        import pandas as pd
        import ragscope

        qdf = pd.DataFrame([(q, d, r) for q, ds in qrels.items() for d, r in ds.items()], columns=["query_id", "doc_id", "relevance"])
        rdf = pd.DataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()], columns=["query_id", "doc_id", "score"])
        return lambda: ragscope.evaluate(qdf, rdf, NAMES, per_query=True)
    if name.startswith("ranx"):
        import ranx

        metrics = ["ndcg@10", "map", "mrr", "precision@10", "recall@100"]
        # dict in, per-query dict out (ranx keeps per-query scores in the Run)
        def f():
            r = ranx.Run(run)
            ranx.evaluate(ranx.Qrels(qrels), r, metrics)
            return r.scores

        return f
    if name == "ir_measures":
        import ir_measures

        ms = [ir_measures.parse_measure(m) for m in ["nDCG@10", "AP", "RR", "P@10", "R@100"]]
        return lambda: list(ir_measures.iter_calc(ms, qrels, run))
    raise SystemExit(f"unknown tool {name}")


def one(name, qrels_path, run_path, repeat):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    f = tool(name, qrels_path, run_path)
    times = []
    if name != "ranx (cold, JIT)":
        f()
    else:
        repeat = 1
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"times": times, "rss_mb": (peak - before) / 1024}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--one")
    ap.add_argument("--qrels")
    ap.add_argument("--run")
    a = ap.parse_args()
    if a.one:
        return one(a.one, a.qrels, a.run, a.repeat)
    os.makedirs(a.folder, exist_ok=True)
    run_path, qrels_path = generate(a.folder)
    names = ["ragscope.pytrec_eval", "pytrec_eval", "ragscope (files)", "ragscope (DataFrame)", "ranx (cold, JIT)", "ranx (warm)", "ir_measures"]
    results = {}
    for n in names:
        out = subprocess.run(
            [sys.executable, __file__, "--folder", a.folder, "--one", n, "--qrels", qrels_path, "--run", run_path, "--repeat", str(a.repeat)],
            check=True, capture_output=True, text=True,
        ).stdout
        results[n] = json.loads(out.strip().splitlines()[-1])
        r = results[n]
        print(f"{n:24} median {statistics.median(r['times']):8.3f} s  worst {max(r['times']):8.3f} s  peak RSS +{r['rss_mb']:.0f} MB", flush=True)
    base = statistics.median(results["pytrec_eval"]["times"])
    print(f"\n{'tool':24} {'median s':>9} {'worst s':>9} {'vs pytrec_eval':>15} {'RSS MB':>7}")
    for n, r in results.items():
        med = statistics.median(r["times"])
        print(f"{n:24} {med:9.3f} {max(r['times']):9.3f} {base / med:14.1f}x {r['rss_mb']:7.0f}")


if __name__ == "__main__":
    main()
