"""ragscope: exact, fast IR evaluation (trec_eval 10.0 semantics) from Rust.

- ``ragscope.pytrec_eval``: a drop-in for pytrec_eval (``RelevanceEvaluator``).
- :func:`evaluate`, :func:`calc_aggregate`, :func:`iter_calc`, :func:`parse_measure`: ir_measures
  style, with ragscope's (and ir_measures') measure names: ``"nDCG@10"``, ``"AP"``, ``"RR@10"``,
  ``"P(rel=2)@5"``, ``"R@100"``, ``"Success@1"``, ``"Rprec"``, ``"bpref"``, ``"Judged@10"``, ...
- :func:`compare`: a ranx-style significance report; :func:`tie_report`: ties across a cutoff.
- The RAG half, the CLI's RAG commands with their parameters and compat switches, values equal
  to ``--format json``: :func:`udcg`, :func:`erag`, :func:`correlate`, :func:`nugget_scores`,
  :func:`elo`, :func:`bradley_terry`, :func:`agreement`, :func:`citations`, :func:`graded`.

Qrels and runs may be dicts of dicts (``{qid: {docno: rel}}``, ``{qid: {docno: score}}``), TREC
file paths (plain or gzip), pandas DataFrames (``query_id``/``q_id``, ``doc_id``,
``score``/``relevance``), ranx ``Qrels``/``Run`` objects or ir_measures' iterables of
``Qrel``/``ScoredDoc``. Bad files raise :class:`FormatError` (a ``ValueError``) with file:line.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Union

from ragscope import _native
from ragscope._compare import Report, compare
from ragscope._inputs import to_native
from ragscope._ir_measures import register_ir_measures
from ragscope._native import FormatError
from ragscope._rag import (
    agreement,
    bradley_terry,
    citations,
    correlate,
    elo,
    erag,
    graded,
    nugget_scores,
    udcg,
)

__all__ = [
    "FormatError",
    "Measure",
    "Metric",
    "Report",
    "TieGroup",
    "agreement",
    "bradley_terry",
    "calc_aggregate",
    "citations",
    "compare",
    "correlate",
    "elo",
    "erag",
    "evaluate",
    "graded",
    "iter_calc",
    "nugget_scores",
    "parse_measure",
    "register_ir_measures",
    "tie_report",
    "udcg",
]

__version__ = "0.1.0"


class Measure(str):
    """A measure name in ragscope's canonical spelling; prints back as it parsed.

    ``parse_measure("ndcg@10") == Measure("nDCG@10")``; usable wherever a name is.
    """

    def __new__(cls, text: str) -> "Measure":
        return super().__new__(cls, _canonical(str(text)))

    def __repr__(self) -> str:
        return f"Measure({str.__repr__(self)})"


# ranx's metric names, and its "-lN" relevance suffix (REFERENCE.md §15).
_RANX = {
    "precision": "P",
    "recall": "R",
    "mrr": "MRR",
    "map": "MAP",
    "ndcg": "nDCG",
    "hit_rate": "Success",
    "r-precision": "Rprec",
    "bpref": "bpref",
}
_RANX_RE = re.compile(r"^([a-z_\-]+)(?:@(\d+))?(?:-l(\d+))?$")


def _canonical(text: str) -> str:
    try:
        return _native.canonical_measure(text)
    except ValueError as first:
        m = _RANX_RE.match(text.strip())
        if m and m.group(1) in _RANX:
            name = _RANX[m.group(1)]
            if m.group(3):
                name += f"(rel={m.group(3)})"
            if m.group(2):
                name += f"@{m.group(2)}"
            try:
                return _native.canonical_measure(name)
            except ValueError:
                pass
        raise first


def parse_measure(text: Union[str, Any]) -> Measure:
    """Parse a measure name (``"nDCG(gain=exp)@10"``, ``"AP(rel=2)"``, ir_measures objects,
    ranx names such as ``"ndcg@10"``); raises ValueError naming what is wrong."""
    return Measure(str(text))


class Metric(NamedTuple):
    """One per-query value, as ir_measures' ``Metric``."""

    query_id: str
    measure: Any
    value: float


def _evaluate_raw(qrels: Any, run: Any, measures: Sequence[Any], complete: bool):
    names = [_canonical(str(m)) for m in measures]
    _run_id, topics, values, _canon, counts = _native.evaluate(
        to_native(qrels, True), to_native(run, False), names, complete
    )
    return topics, values, counts


def _aggregate(values: List[float], is_count: bool) -> float:
    if not values:
        return float("nan")
    total = 0.0
    for v in values:
        total += v
    return total if is_count else total / len(values)


