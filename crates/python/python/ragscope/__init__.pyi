import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Union

from ragscope._native import FormatError as FormatError

Qrels = Union[Mapping[str, Mapping[str, int]], str, os.PathLike, Any]
RunLike = Union[Mapping[str, Mapping[str, float]], str, os.PathLike, Any]

__version__: str

class Measure(str):
    def __new__(cls, text: str) -> Measure: ...

class Metric(NamedTuple):
    query_id: str
    measure: Any
    value: float

class TieGroup(NamedTuple):
    query_id: str
    score: float
    first_rank: int
    last_rank: int
    inside: List[str]
    outside: List[str]

class Report:
    measures: List[Any]
    baseline: str
    means: Dict[str, Dict[Any, float]]
    tests: Dict[str, Dict[Any, Dict[str, float]]]
    p_values: Dict[str, Dict[Any, float]]
    test: str
    correction: str
    alpha: float
    def significant(self, system: str, measure: Any) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_dataframe(self) -> Any: ...
    def to_markdown(self) -> str: ...
    def to_latex(self) -> str: ...

def parse_measure(text: Union[str, Any]) -> Measure: ...
def evaluate(
    qrels: Qrels,
    run: RunLike,
    measures: Union[str, Iterable[Any]],
    per_query: bool = False,
    as_frame: bool = False,
    complete: bool = False,
) -> Any: ...
def calc_aggregate(measures: Iterable[Any], qrels: Qrels, run: RunLike) -> Dict[Any, float]: ...
def iter_calc(measures: Iterable[Any], qrels: Qrels, run: RunLike) -> Iterator[Metric]: ...
def compare(
    qrels: Qrels,
    runs: Mapping[str, RunLike],
    measures: Iterable[Any],
    baseline: Optional[str] = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    resamples: int = 10000,
    seed: int = 42,
) -> Report: ...
def tie_report(run: RunLike, k: int) -> List[TieGroup]: ...
def register_ir_measures() -> Any: ...
