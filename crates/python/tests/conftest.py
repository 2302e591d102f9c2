"""Shared fixtures: trec_eval 10.0's own test files (../shared/data/trec_eval beside the repo)."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(os.environ.get("RAGSCOPE_TREC_EVAL_DATA", ROOT.parent / "shared" / "data" / "trec_eval"))


@pytest.fixture(scope="session")
def data() -> Path:
    if not (DATA / "qrels.test").exists():
        pytest.fail(f"trec_eval's test files are missing: {DATA}")
    return DATA


def read_dicts(qrels_path: Path, run_path: Path):
    """The files as dicts, read as trec_eval reads them (comments skipped; run fields after the
    score, such as results.trunc's trailing words, ignored)."""
    qrels, run = {}, {}
    for line in open(qrels_path):
        f = line.split()
        if f and not f[0].startswith("#"):
            qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    for line in open(run_path):
        f = line.split()
        if f and not f[0].startswith("#"):
            run.setdefault(f[0], {})[f[2]] = float(f[4])
    return qrels, run
