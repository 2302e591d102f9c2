"""A drop-in for pytrec_eval: ``import ragscope.pytrec_eval as pytrec_eval``.

The same names and behaviour as pytrec-eval-terrier 0.5.11 (measure strings with nicknames
and parameters, result keys, the topics returned, empty runs and qrels, the int check on
relevance, ties by docno descending), with values from ragscope's trec_eval 10.0 engine and
the GIL released while it scores. Where pytrec_eval's bundled trec_eval 9.0.8 differs
(``11pt_avg`` and ``iprec_at_recall`` round recall cutoffs since 10.0), see docs/python.md.
"""

from __future__ import annotations

import collections
import math
import re
from typing import Dict, Iterable, List, Mapping, Set

from ragscope._native import TrecEvaluator as _TrecEvaluator

__all__ = [
    "parse_run",
    "parse_qrel",
    "compute_aggregated_measure",
    "supported_measures",
    "supported_nicknames",
    "RelevanceEvaluator",
]

#: The measure families pytrec_eval knows (trec_eval's qrels measures, 9.0.8's table).
supported_measures: Set[str] = {
    "11pt_avg", "G", "P", "Rndcg", "Rprec", "Rprec_mult", "binG", "bpref", "gm_bpref",
    "gm_map", "infAP", "iprec_at_recall", "map", "map_cut", "ndcg", "ndcg_cut", "ndcg_rel",
    "num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret", "num_ret", "recall",
    "recip_rank", "relative_P", "relstring", "runid", "set_F", "set_P", "set_map",
    "set_recall", "set_relative_P", "success", "utility",
}  # fmt: skip

# trec_eval 10.0's additions, accepted by name but kept out of the nicknames so that
# `all_trec` gives pytrec_eval's keys.
_EXTRA_MEASURES = ("rbp", "rbp_resid", "unj")

#: trec_eval's nicknames, as pytrec_eval lists them (prefs, all_prefs and qrels_jg name
#: measures that neither pytrec_eval nor this module computes from plain qrels).
supported_nicknames: Dict[str, Set[str]] = {
    "official": {
        "P", "Rprec", "bpref", "gm_map", "iprec_at_recall", "map", "num_q", "num_rel",
        "num_rel_ret", "num_ret", "recip_rank", "runid",
    },
    "set": {
        "num_q", "num_rel", "num_rel_ret", "num_ret", "runid", "set_F", "set_P", "set_map",
        "set_recall", "set_relative_P", "utility",
    },
    "all_trec": set(supported_measures),
    "all_prefs": {
        "num_q", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret",
        "prefs_avgjg_imp", "prefs_avgjg_ret", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_num_prefs_poss", "prefs_pair", "prefs_pair_imp",
        "prefs_pair_ret", "prefs_simp", "prefs_simp_imp", "prefs_simp_ret", "runid",
    },
    "prefs": {
        "num_q", "prefs_avgjg", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
        "prefs_num_prefs_poss", "prefs_pair", "prefs_simp", "runid",
    },
    "qrels_jg": {"P_avgjg", "Rprec_mult_avgjg", "map_avgjg", "num_q", "runid"},
}  # fmt: skip

_RE_BASE = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def parse_run(f_run: Iterable[str]) -> Dict[str, Dict[str, float]]:
    """Parse TREC run lines ``qid Q0 docno rank score tag`` into ``{qid: {docno: score}}``.

    Raises AssertionError when a docno repeats within a topic (as pytrec_eval).
    """
    run: Dict[str, Dict[str, float]] = collections.defaultdict(dict)
    for line in f_run:
        query_id, _, object_id, _ranking, score, _ = line.strip().split()
        assert object_id not in run[query_id]
        run[query_id][object_id] = float(score)
    return run