def evaluate(
    qrels: Any,
    run: Any,
    measures: Union[str, Iterable[Any]],
    per_query: bool = False,
    as_frame: bool = False,
    complete: bool = False,
) -> Any:
    """Score ``run`` against ``qrels``.

    Args:
        qrels: ``{qid: {docno: int}}``, a qrels file path (plain or gzip), a DataFrame
            (``query_id``, ``doc_id``, ``relevance``), a ranx ``Qrels`` or ir_measures qrels.
        run: ``{qid: {docno: score}}``, a run file path, a DataFrame (``query_id``, ``doc_id``,
            ``score``), a ranx ``Run`` or ir_measures ``ScoredDoc`` records.
        measures: one name or several: ``"nDCG@10"``, ``"AP"``, ``"MAP"``, ``"RR@10"``,
            ``"P(rel=2)@5"``, ``"R@100"``, ``"Success@1"``, ``"bpref"``, ``"NumRet"`` ... (ranx
            names such as ``"ndcg@10"`` too).
        per_query: return ``{qid: {measure: value}}`` instead of ``{measure: value}``.
        as_frame: return a pandas DataFrame (columns ``query_id``, ``measure``, ``value`` per
            query; ``measure``, ``value`` aggregated).
        complete: score every qrels topic, one missing from the run as an empty ranking
            (trec_eval ``-c``; ir_measures' behaviour). By default only topics in both are
            scored (trec_eval's default).

    Returns:
        Values keyed by each measure as written by the caller. Aggregates are means over the
        scored topics (sums for the counts NumRet, NumRel, NumRelRet).

    Ranking is trec_eval's: score descending, ties by docno descending.
    """
    single = isinstance(measures, str)
    keys = [measures] if single else list(measures)
    topics, values, counts = _evaluate_raw(qrels, run, keys, complete)
    if per_query:
        out: Dict[str, Dict[Any, float]] = {t: {} for t in topics}
        for key, vals in zip(keys, values):
            for t, v in zip(topics, vals):
                out[t][key] = v
        if as_frame:
            import pandas as pd

            rows = [(t, str(k), v) for t, d in out.items() for k, v in d.items()]
            return pd.DataFrame(rows, columns=["query_id", "measure", "value"])
        return out
    agg = {key: _aggregate(vals, c) for key, vals, c in zip(keys, values, counts)}
    if as_frame:
        import pandas as pd

        return pd.DataFrame([(str(k), v) for k, v in agg.items()], columns=["measure", "value"])
    return agg


def calc_aggregate(measures: Iterable[Any], qrels: Any, run: Any) -> Dict[Any, float]:
    """ir_measures' ``calc_aggregate``: ``{measure as given: aggregate}``; qrels topics missing
    from the run score 0, as in ir_measures."""
    return evaluate(qrels, run, list(measures), complete=True)


def iter_calc(measures: Iterable[Any], qrels: Any, run: Any) -> Iterator[Metric]:
    """ir_measures' ``iter_calc``: a :class:`Metric` per (topic, measure), topics in ``strcmp``
    order; qrels topics missing from the run score 0."""
    keys = list(measures)
    topics, values, _ = _evaluate_raw(qrels, run, keys, True)
    for i, t in enumerate(topics):
        for key, vals in zip(keys, values):
            yield Metric(t, key, vals[i])


class TieGroup(NamedTuple):
    """Documents of one topic with equal scores that straddle the cutoff ``k``."""

    query_id: str
    score: float
    first_rank: int
    last_rank: int
    inside: List[str]
    outside: List[str]


def tie_report(run: Any, k: int) -> List[TieGroup]:
    """Ties that straddle rank ``k``: where tools disagree (trec_eval breaks ties by docno
    descending, ranx by hashed ids, others by docno ascending), a measure at ``k`` may differ.

    Returns one :class:`TieGroup` per topic with such a tie, topics in ``strcmp`` order,
    ranks as trec_eval forms them (score descending, then docno descending).
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    native = to_native(run, False)
    if isinstance(native, str):
        with open(native, "rb") as f:
            native = (native, f.read())
    if isinstance(native, tuple):
        native = _parse_run_text(*native)
    out = []
    for qid in sorted(native, key=lambda q: q.encode()):
        ranked = sorted(
            native[qid].items(), key=lambda dv: (-float(dv[1]), _Desc(dv[0]))
        )
        if len(ranked) <= k or float(ranked[k - 1][1]) != float(ranked[k][1]):
            continue
        score = float(ranked[k - 1][1])
        ranks = [i for i, (_, s) in enumerate(ranked) if float(s) == score]
        first, last = ranks[0], ranks[-1]
        out.append(
            TieGroup(
                qid,
                score,
                first + 1,
                last + 1,
                [d for d, _ in ranked[first:k]],
                [d for d, _ in ranked[k : last + 1]],
            )
        )
    return out


class _Desc:
    """Sort key reversing byte order of docnos (trec_eval's ties: docno descending)."""

    __slots__ = ("b",)

    def __init__(self, s: str) -> None:
        self.b = s.encode()

    def __lt__(self, other: "_Desc") -> bool:
        return self.b > other.b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.b == other.b


def _parse_run_text(name: str, data: bytes) -> Dict[str, Dict[str, float]]:
    run: Dict[str, Dict[str, float]] = {}
    for n, line in enumerate(data.decode().splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 6:
            raise FormatError(f"{name}:{n}: expected 6 fields, found {len(fields)}")
        try:
            run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
        except ValueError:
            raise FormatError(f"{name}:{n}: score '{fields[4]}' is not a number") from None
    return run
