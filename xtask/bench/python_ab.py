"""Two ragscope wheels side by side (an A/B of one change), not run by xtask: in the venv of
`cargo xtask bench python`, put each build's `ragscope` package first on PYTHONPATH and run

    PYTHONPATH=OLD python xtask/bench/python_ab.py old   # then NEW ... new, alternating
    python xtask/bench/python_ab.py pytrec_eval

on the bench's 1,000 x 1,000 workload (target/bench/metrics). Prints the median and worst of 5
calls (after one warm-up) of constructing the evaluator (the qrels) and of the whole call
`RelevanceEvaluator(qrels, measures).evaluate(run)`.
"""
import os, statistics, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from metrics import generate  # noqa: E402

run_path, qrels_path = generate(os.path.join(HERE, "..", "..", "target", "bench", "metrics"))
qrels, run = {}, {}
for line in open(qrels_path):
    q, _, d, r = line.split()
    qrels.setdefault(q, {})[d] = int(r)
for line in open(run_path):
    q, _, d, _, s, _ = line.split()
    run.setdefault(q, {})[d] = float(s)
if sys.argv[1] == "pytrec_eval":
    from pytrec_eval import RelevanceEvaluator
else:
    from ragscope.pytrec_eval import RelevanceEvaluator
TREC = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"}


def timed(f, n=5):
    f()
    xs = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        xs.append(time.perf_counter() - t)
    return statistics.median(xs), max(xs)


for what, f in [("construct", lambda: RelevanceEvaluator(qrels, TREC)),
                ("whole call", lambda: RelevanceEvaluator(qrels, TREC).evaluate(run))]:
    med, worst = timed(f)
    print(f"{sys.argv[1]:12s} {what:10s} median {med:.3f} worst {worst:.3f}", flush=True)
