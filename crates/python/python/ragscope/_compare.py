"""``ragscope.compare``: systems against a baseline with `ragscope compare`'s paired tests
(ragscope_eval::stats::compare), reported like ranx's ``Report``."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

from ragscope import _native
from ragscope._inputs import to_native


class Report:
    """Means per system and measure, and each system's test against the baseline.

    ``means[system][measure]``, ``p_values[system][measure]`` (corrected; absent for the
    baseline), ``tests[system][measure]`` (the full test: n, mean_difference, ci_low, ci_high,
    cohens_d, statistic, p_value before correction).
    """

    def __init__(
        self,
        measures: List[Any],
        baseline: str,
        means: Dict[str, Dict[Any, float]],
        tests: Dict[str, Dict[Any, Dict[str, float]]],
        p_values: Dict[str, Dict[Any, float]],
        test: str,
        correction: str,
        alpha: float,
    ) -> None:
        self.measures = measures
        self.baseline = baseline
        self.means = means
        self.tests = tests
        self.p_values = p_values
        self.test = test
        self.correction = correction
        self.alpha = alpha

    def significant(self, system: str, measure: Any) -> bool:
        p = self.p_values.get(system, {}).get(measure)
        return p is not None and p < self.alpha

    def to_dict(self) -> Dict[str, Any]:
        return {
            "baseline": self.baseline,
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "means": self.means,
            "p_values": self.p_values,
        }

    def to_dataframe(self) -> Any:
        """One row per system, one column per measure (means)."""
        import pandas as pd

        return pd.DataFrame(
            {str(m): [self.means[s][m] for s in self.means] for m in self.measures},
            index=pd.Index(list(self.means), name="system"),
        )

    def _cells(self) -> List[List[str]]:
        rows = []
        for s in self.means:
            row = [s]
            for m in self.measures:
                cell = f"{self.means[s][m]:.4f}"
                if s != self.baseline:
                    cell += "*" if self.significant(s, m) else ""
                    cell += f" (p={self.p_values[s][m]:.3g})"
                row.append(cell)
            rows.append(row)
        return rows

    def _caption(self) -> str:
        return (
            f"baseline: {self.baseline}; test: {self.test}; correction: {self.correction}; "
            f"* p < {self.alpha}"
        )

    def to_markdown(self) -> str:
        head = ["system"] + [str(m) for m in self.measures]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in self._cells()]
        return "\n".join(lines) + f"\n\n{self._caption()}\n"

    def to_latex(self) -> str:
        def esc(t: str) -> str:
            return t.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")

        head = ["System"] + [esc(str(m)) for m in self.measures]
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            r"\begin{tabular}{l" + "c" * len(self.measures) + "}",
            r"\toprule",
            " & ".join(head) + r" \\",
            r"\midrule",
        ]
        for r in self._cells():
            lines.append(" & ".join(esc(c).replace("*", r"$^{*}$") for c in r) + r" \\")
        lines += [
            r"\bottomrule",
            r"\end{tabular}",
            r"\caption{" + esc(self._caption()) + "}",
            r"\end{table}",
        ]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        head = ["system"] + [str(m) for m in self.measures]
        rows = [head] + self._cells()
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        text = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
        return text + "\n" + self._caption()

    __repr__ = __str__


def compare(
    qrels: Any,
    runs: Mapping[str, Any],
    measures: Iterable[Any],
    baseline: Optional[str] = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 42,
) -> Report:
    """Compare runs against a baseline, ranx-style.

    Args:
        qrels: any qrels :func:`ragscope.evaluate` accepts.
        runs: ``{system name: run}``.
        measures: measure names (see :func:`ragscope.evaluate`).
        baseline: the system the others are tested against (default: the first).
        test: ``"t"`` (paired Student t, ranx's default), ``"wilcoxon"``, ``"randomization"``
            (Fisher) or ``"bootstrap"``; two-sided.
        correction: ``"holm"``, ``"bonferroni"`` or ``"none"``, over the systems compared with
            the baseline, per measure.
        alpha: significance level of the ``*`` marks.
        resamples, seed: for the randomization and bootstrap tests (deterministic per seed).

    Every qrels topic is scored (a topic missing from a run as an empty ranking), so the
    per-query values pair up across systems.
    """
    from ragscope import _aggregate

    measures = list(measures)
    names = list(runs)
    if not names:
        raise ValueError("compare needs at least one run")
    baseline = names[0] if baseline is None else baseline
    if baseline not in runs:
        raise ValueError(f"baseline '{baseline}' is not one of the runs")
    canon = [_canonical_name(m) for m in measures]
    qn = to_native(qrels, True)
    per_query: Dict[str, List[List[float]]] = {}
    means: Dict[str, Dict[Any, float]] = {}
    for name in names:
        _, _, values, _, counts = _native.evaluate(qn, to_native(runs[name], False), canon, True)
        per_query[name] = values
        means[name] = {m: _aggregate(v, c) for m, v, c in zip(measures, values, counts)}
    tests: Dict[str, Dict[Any, Dict[str, float]]] = {}
    others = [n for n in names if n != baseline]
    for i, m in enumerate(measures):
        for n in others:
            tests.setdefault(n, {})[m] = _native.paired_test(
                per_query[baseline][i], per_query[n][i], test, resamples, seed
            )
    p_values: Dict[str, Dict[Any, float]] = {n: {} for n in others}
    for m in measures:
        raw = [tests[n][m]["p_value"] for n in others]
        for n, p in zip(others, _native.correct_p_values(raw, correction)):
            p_values[n][m] = p
    return Report(measures, baseline, means, tests, p_values, test, correction, alpha)


def _canonical_name(m: Any) -> str:
    from ragscope import _canonical

    return _canonical(str(m))
