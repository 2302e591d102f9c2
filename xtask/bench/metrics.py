"""`cargo xtask bench metrics`: ragscope vs pytrec_eval vs ranx, end to end, in one run.

Generates a 1,000-query x 1,000-doc run with graded qrels (deterministic, ~38 MB), then times
nDCG@10, MAP, MRR, P@10 and R@100 including parsing, each tool in its own process (so peak RSS
is the tool's own), and prints medians and ratios. Run by xtask in a venv it creates.
"""
import argparse, ast, json, os, random, resource, statistics, subprocess, sys, time

MEASURES_TREC = ["-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank", "-m", "P.10", "-m", "recall.100"]


def generate(folder, queries=1000, docs=1000, seed=20261120):
    run_path, qrels_path = os.path.join(folder, "bench.run"), os.path.join(folder, "bench.qrels")
    if os.path.exists(run_path) and os.path.exists(qrels_path):
        return run_path, qrels_path
    rng = random.Random(seed)
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for q in range(queries):
            qid = f"q{q:04d}"
            pool = rng.sample(range(100_000), docs + 100)
            # Scores with some ties, as real runs have.
            scores = sorted((round(rng.uniform(0, 30), 3) for _ in range(docs)), reverse=True)
            for rank, (d, s) in enumerate(zip(pool[:docs], scores), 1):
                run.write(f"{qid} Q0 doc{d:06d} {rank} {s} bench\n")
            judged = rng.sample(pool[:docs], 150) + pool[docs:]
            for d in judged:
                rel = rng.choices([0, 1, 2, 3], weights=[70, 15, 10, 5])[0]
                qrels.write(f"{qid} 0 doc{d:06d} {rel}\n")
    return run_path, qrels_path


def generate_sized(folder, queries, docs=1000, seed=20261122):
    """A run shaped like an MS MARCO dev run from Anserini (7-digit qids and docnos, six-decimal
    scores, ~40 bytes a line), so 7,000 queries x 1,000 docs is ~280 MB; qrels with 250
    judgments per query (150 retrieved, 100 not)."""
    run_path = os.path.join(folder, f"sized-{queries}.run")
    qrels_path = os.path.join(folder, f"sized-{queries}.qrels")
    if os.path.exists(run_path) and os.path.exists(qrels_path):
        return run_path, qrels_path
    rng = random.Random(seed)
    with open(run_path + ".tmp", "w") as run, open(qrels_path + ".tmp", "w") as qrels:
        for q in range(queries):
            qid = str(1_000_000 + q * 7)
            pool = rng.sample(range(8_841_823), docs + 100)
            scores = sorted((round(rng.uniform(0, 30), 6) for _ in range(docs)), reverse=True)
            run.write("".join(f"{qid} Q0 {d} {rank} {s:.6f} Anserini\n"
                              for rank, (d, s) in enumerate(zip(pool[:docs], scores), 1)))
            judged = rng.sample(pool[:docs], 150) + pool[docs:]
            qrels.write("".join(f"{qid} 0 {d} {rng.choices([0, 1, 2, 3], weights=[70, 15, 10, 5])[0]}\n"
                                for d in judged))
    os.replace(run_path + ".tmp", run_path)
    os.replace(qrels_path + ".tmp", qrels_path)
    return run_path, qrels_path


def sized_tools(a, qrels_path, run_path):
    """Each tool as (command, extra environment)."""
    measures = ["--measures", "nDCG@10,MAP,MRR,P@10,R@100"]
    tools = {
        "trec-eval": ([a.ragscope, "trec-eval", *MEASURES_TREC, qrels_path, run_path], {}),
        "eval": ([a.ragscope, "eval", "--qrels", qrels_path, *measures, run_path], {}),
        # one thread: CPU per line without the second thread's share of a hyperthreaded core.
        # Set in the environment, not with `env`, so no second exec adds to the start-up.
        "eval 1 thread": ([a.ragscope, "eval", "--qrels", qrels_path, *measures, run_path], {"RAGSCOPE_THREADS": "1"}),
    }
    if not a.no_pytrec:
        tools["pytrec_eval"] = ([sys.executable, "-c", PYTREC, qrels_path, run_path], {})
    return tools


