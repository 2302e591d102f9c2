"""Type stubs for the Rust extension module (see ragscope/__init__.py for the public API)."""

from typing import Any, Dict, List, Tuple, Union

_Source = Union[Dict[str, Dict[str, Any]], str, Tuple[str, bytes]]

class FormatError(ValueError):
    """A qrels or run that cannot be read: the message names file:line:column and the reason."""

class TrecEvaluator:
    def __init__(
        self,
        qrels: _Source,
        requests: List[str],
        relevance_level: int = 1,
        judged_only: bool = False,
    ) -> None: ...
    def evaluate(self, run: _Source) -> Dict[str, Dict[str, float]]: ...

def evaluate(
    qrels: _Source, run: _Source, measures: List[str], complete: bool = False
) -> Tuple[str, List[str], List[List[float]], List[str], List[bool]]: ...
def canonical_measure(text: str) -> str: ...
def columns_text(qids: List[str], docs: List[str], values: List[Any], qrels: bool) -> bytes: ...
def paired_test(
    baseline: List[float], other: List[float], test: str = "t", resamples: int = 10000, seed: int = 42
) -> Dict[str, float]: ...
def correct_p_values(p: List[float], method: str) -> List[float]: ...
def trec_families() -> List[str]: ...
