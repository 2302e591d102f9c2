"""Qrels and runs in the shapes Python users hold them, to what ragscope._native reads:
a dict of dicts, or ``(file name, bytes)`` for a file (parsed in Rust with file:line errors)."""

from __future__ import annotations

import gzip
import os
from typing import Any, Dict, Tuple, Union

from ragscope._native import columns_text

Native = Union[Dict[str, Dict[str, Any]], str, Tuple[str, bytes]]

# Column names accepted for DataFrames: ragscope's and ir_measures' first, then ranx's and
# common spellings.
_QID = ("query_id", "q_id", "qid", "topic")
_DOC = ("doc_id", "docno", "docid", "did")
_SCORE = ("score",)
_REL = ("relevance", "rel", "score", "label")


def _column(df: Any, names: Tuple[str, ...], what: str) -> Any:
    for name in names:
        if name in df.columns:
            return df[name]
    raise ValueError(f"the DataFrame has no {what} column (looked for {', '.join(names)})")


def _read_file(path: Union[str, os.PathLike]) -> Union[str, Tuple[str, bytes]]:
    """A plain file's path (mapped and parsed in Rust), or a gzip file's name and content."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    with open(name, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return name
        f.seek(0)
        return name, gzip.decompress(f.read())


def to_native(obj: Any, qrels: bool) -> Native:
    """A qrels (``qrels=True``) or run in any accepted shape, as _native reads it."""
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return _read_file(obj)
    # ranx Qrels / Run
    if hasattr(obj, "to_dict") and type(obj).__module__.startswith("ranx"):
        return {q: dict(d) for q, d in obj.to_dict().items()}
    # pandas (or anything with .columns and column access)
    if hasattr(obj, "columns"):
        qids = _column(obj, _QID, "query id").astype(str).tolist()
        docs = _column(obj, _DOC, "document id").astype(str).tolist()
        if qrels:
            vals = [int(v) for v in _column(obj, _REL, "relevance").tolist()]
        else:
            vals = _column(obj, _SCORE, "score").astype(float).tolist()
        # one TREC line per row: a parse error (a duplicate document) names row + 1 as its line
        return "<DataFrame>", columns_text(qids, docs, vals, qrels)
    if hasattr(obj, "items"):
        return {str(q): dict(d) for q, d in obj.items()}
    # ir_measures' iterables of Qrel(query_id, doc_id, relevance) / ScoredDoc(query_id, doc_id, score)
    out = {}
    field = "relevance" if qrels else "score"
    for rec in obj:
        out.setdefault(rec.query_id, {})[rec.doc_id] = getattr(rec, field)
    return out
