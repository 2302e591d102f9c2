"""The Pythonic API against ir_measures, ranx and scipy (the oracles)."""

import gzip
import random
import resource
import shutil

import ir_measures
import pandas as pd
import pytest
import ranx
import scipy.stats

import ragscope
from conftest import read_dicts

IRM = ["nDCG@10", "nDCG", "AP", "P@5", "P(rel=2)@5", "R@100", "Rprec", "Success@1", "Bpref", "Judged@10", "AP(rel=2)"]


def test_calc_aggregate_equals_ir_measures(data):
    qrels, run = read_dicts(data / "qrels.test", data / "results.test")
    measures = [ir_measures.parse_measure(m) for m in IRM]
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    ours = ragscope.calc_aggregate(measures, qrels, run)
    assert set(ours) == set(measures)  # keyed as the caller wrote them
    for m in measures:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-9), str(m)
    # string names stay strings
    assert set(ragscope.calc_aggregate(["AP", "nDCG@10"], qrels, run)) == {"AP", "nDCG@10"}


def test_iter_calc_equals_ir_measures_with_a_topic_missing_from_the_run(data):
    qrels, run = read_dicts(data / "qrels.test", data / "results.test")
    run.pop(sorted(run)[0])
    measures = [ir_measures.parse_measure(m) for m in ["AP", "nDCG@10", "P@5"]]
    theirs = {(r.query_id, str(r.measure)): r.value for r in ir_measures.iter_calc(measures, qrels, run)}
    ours = {(r.query_id, str(r.measure)): r.value for r in ragscope.iter_calc(measures, qrels, run)}
    assert ours.keys() == theirs.keys()
    for k in theirs:
        assert ours[k] == pytest.approx(theirs[k], abs=1e-9), k


def untied(seed):
    rnd = random.Random(seed)
    qrels = {f"q{q}": {f"d{d}": rnd.choice([0, 1, 2]) for d in rnd.sample(range(200), 30)} for q in range(40)}
    run = {f"q{q}": {f"d{d}": rnd.random() for d in rnd.sample(range(200), 100)} for q in range(40)}
    return qrels, run


def test_evaluate_equals_ranx_on_untied_runs():
    qrels, run = untied(0)
    # few metrics: ranx JIT-compiles each one (most of this suite's time in a fresh venv)
    metrics = ["ndcg@10", "map@100", "precision@5-l2"]
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics)
    ours = ragscope.evaluate(qrels, run, metrics)
    assert list(ours) == metrics
    for m in metrics:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-9), m
    # ranx objects as inputs
    again = ragscope.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics)
    assert again == pytest.approx(ours)


def test_files_gzip_and_dataframes_give_the_dict_values(data, tmp_path):
    qrels, run = read_dicts(data / "qrels.test", data / "results.test")
    want = ragscope.evaluate(qrels, run, ["AP", "nDCG@10"], per_query=True)
    assert ragscope.evaluate(data / "qrels.test", str(data / "results.test"), ["AP", "nDCG@10"], per_query=True) == want
    gz = tmp_path / "results.test.gz"
    with open(data / "results.test", "rb") as f, gzip.open(gz, "wb") as g:
        shutil.copyfileobj(f, g)
    assert ragscope.evaluate(data / "qrels.test", gz, ["AP", "nDCG@10"], per_query=True) == want
    qdf = pd.DataFrame([(q, d, r) for q, ds in qrels.items() for d, r in ds.items()], columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()], columns=["q_id", "doc_id", "score"])
    assert ragscope.evaluate(qdf, rdf, ["AP", "nDCG@10"], per_query=True) == want
    frame = ragscope.evaluate(qrels, run, ["AP"], per_query=True, as_frame=True)
    assert list(frame.columns) == ["query_id", "measure", "value"] and len(frame) == len(want)
    agg = ragscope.evaluate(qrels, run, ["AP", "NumRet"], as_frame=True)
    assert agg.set_index("measure")["value"]["NumRet"] == sum(len(d) for q, d in run.items() if q in qrels)


def test_bad_files_raise_format_error_with_place(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 high r\n")
    with pytest.raises(ragscope.FormatError, match=r"bad\.run:2") as e:
        ragscope.evaluate({"1": {"a": 1}}, bad, "AP")
    assert isinstance(e.value, ValueError)
    short = tmp_path / "short.qrels"
    short.write_text("1 0 a 1\n1 0 b\n")
    with pytest.raises(ragscope.FormatError, match=r"short\.qrels:2"):
        ragscope.evaluate(short, {"1": {"a": 1.0}}, "AP")
    with pytest.raises(ragscope.FormatError, match="whitespace"):
        ragscope.evaluate({"1": {"a b": 1}}, {"1": {"a": 1.0}}, "AP")
    dup = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(ragscope.FormatError, match=r"<DataFrame>:3:.*duplicate docno 'a'"):
        ragscope.evaluate({"1": {"a": 1}}, dup, "AP")
    with pytest.raises(FileNotFoundError):
        ragscope.evaluate(tmp_path / "missing.qrels", {"1": {"a": 1.0}}, "AP")
    empty = tmp_path / "empty.run"
    empty.write_text("")
    assert ragscope.evaluate({"1": {"a": 1}}, empty, "AP", per_query=True) == {}
    with pytest.raises(ValueError, match="unknown measure"):
        ragscope.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, "nope@3")