def one_line_files(a):
    run_path, qrels_path = os.path.join(a.folder, "one-line.run"), os.path.join(a.folder, "one-line.qrels")
    with open(run_path, "w") as f:
        f.write("1000000 Q0 7 1 12.500000 Anserini\n")
    with open(qrels_path, "w") as f:
        f.write("1000000 0 7 1\n")
    return run_path, qrels_path


def sizes(a):
    """Time per line from ~1 MB to ~280 MB runs (`bench metrics --sizes`): is it flat?

    Each timing of a tool on a sized run is paired with one, just before, on a one-line run:
    the process's fixed cost (exec, dynamic linking, argument parsing, interpreter start),
    which no parser change can remove. The `net` columns are the median of those paired
    differences. And the sizes are timed in sweeps, each sweep timing every size, so that drift
    in the shared VM's speed over the minutes of a run falls on all sizes alike. Both matter at
    1 MB, where the difference is a few milliseconds against a start-up of about as much: a
    first version timed the start-up once, then each size in a block of its own, and read
    1.18-1.24 of the 41 MB run's per-line cost at 1.2 MB on a VM where paired rounds read
    1.07-1.13; the same version read 0.65-0.83 at 290 MB in a block timed at a higher load."""
    counts = [int(q) for q in a.sizes.split(",")]
    one_run, one_qrels = one_line_files(a)
    sized = []
    for queries in counts:
        run_path, qrels_path = generate_sized(a.folder, queries)
        size = os.path.getsize(run_path)
        # A 1 MB run takes a few milliseconds, where a scheduler tick is a large share: many
        # timings for the short ones (medians), one a sweep for pytrec_eval's 9 s at 290 MB.
        timings = 101 if size < 5e6 else 25 if size < 20e6 else 9 if size < 50e6 else 1
        sized.append((queries, size, sized_tools(a, qrels_path, run_path), timings))
    start_tools = sized_tools(a, one_qrels, one_run)
    sweeps = max(a.repeat, 7)
    walls, cpus, nets, starts, faults = ({(q, n): [] for q, _, tools, _ in sized for n in tools} for _ in range(5))
    for q, _, tools, _ in sized:
        for n in tools:
            timed(*start_tools[n])
            timed(*tools[n])
    for sweep in range(sweeps):
        for q, size, tools, timings in sized:
            for _ in range(-(-timings // sweeps)):
                for n in tools:
                    timed(*start_tools[n])
                    start_cpu, start_faults = CPU[-1], FAULTS[-1]
                    walls[q, n].append(timed(*tools[n])[0])
                    cpus[q, n].append(CPU[-1])
                    nets[q, n].append(CPU[-1] - start_cpu)
                    starts[q, n].append(start_cpu)
                    faults[q, n].append(FAULTS[-1] - start_faults)
        print(f"sweep {sweep + 1}/{sweeps} done, load {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for queries, size, tools, _ in sized:
        lines = queries * 1000
        rss = {n: peak_rss(*tools[n]) for n in tools}
        med = {n: statistics.median(walls[queries, n]) for n in tools}
        cpu = {n: statistics.median(cpus[queries, n]) for n in tools}
        net = {n: statistics.median(nets[queries, n]) for n in tools}
        start = {n: statistics.median(starts[queries, n]) for n in tools}
        fault = {n: statistics.median(faults[queries, n]) for n in tools}
        rows.append((queries, size, lines, med, rss, cpu, net, fault))
        print(f"{queries:>6} queries, {size / 1e6:7.1f} MB, {len(walls[queries, next(iter(tools))])} timings: " + ", ".join(
            f"{n} {med[n]:.3f} s wall, {cpu[n]:.4f} s CPU (start-up {start[n] * 1e3:.2f} ms; net {net[n] / lines * 1e9:.0f} ns/line, "
            f"{fault[n] / lines * 1e3:.1f} page faults per 1,000 lines; peak {rss[n] / size:.2f}x file)"
            for n in tools), flush=True)
    ref = next((r for r in rows if r[0] == 1000), rows[0])
    names = list(rows[0][3])
    print(f"\n{'queries':>7} {'run MB':>8} " + " ".join(
        f"{n + ' wall s':>18} {'CPU s':>7} {'CPU ns/line':>11} {'net ns/line':>11} {'net vs 1000q':>12} {'faults/1k':>9} {'RSS MB':>8} {'RSS/file':>8}" for n in names))
    for queries, size, lines, med, rss, cpu, net, fault in rows:
        cells = []
        for n in names:
            per = net[n] / lines
            ref_per = ref[6][n] / ref[2]
            cells.append(f"{med[n]:18.3f} {cpu[n]:7.3f} {cpu[n] / lines * 1e9:11.0f} {per * 1e9:11.0f} {per / ref_per:12.2f} "
                         f"{fault[n] / lines * 1e3:9.1f} {rss[n] / 1e6:8.1f} {rss[n] / size:8.2f}")
        print(f"{queries:>7} {size / 1e6:8.1f} " + " ".join(cells))
    if "pytrec_eval" in names:
        print("\nvs pytrec_eval (wall; CPU): " + "; ".join(
            f"{q} queries: trec-eval {m['pytrec_eval'] / m['trec-eval']:.1f}x; {c['pytrec_eval'] / c['trec-eval']:.1f}x, "
            f"eval {m['pytrec_eval'] / m['eval']:.1f}x; {c['pytrec_eval'] / c['eval']:.1f}x"
            for q, _, _, m, _, c, _, _ in rows))


CPU = []
FAULTS = []


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, r.ru_minflt


def timed(cmd, env=None):
    """Wall seconds and output of one child process; its CPU seconds (user + system, all
    threads) go to CPU[-1]: on a shared, loaded machine they vary far less than wall time."""
    c0, f0 = cpu_of_children()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, **env) if env else None)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    c1, f1 = cpu_of_children()
    CPU.append(c1 - c0)
    FAULTS.append(f1 - f0)
    # communicate() reaped the child; its rusage comes from the children total delta instead.
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {err.decode()[-2000:]}")
    return wall, out.decode()


def peak_rss(cmd, env=None):
    pid = os.fork()
    if pid == 0:
        if env:
            os.environ.update(env)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execvp(cmd[0], cmd)
    _, status, rusage = os.wait4(pid, 0)
    return rusage.ru_maxrss * 1024


PYTREC = r"""
import sys, time, pytrec_eval
qrels_path, run_path = sys.argv[1:3]
t0 = time.perf_counter()
with open(qrels_path) as f: qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f: run = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"})
res = ev.evaluate(run)
n = len(res)
means = {m: sum(r[m] for r in res.values()) / n for m in ["ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100"]}
print(repr(means))
"""

RANX = r"""
import sys, ranx
qrels_path, run_path = sys.argv[1:3]
qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
run = ranx.Run.from_file(run_path, kind="trec")
print(repr(ranx.evaluate(qrels, run, ["ndcg@10", "map", "mrr", "precision@10", "recall@100"], threads=1)))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ragscope", required=True)
    ap.add_argument("--wasm-node", help="node script running the wasm engine on the same input")
    ap.add_argument("--folder", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", help="comma-separated query counts for the time-per-line curve")
    ap.add_argument("--no-pytrec", action="store_true", help="with --sizes: ragscope only")
    ap.add_argument("--no-ranx", action="store_true", help="leave ranx out (slow to install and run)")
    ap.add_argument("--baseline", help="another ragscope binary (an earlier build), timed alongside")
    a = ap.parse_args()
    os.makedirs(a.folder, exist_ok=True)
    if a.sizes:
        return sizes(a)
    run_path, qrels_path = generate(a.folder)
    size = os.path.getsize(run_path)
    print(f"input: {run_path} ({size / 1e6:.1f} MB), {qrels_path}")

    tools = {
        "ragscope trec-eval": [a.ragscope, "trec-eval", *MEASURES_TREC, qrels_path, run_path],
        "ragscope eval": [a.ragscope, "eval", "--qrels", qrels_path, "--measures", "nDCG@10,MAP,MRR,P@10,R@100", run_path],
        "ragscope eval (1 thread)": ["env", "RAGSCOPE_THREADS=1", a.ragscope, "eval", "--qrels", qrels_path, "--measures", "nDCG@10,MAP,MRR,P@10,R@100", run_path],
        "pytrec_eval": [sys.executable, "-c", PYTREC, qrels_path, run_path],
        "ranx (threads=1)": [sys.executable, "-c", RANX, qrels_path, run_path],
    }
    if a.no_ranx:
        del tools["ranx (threads=1)"]
    if a.baseline:
        tools["baseline trec-eval"] = [a.baseline, *tools["ragscope trec-eval"][1:]]
        tools["baseline eval"] = [a.baseline, *tools["ragscope eval"][1:]]
    if a.wasm_node:
        tools["ragscope wasm (node)"] = ["node", a.wasm_node, qrels_path, run_path]
    # One warm-up each (ranx compiles with numba on first use; page cache), then alternate
    # tools in each round so noise on this shared machine hits all of them alike.
    warm = {name: timed(cmd)[1] for name, cmd in tools.items()}
    # A speed figure for wrong numbers is worthless: the values must equal pytrec_eval's first.
    check_values(a.ragscope, qrels_path, run_path, warm)
    walls = {name: [] for name in tools}
    cpus = {name: [] for name in tools}
    inside = []
    for _ in range(a.repeat):
        for name, cmd in tools.items():
            wall, out = timed(cmd)
            walls[name].append(wall)
            cpus[name].append(CPU[-1])
            if name == "ragscope wasm (node)":
                inside.append(json.loads(out.strip().splitlines()[-1])["evaluate_s"])
    rss = {name: peak_rss(cmd) for name, cmd in tools.items()}
    base = statistics.median(walls["pytrec_eval"])
    base_cpu = statistics.median(cpus["pytrec_eval"])
    print(f"load (uptime): {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"\n{'tool':32} {'median s':>9} {'vs pytrec_eval':>15} {'CPU s':>7} {'CPU vs pytrec':>14} {'peak RSS MB':>12} {'RSS / run file':>15}")
    for name in tools:
        med, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:32} {med:9.3f} {base / med:14.1f}x {cpu:7.3f} {base_cpu / cpu:13.1f}x {rss[name] / 1e6:12.1f} {rss[name] / size:15.2f}")
    if a.wasm_node:
        native = statistics.median(walls["ragscope eval (1 thread)"])
        wasm_all, wasm_in = statistics.median(walls["ragscope wasm (node)"]), statistics.median(inside)
        print(f"\nwasm / native single-threaded: {wasm_all / native:.2f}x as whole processes "
              f"(node start-up and reading included); {wasm_in / native:.2f}x for evaluate() alone "
              f"({wasm_in:.3f} s: copying into wasm memory, parsing, scoring)")
    # The headline: the worst reading beside the median (rounds alternate the tools, so each
    # round's ratio compares readings taken seconds apart).
    for name in tools:
        if name == "pytrec_eval" or not name.startswith("ragscope"):
            continue
        ratios = [p / t for p, t in zip(walls["pytrec_eval"], walls[name])]
        print(f"headline: {name} is {base / statistics.median(walls[name]):.1f}x pytrec_eval in wall time "
              f"(median of {len(ratios)} rounds; worst round {min(ratios):.1f}x, best {max(ratios):.1f}x)")
    print(json.dumps({n: statistics.median(w) for n, w in walls.items()}))


# trec_eval's names (pytrec_eval's keys) and the CLI's names of the timed measures.
CHECKED = [("ndcg_cut_10", "nDCG@10"), ("map", "MAP"), ("recip_rank", "MRR"), ("P_10", "P@10"), ("recall_100", "R@100")]


def check_values(ragscope, qrels_path, run_path, warm):
    """Exits non-zero unless ragscope's values equal pytrec_eval's on the timed workload:
    `eval --format json` within 1e-12 and `trec-eval`'s 4-decimal output to its rounding."""
    want = ast.literal_eval(warm["pytrec_eval"].strip().splitlines()[-1])
    out = subprocess.run([ragscope, "eval", "--qrels", qrels_path, "--format", "json", "--measures",
                          ",".join(n for _, n in CHECKED), run_path],
                         check=True, capture_output=True, text=True).stdout
    got = json.loads(out)["runs"][0]["summary"]
    trec = {}
    for line in warm["ragscope trec-eval"].splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == "all":
            trec[f[0]] = f[2]
    bad = []
    for key, name in CHECKED:
        if abs(got[name] - want[key]) > 1e-12:
            bad.append(f"eval {name} {got[name]!r} vs pytrec_eval {want[key]!r}")
        if trec.get(key) != f"{want[key]:.4f}":
            bad.append(f"trec-eval {key} {trec.get(key)} vs pytrec_eval {want[key]:.4f}")
    if bad:
        sys.exit("ragscope's values differ from pytrec_eval's on the timed workload:\n  " + "\n  ".join(bad))
    print("values: ragscope eval equals pytrec_eval within 1e-12 and trec-eval to its 4 decimals on "
          + ", ".join(n for _, n in CHECKED))


if __name__ == "__main__":
    main()