def parse_qrel(f_qrel: Iterable[str]) -> Dict[str, Dict[str, int]]:
    """Parse TREC qrels lines ``qid 0 docno rel`` into ``{qid: {docno: rel}}``.

    Raises AssertionError when a docno repeats within a topic (as pytrec_eval).
    """
    qrel: Dict[str, Dict[str, int]] = collections.defaultdict(dict)
    for line in f_qrel:
        query_id, _, object_id, relevance = line.strip().split()
        assert object_id not in qrel[query_id]
        qrel[query_id][object_id] = int(relevance)
    return qrel


def compute_aggregated_measure(measure: str, values: List[float]) -> float:
    """Aggregate per-query values as trec_eval's summary does.

    ``num_*`` sum, ``gm_*`` (per-query values are logs) take ``exp`` of the mean, every other
    measure takes the arithmetic mean.
    """
    values = list(values)
    if measure.startswith("num_"):
        return float(math.fsum(values))
    if measure.startswith("gm_"):
        return float(math.exp(math.fsum(values) / len(values)))
    return float(math.fsum(values) / len(values))


def _expand_nicknames(measures: Iterable[str]) -> Set[str]:
    result: Set[str] = set()
    for measure in measures:
        if measure in supported_nicknames:
            result.update(supported_nicknames[measure])
        else:
            result.add(measure)
    return result


def _combine_measures(measures: Iterable[str]) -> List[str]:
    """``P``, ``P.5``, ``P_5,10`` → trec_eval requests ``P.5,10``, parameters merged per family."""
    known = supported_measures.union(_EXTRA_MEASURES)
    param_meas: Dict[str, Set[str]] = {}
    for measure in measures:
        if measure not in known and measure not in supported_nicknames:
            match = None
            for base in sorted(known, key=len, reverse=True):
                m = re.match(_RE_BASE.format(re.escape(base)), measure)
                if m is not None:
                    match = (base, m.group(1))
                    break
            if match is None:
                raise ValueError(f"unsupported measure {measure}")
            param_meas.setdefault(match[0], set()).update(match[1].split(","))
        else:
            param_meas.setdefault(measure, set())
    requests = []
    for meas, args in param_meas.items():
        if meas in supported_nicknames:
            raise ValueError(f"unsupported measure {meas} (it reads judgment groups or preferences)")
        requests.append(f"{meas}.{','.join(sorted(args))}" if args else meas)
    return requests


class RelevanceEvaluator:
    """Evaluate runs against qrels, as ``pytrec_eval.RelevanceEvaluator``.

    Args:
        query_relevance: ``{qid: {docno: int relevance}}``; topics with no judgments are dropped.
        measures: measure names, with parameters (``"P.5,10"``, ``"ndcg_cut_10"``) or
            nicknames (``"official"``, ``"all_trec"``, ``"set"``).
        relevance_level: minimum relevance counted as relevant (trec_eval ``-l``); must be ≥ 1.
        judged_docs_only_flag: drop unjudged documents before scoring (trec_eval ``-J``).

    The qrels are read and the measures parsed once; :meth:`evaluate` can be called many
    times, from several threads (the GIL is released while scoring).
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        if not isinstance(relevance_level, int) or relevance_level < 1:
            raise TypeError("relevance_level must be an int >= 1")
        requests = _combine_measures(_expand_nicknames(measures))
        qrels = {q: d for q, d in query_relevance.items() if len(d) > 0}
        self._native = _TrecEvaluator(qrels, requests, relevance_level, bool(judged_docs_only_flag))

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]:
        """Score a run ``{qid: {docno: score}}``: ``{qid: {measure key: value}}``.

        Only topics in both the qrels and the run are returned. Ranking is trec_eval's: score
        descending, ties by docno descending. ``runid`` and ``relstring`` come back as 0.0;
        ``gm_*`` per-query values are ``ln(max(v, 1e-5))``.
        """
        if not scores:
            return {}
        if not isinstance(scores, dict):
            scores = {q: dict(d) for q, d in scores.items()}
        return self._native.evaluate(scores)