def test_parse_measure_prints_back_as_it_parsed():
    m = ragscope.parse_measure("nDCG(gain=exp)@10")
    assert str(m) == "nDCG(gain=exp)@10" and ragscope.parse_measure(str(m)) == m
    assert ragscope.parse_measure("ndcg@10") == "nDCG@10"
    assert ragscope.parse_measure(ir_measures.parse_measure("RR@10")) == "RR@10"
    with pytest.raises(ValueError):
        ragscope.parse_measure("nDCG@0")


def test_compare_uses_the_paired_tests_of_scipy():
    qrels, a = untied(1)
    _, b = untied(2)
    _, c = untied(3)
    report = ragscope.compare(qrels, {"a": a, "b": b, "c": c}, ["AP", "nDCG@10"], test="t", correction="none")
    per = {n: ragscope.evaluate(qrels, r, ["AP"], per_query=True, complete=True) for n, r in [("a", a), ("b", b)]}
    x = [per["a"][q]["AP"] for q in sorted(per["a"])]
    y = [per["b"][q]["AP"] for q in sorted(per["a"])]
    assert report.p_values["b"]["AP"] == pytest.approx(scipy.stats.ttest_rel(y, x).pvalue, rel=1e-9)
    w = ragscope.compare(qrels, {"a": a, "b": b}, ["AP"], test="wilcoxon", correction="none")
    assert w.p_values["b"]["AP"] == pytest.approx(scipy.stats.wilcoxon(y, x).pvalue, rel=1e-6)
    holm = ragscope.compare(qrels, {"a": a, "b": b, "c": c}, ["AP"], correction="holm")
    raw = sorted([report.p_values["b"]["AP"], report.p_values["c"]["AP"]])
    assert min(holm.p_values["b"]["AP"], holm.p_values["c"]["AP"]) == pytest.approx(min(1.0, 2 * raw[0]))
    assert report.means["a"]["AP"] == pytest.approx(ragscope.evaluate(qrels, a, "AP", complete=True)["AP"])
    assert list(report.to_dataframe().index) == ["a", "b", "c"]
    assert "| system | AP | nDCG@10 |" in report.to_markdown()
    assert r"\begin{tabular}" in report.to_latex()
    assert str(report).splitlines()[0].split() == ["system", "AP", "nDCG@10"]


def test_tie_report_reads_files(data):
    _, run = read_dicts(data / "qrels.test", data / "results.test")
    assert ragscope.tie_report(data / "results.test", 10) == ragscope.tie_report(run, 10)


def test_tie_report_names_ties_across_the_cutoff():
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0}, "q2": {"a": 2.0, "b": 1.0, "c": 0.5}}
    ties = ragscope.tie_report(run, 2)
    assert ties == [ragscope.TieGroup("q1", 2.0, 2, 4, ["d"], ["c", "b"])]
    # the tie policy decides the measure: trec_eval keeps d (docno descending) inside the top 2
    assert ragscope.evaluate({"q1": {"b": 1}}, run, "P@2", per_query=True)["q1"]["P@2"] == 0.0
    assert ragscope.tie_report(run, 4) == []


def test_help_is_useful():
    doc = ragscope.evaluate.__doc__
    assert "nDCG@10" in doc and "per_query" in doc and "DataFrame" in doc


def test_a_thousand_evaluate_calls_keep_rss_flat(data):
    qrels, run = read_dicts(data / "qrels.test", data / "results.test")
    from ragscope.pytrec_eval import RelevanceEvaluator

    ev = RelevanceEvaluator(qrels, {"official"})

    def rss_kib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() // 1024

    for _ in range(100):
        ev.evaluate(run)
        ragscope.evaluate(qrels, run, ["AP", "nDCG@10"])
    before = rss_kib()
    for _ in range(1000):
        ev.evaluate(run)
        ragscope.evaluate(qrels, run, ["AP", "nDCG@10"])
    grown = rss_kib() - before
    # one result dict is ~50 KiB; a leak of one per call would be ~50 MiB
    assert grown < 4096, f"RSS grew {grown} KiB over 1,000 calls"


def test_ir_measures_provider_gives_ir_measures_values(data):
    qrels, run = read_dicts(data / "qrels.test", data / "results.test")
    measures = [ir_measures.parse_measure(m) for m in ["nDCG@10", "AP", "P@5", "P(rel=2)@5", "R@100", "Rprec", "Bpref", "Judged@10", "nDCG(dcg='exp-log2')@10"]]
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    p = ragscope.register_ir_measures()
    try:
        assert all(p.supports(m) for m in measures)
        ours = p.calc_aggregate(measures, qrels, run)
        via_pipeline = ir_measures.calc_aggregate(measures, qrels, run)
    finally:
        ir_measures.DefaultPipeline.providers.remove(p)
    for m in measures:
        # ir_measures serves nDCG(dcg='exp-log2') from a backend that prints 4 decimals per query
        tol = 5e-5 if "exp-log2" in str(m) else 1e-9
        assert ours[m] == pytest.approx(theirs[m], abs=tol), str(m)
        assert via_pipeline[m] == pytest.approx(ours[m], abs=1e-12), str(m)
