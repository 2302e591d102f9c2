"""ragscope as an ir_measures provider, through ir_measures' public API only: a
``providers.Provider`` subclass put first in ``ir_measures.DefaultPipeline.providers``
(REFERENCE.md §15: the registry has no entry points; a third party joins that list)."""

from __future__ import annotations

from typing import Any, Iterator


def _name(measure: Any) -> str:
    """ragscope's name for an ir_measures measure the provider declares support for."""
    params = measure.params
    name = {"RR": "RR" if "cutoff" in params else "MRR"}.get(measure.NAME, measure.NAME)
    inner = []
    rel = params.get("rel", 1)
    if rel != 1:
        inner.append(f"rel={rel}")
    if measure.NAME == "nDCG" and params.get("dcg", "log2") == "exp-log2":
        inner.append("gain=exp")
    text = name + (f"({','.join(inner)})" if inner else "")
    if "cutoff" in params and params["cutoff"] is not None:
        text += f"@{params['cutoff']}"
    return text


def provider() -> Any:
    """A new ir_measures provider computing with ragscope (ir_measures must be installed)."""
    import ir_measures
    from ir_measures import measures, providers
    from ir_measures.providers.base import Any as Anything
    from ir_measures.providers.base import Choices, NOT_PROVIDED

    import ragscope

    cut, rel, judged = Anything(), Anything(), Choices(False)
    supported = [
        measures._P(cutoff=Anything(required=True), rel=rel, judged_only=judged),
        measures._R(cutoff=Anything(required=True), rel=rel, judged_only=judged),
        measures._RR(cutoff=cut, rel=rel, judged_only=judged),
        measures._AP(cutoff=cut, rel=rel, judged_only=judged),
        measures._nDCG(cutoff=cut, dcg=Choices("log2", "exp-log2"), gains=Choices(NOT_PROVIDED), judged_only=judged),
        measures._Success(cutoff=Anything(required=True), rel=rel, judged_only=judged),
        measures._Rprec(rel=rel, judged_only=judged),
        measures._Bpref(rel=rel),
        measures._Judged(cutoff=Anything(required=True)),
        measures._NumRet(rel=Choices(NOT_PROVIDED)),
        measures._NumRel(rel=rel),
        measures._SetP(rel=rel, judged_only=judged),
        measures._SetR(rel=rel),
    ]

    class RagscopeEvaluator(providers.Evaluator):
        def __init__(self, ms: Any, qrels: Any) -> None:
            self.qrels = {q: dict(d) for q, d in ir_measures.util.QrelsConverter(qrels).as_dict_of_dict().items()}
            super().__init__(ms, set(self.qrels))
            self.ms = list(ms)

        def _iter_calc(self, run: Any) -> Iterator[Any]:
            run = ir_measures.util.RunConverter(run).as_dict_of_dict()
            names = [_name(m) for m in self.ms]
            by_name = dict(zip(names, self.ms))
            for metric in ragscope.iter_calc(names, self.qrels, run):
                yield ir_measures.Metric(metric.query_id, by_name[metric.measure], metric.value)

    class RagscopeProvider(providers.Provider):
        """ragscope (trec_eval 10.0 semantics, Rust)."""

        NAME = "ragscope"
        SUPPORTED_MEASURES = supported

        def _evaluator(self, ms: Any, qrels: Any) -> Any:
            return RagscopeEvaluator(ms, qrels)

    return RagscopeProvider()


def register_ir_measures() -> Any:
    """Put ragscope first in ir_measures' default pipeline (and its registry), so that
    ``ir_measures.calc_aggregate`` and friends use it for the measures it supports; the other
    providers still serve the rest. Returns the provider."""
    import ir_measures

    p = provider()
    ir_measures.providers.registry.setdefault(p.NAME, p)
    pipeline = ir_measures.DefaultPipeline.providers
    if not any(getattr(q, "NAME", None) == p.NAME for q in pipeline):
        pipeline.insert(0, p)
    return p
