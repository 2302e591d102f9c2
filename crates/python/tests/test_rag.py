"""The RAG half against the CLI: each function's dicts must equal `ragscope <command> --format
json` on the anchors' data (../shared/data) and the repository's fixtures. The CLI's values are
checked against the anchors' own code in crates/cli/tests and crates/eval/tests; here the point
is that the Python package computes the same thing with the same switches.

The CLI binary: $RAGSCOPE_CLI, else target/debug/ragscope (`cargo xtask test` builds it)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import ragscope

ROOT = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("RAGSCOPE_SHARED", ROOT.parent / "shared")) / "data"
ANSWERS = ROOT / "crates/eval/tests/fixtures/answers"
RAG = ROOT / "crates/eval/tests/fixtures/rag"
ERAG = ROOT / "crates/cli/tests/fixtures/erag"


CLI = Path(os.environ.get("RAGSCOPE_CLI", ROOT / "target/debug/ragscope"))


def cli_text(*args, cwd=None):
    """The CLI's stdout; a failure fails the test with its stderr."""
    out = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="session")
def cli():
    path = CLI
    if not path.exists():
        pytest.fail(f"the ragscope CLI is missing: {path} (cargo build -p ragscope-cli, or set RAGSCOPE_CLI)")

    def run(*args, cwd=None):
        return json.loads(cli_text(*args, cwd=cwd))

    return run


def test_nugget_scores_equal_the_cli(cli):
    files = [SHARED / "nuggetizer/assignments.jsonl", ANSWERS / "run-alpha.jsonl", ANSWERS / "run-beta.jsonl"]
    for compat in ["paper", "nuggetizer", "open-rag-eval"]:
        want = cli("nuggets", "score", "--compat", compat, "--per-topic", "--format", "json", *files)
        got = ragscope.nugget_scores(files, compat=compat, per_topic=True)
        assert got == want
        assert len(got["runs"]) >= 3 and got["runs"][0]["topics"]
    # An Open RAG Eval results CSV, its own convention, means only.
    ore = ANSWERS / "ore_results.csv"
    want = cli("nuggets", "score", "--compat", "open-rag-eval", "--format", "json", ore)
    assert ragscope.nugget_scores(ore, compat="open-rag-eval") == want


def test_elo_and_bradley_terry_equal_the_cli(cli):
    csv = SHARED / "ragelo/tests_data/pairwise_answers_evaluations.csv"
    jsonl = SHARED / "ragelo/tests_data/answers_eval.jsonl"
    for games in [csv, jsonl]:
        want = cli("elo", "--format", "json", "--seed", "7", "--tournaments", "5", games)
        got = ragscope.elo(games, seed=7, tournaments=5)
        assert got == want and got["model"] == "elo" and len(got["ratings"]) >= 2
    want = cli("elo", "--format", "json", "--compat", "ragelo", "--no-shuffle", "--k", "16", csv)
    assert ragscope.elo(csv, compat="ragelo", shuffle=False, k=16) == want
    notebook = SHARED / "ragelo/notebooks/pairwise_answers_evaluations.csv"
    for games in [jsonl, notebook]:
        want = cli("elo", "--model", "bradley-terry", "--resamples", "50", "--seed", "3", "--format", "json", games)
        got = ragscope.bradley_terry(games, resamples=50, seed=3)
        assert got == want and got["model"] == "bradley-terry"
    # No MLE when an agent never lost: an error naming the file, as the CLI's.
    with pytest.raises(ragscope.FormatError, match="pairwise_answers_evaluations.csv: the Bradley"):
        ragscope.bradley_terry(csv)
    with pytest.raises(ValueError, match="elo only"):
        ragscope._native.elo_json(str(csv), "bradley-terry", compat="ragelo")


def test_agreement_equals_the_cli(cli, tmp_path):
    a, b = SHARED / "trec_eval/qrels.test", SHARED / "trec_eval/qrels.rel_level"
    for kind in [None, "labels", "grades"]:
        args = [] if kind is None else ["--kind", kind]
        want = cli("agreement", *args, "--format", "json", a, b)
        got = ragscope.agreement(a, b, kind=kind)
        assert got == want and got["statistics"]
    # Per-topic scores of the same runs under two conventions: Kendall τ three ways.
    files = [ANSWERS / f"run-{n}.jsonl" for n in ["alpha", "beta", "gamma"]]
    for compat in ["paper", "nuggetizer"]:
        text = cli_text("nuggets", "score", "--compat", compat, "--per-topic", "--format", "json", *files)
        (tmp_path / f"{compat}.json").write_text(text)
    pa, pb = tmp_path / "paper.json", tmp_path / "nuggetizer.json"
    want = cli("agreement", "--measure", "A", "--format", "json", pa, pb)
    got = ragscope.agreement(pa, pb, measure="A")
    assert got == want and got["kind"] == want["kind"]


def test_citations_equal_the_cli(cli):
    for path in [ANSWERS / "ore_results.csv", ANSWERS / "judge-citations/judgments.jsonl"]:
        want = cli("citations", "--per-answer", "--format", "json", path)
        got = ragscope.citations(path, per_answer=True)
        assert got == want and got["runs"][0]["answers"]
        assert ragscope.citations([path]) == cli("citations", "--format", "json", path)


