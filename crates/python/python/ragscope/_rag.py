"""The RAG half: the computations of the ragscope CLI's RAG commands, over the same files.

Each function returns the document the CLI prints with ``--format json`` as plain dicts and
lists (built by the same Rust functions, so the values are equal; ``None`` where the CLI writes
``null``). File arguments are paths (``str`` or ``os.PathLike``); unreadable files raise
:class:`ragscope.FormatError` naming the file (and line), bad parameters ``ValueError``.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

from ragscope import _native

Path = Union[str, "os.PathLike[str]"]


def _path(p: Path) -> str:
    return os.fspath(p)


def _paths(ps: Union[Path, Sequence[Path]]) -> List[str]:
    if isinstance(ps, (str, os.PathLike)):
        return [_path(ps)]
    return [_path(p) for p in ps]


def _gamma(gamma: Union[None, float, str]) -> Optional[str]:
    # The CLI takes a decimal or a fraction ("1/3"); a float goes through its shortest repr.
    return None if gamma is None else str(gamma)


def udcg(
    input_or_qrels: Path,
    runs: Union[None, Path, Sequence[Path]] = None,
    *,
    utilities: Optional[Path] = None,
    model: Optional[str] = None,
    gamma: Union[None, float, str] = None,
    k: Optional[int] = None,
    binary: bool = False,
    compat: str = "paper",
    complete: bool = False,
    per_query: bool = False,
) -> Any:
    """UDCG (Trappolini et al. 2025, Eq. 4), as ``ragscope udcg``.

    Two forms, as the CLI's:

    - ``udcg(qrels, runs, utilities=U.tsv, ...)``: the runs scored on ``UDCG@k`` against the
      qrels' topics with the utilities TSV (``qid docno relevant no_res_prob [model]``):
      ``ragscope udcg --qrels Q --utilities U --format json RUN...``, a dict with ``runs``
      (``summary``, ``unjudged``, ``per_query`` when asked).
    - ``udcg(reference.json)``: the UDCG reference JSON with every model's ``udcg`` filled
      (``ragscope udcg INPUT.json``), a list. Examples skipped under ``compat="udcg-ref"``
      raise a :class:`UserWarning` each, as the CLI warns on stderr.

    ``gamma``: the weight of distracting passages (default 1/3; 0.333 with ``compat="udcg-ref"``),
    a float or a fraction such as ``"1/3"``; ``k``: score the first k passages; ``binary``: utility
    ±1 from the relevance label; ``compat``: ``"paper"`` or ``"udcg-ref"`` (GiovanniTRA/UDCG's code).
    """
    if runs is None:
        if utilities is not None or model is not None or complete or per_query:
            raise ValueError(
                "utilities, model, complete and per_query belong to the run form: udcg(qrels, runs, utilities=...)"
            )
        text, skipped = _native.udcg_reference_json(
            _path(input_or_qrels), _gamma(gamma), k, binary, compat
        )
        for w in skipped:
            warnings.warn(f"skipped (as the reference code does): {w}", stacklevel=2)
        return json.loads(text)
    if utilities is None:
        raise ValueError("the run form needs utilities= (a TSV: qid docno relevant no_res_prob [model])")
    return json.loads(
        _native.udcg_runs_json(
            _path(input_or_qrels),
            _paths(runs),
            _path(utilities),
            model,
            _gamma(gamma),
            k,
            binary,
            compat,
            complete,
            per_query,
        )
    )


def erag(
    qrels: Path,
    runs: Union[Path, Sequence[Path]],
    outcomes: Path,
    measures: Union[str, Sequence[str]] = ("eRAG-P@5",),
    *,
    complete: bool = False,
    per_query: bool = False,
) -> Dict[str, Any]:
    """eRAG (Salemi & Zamani, SIGIR 2024): runs scored with the per-passage answers of
    ``ragscope answer --erag`` (``outcomes``, JSON Lines), as
    ``ragscope eval --qrels Q --erag-outcomes O --measures M --format json RUN...``.

    Measures: ``eRAG-P@k``, ``eRAG-success@k``, ``eRAG-P(metric=em|rouge_l)@k``, ... and any
    other ``ragscope eval`` measure beside them.
    """
    if isinstance(measures, str):
        measures = [measures]
    return json.loads(
        _native.erag_json(
            _path(qrels), _paths(runs), _path(outcomes), [str(m) for m in measures], complete, per_query
        )
    )


def correlate(
    contexts: Path,
    *,
    utilities: Optional[Path] = None,
    theta: Optional[Path] = None,
    k: Optional[int] = None,
    gamma: float = 1.0 / 3.0,
    sensitivity: Optional[Sequence[int]] = None,
    resamples: int = 1000,
    seed: int = 0,
    reference: str = "UDCG",
) -> Dict[str, Any]:
    """The UDCG paper's correlation study (§7.2, Table 3), as ``ragscope correlate --format json``:
    Spearman, Kendall τ-b and Pearson of every metric with the reader's outcomes, bootstrap
    intervals and paired tests against ``reference``. ``sensitivity=[1, 2, 3, 5, 10]`` (or ``[]``
    for 1..10) reports correlation by context size instead (Fig. 2).
    """
    ks = None if sensitivity is None else [int(x) for x in sensitivity]
    return json.loads(
        _native.correlate_json(
            _path(contexts),
            None if utilities is None else _path(utilities),
            None if theta is None else _path(theta),
            k,
            float(gamma),
            ks,
            resamples,
            seed,
            reference,
        )
    )


def nugget_scores(
    assignments: Union[Path, Sequence[Path]], *, compat: str = "paper", per_topic: bool = False
) -> Dict[str, Any]:
    """The TREC 2024 RAG AutoNuggetizer scores (A, A_strict, V, V_strict, W, W_strict, L) of
    nuggetizer assignment files (JSONL) or Open RAG Eval results CSVs, as
    ``ragscope nuggets score --format json``: ``{"runs": [{"run_id", "mean", "topics"?}]}``.

    ``compat``: ``"paper"`` (default), ``"nuggetizer"`` (nuggetizer 0.0.5) or ``"open-rag-eval"``
    (0.3.0: vital first, first 20 nuggets, max(n, 1) denominators).
    """
    return json.loads(_native.nugget_scores_json(_paths(assignments), compat, per_topic))


def _ratings(games: Path, model: str, k, initial, tournaments, seed, shuffle, compat, resamples):
    return json.loads(
        _native.elo_json(_path(games), model, k, initial, tournaments, seed, shuffle, compat, resamples)
    )


def elo(
    games: Path,
    *,
    k: float = 32.0,
    initial: float = 1000.0,
    tournaments: int = 10,
    seed: int = 0,
    shuffle: bool = True,
    compat: Optional[str] = None,
) -> Dict[str, Any]:
    """Elo ratings of RAG agents from a RAGElo pairwise evaluations CSV (or answers_eval JSONL),
    as ``ragscope elo --format json``: ``{"model": "elo", "ratings": {agent: {"rating", "std"}}}``,
    best first; the mean ± population std over ``tournaments`` shuffled tournaments.
    ``compat="ragelo"`` reproduces PyPI ragelo 0.7.0's EloRanker exactly.
    """
    return _ratings(games, "elo", k, initial, tournaments, seed, shuffle, compat, 0)


def bradley_terry(
    games: Path, *, initial: float = 1000.0, resamples: int = 1000, seed: int = 0
) -> Dict[str, Any]:
    """Bradley–Terry ratings (MLE on the Elo scale, mean ``initial``) with bootstrap standard
    errors over queries, as ``ragscope elo --model bradley-terry --format json``."""
    return _ratings(games, "bradley-terry", 32.0, initial, 10, seed, True, None, resamples)


def agreement(
    a: Path, b: Path, *, kind: Optional[str] = None, measure: Optional[str] = None
) -> Dict[str, Any]:
    """Agreement between two judgments of the same items, as ``ragscope agreement --format json``:
    two qrels files (``kind="labels"``: Cohen's κ, nominal α; ``"grades"``: also weighted κ,
    ordinal and interval α) or two per-topic score files of the same runs (``"runs"``: Kendall τ
    three ways, on ``measure``). ``kind=None`` guesses from the files, as the CLI does.
    """
    return json.loads(_native.agreement_json(_path(a), _path(b), kind, measure))


def citations(results: Union[Path, Sequence[Path]], *, per_answer: bool = False) -> Dict[str, Any]:
    """Citation precision, recall and F1 per run (and answer), and the no-answer rate, from Open
    RAG Eval results CSVs or ``ragscope judge citations`` JSONL, as
    ``ragscope citations --format json``."""
    return json.loads(_native.citations_json(_paths(results), per_answer))


def graded(
    qrels: Path,
    runs: Union[Path, Sequence[Path]],
    *,
    k: int = 10,
    compat: str = "trec-eval",
    per_topic: bool = False,
) -> Dict[str, Any]:
    """P@k, AP@k and MRR of runs against UMBRELA-graded qrels (grades 0–3, relevant iff ≥ 2), as
    ``ragscope graded --format json``; ``compat="open-rag-eval"`` follows open-rag-eval 0.3.0
    (AP@k over the relevant passages in the top k; P@k ``None`` when k exceeds the list)."""
    return json.loads(_native.graded_json(_path(qrels), _paths(runs), k, compat, per_topic))