def test_graded_equals_the_cli(cli):
    qrels, run = SHARED / "umbrela/sample.qrels", SHARED / "umbrela/sample.run"
    for k in [2, 4, 10]:
        for compat in ["trec-eval", "open-rag-eval"]:
            want = cli("graded", "--qrels", qrels, "--k", k, "--compat", compat, "--per-topic", "--format", "json", run)
            assert ragscope.graded(qrels, run, k=k, compat=compat, per_topic=True) == want
    # open-rag-eval skips P@k past the list: None, as the CLI's null.
    assert ragscope.graded(qrels, [run], k=10, compat="open-rag-eval")["runs"][0]["mean"]["P@10"] is None


@pytest.fixture(scope="module")
def udcg_files(cli, tmp_path_factory):
    """run.txt and qrels.txt from the UDCG reference JSON's passages, and u.tsv written by
    `ragscope udcg --utilities-out` (as crates/cli/tests/rag_cli.rs does)."""
    d = tmp_path_factory.mktemp("udcg")
    data = json.loads((SHARED / "udcg/dataset_with_udcg.json").read_text())
    run, qrels = [], []
    for e in data:
        n = len(e["passages"])
        for i, p in enumerate(e["passages"]):
            run.append(f"{e['example_id']} Q0 {p['doc_id']} {i + 1} {n - i} ref\n")
            qrels.append(f"{e['example_id']} 0 {p['doc_id']} {int(p['is_relevant'])}\n")
    (d / "run.txt").write_text("".join(run))
    (d / "qrels.txt").write_text("".join(qrels))
    cli_text("udcg", "--compat", "udcg-ref", "--utilities-out", d / "u.tsv", "-o", d / "filled.json",
             SHARED / "udcg/dataset_with_udcg.json")
    return d


def test_udcg_run_form_equals_the_cli(cli, udcg_files):
    d = udcg_files
    cases = [
        ([], {}),
        (["--compat", "udcg-ref", "--per-query"], {"compat": "udcg-ref", "per_query": True}),
        (["--k", "2", "--gamma", "0", "--binary"], {"k": 2, "gamma": 0, "binary": True}),
        (["--gamma", "1/4", "--complete"], {"gamma": "1/4", "complete": True}),
    ]
    for args, kwargs in cases:
        want = cli("udcg", "--qrels", "qrels.txt", "--utilities", "u.tsv", *args, "--format", "json", "run.txt", cwd=d)
        got = ragscope.udcg(d / "qrels.txt", [d / "run.txt"], utilities=d / "u.tsv", **kwargs)
        # The document names the files as given; everything else must be equal.
        got["qrels"], got["runs"][0]["run"] = want["qrels"], want["runs"][0]["run"]
        assert got == want and got["runs"][0]["summary"]


def test_udcg_reference_form_equals_the_cli(cli, tmp_path):
    src = SHARED / "udcg/dataset_with_udcg.json"
    for args, kwargs in [(["--compat", "udcg-ref"], {"compat": "udcg-ref"}), (["--k", "3", "--compat", "udcg-ref"], {"k": 3, "compat": "udcg-ref"})]:
        out = tmp_path / "out.json"
        cli_text("udcg", *args, "-o", out, src)
        got = ragscope.udcg(src, **kwargs)
        assert got == json.loads(out.read_text()) and got[0]["udcg"]


def test_erag_equals_the_cli(cli):
    measures = json.loads((ERAG / "expected.json").read_text())["measures"]
    want = cli("eval", "--qrels", "qrels.txt", "--erag-outcomes", "outcomes.jsonl", "--measures", ",".join(measures),
               "--per-query", "--format", "json", "run_a.txt", "run_b.txt", cwd=ERAG)
    got = ragscope.erag(ERAG / "qrels.txt", [ERAG / "run_a.txt", ERAG / "run_b.txt"], ERAG / "outcomes.jsonl",
                        measures, per_query=True)
    got["qrels"] = want["qrels"]
    for g, w in zip(got["runs"], want["runs"]):
        g["run"] = w["run"]
    assert got == want and len(got["runs"]) == 2


def test_correlate_equals_the_cli(cli):
    contexts = RAG / "study_contexts.jsonl"
    want = cli("correlate", contexts, "--k", "4", "--resamples", "100", "--seed", "5", "--format", "json")
    got = ragscope.correlate(contexts, k=4, resamples=100, seed=5)
    assert got == want and got
    want = cli("correlate", contexts, "--sensitivity", "2,4", "--resamples", "50", "--format", "json")
    assert ragscope.correlate(contexts, sensitivity=[2, 4], resamples=50) == want


def test_rag_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(ragscope.FormatError, match="bad.jsonl"):
        ragscope.nugget_scores(bad)
    with pytest.raises(ragscope.FormatError, match="missing.csv"):
        ragscope.elo(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="compat"):
        ragscope.graded(bad, bad, compat="ranx")
