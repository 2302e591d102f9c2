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

# The RAG half (ragscope/_rag.py): the CLI's `--format json` documents as dicts and lists.
_Path = Union[str, os.PathLike]
_Paths = Union[_Path, List[_Path]]

def udcg(
    input_or_qrels: _Path, runs: Optional[_Paths] = None, *, utilities: Optional[_Path] = None,
    model: Optional[str] = None, gamma: Union[None, float, str] = None, k: Optional[int] = None,
    binary: bool = False, compat: str = "paper", complete: bool = False, per_query: bool = False,
) -> Any: ...
def erag(
    qrels: _Path, runs: _Paths, outcomes: _Path, measures: Union[str, List[str]] = ..., *,
    complete: bool = False, per_query: bool = False,
) -> Dict[str, Any]: ...
def correlate(
    contexts: _Path, *, utilities: Optional[_Path] = None, theta: Optional[_Path] = None,
    k: Optional[int] = None, gamma: float = ..., sensitivity: Optional[List[int]] = None,
    resamples: int = 1000, seed: int = 0, reference: str = "UDCG",
) -> Dict[str, Any]: ...
def nugget_scores(assignments: _Paths, *, compat: str = "paper", per_topic: bool = False) -> Dict[str, Any]: ...
def elo(
    games: _Path, *, k: float = 32.0, initial: float = 1000.0, tournaments: int = 10, seed: int = 0,
    shuffle: bool = True, compat: Optional[str] = None,
) -> Dict[str, Any]: ...
def bradley_terry(games: _Path, *, initial: float = 1000.0, resamples: int = 1000, seed: int = 0) -> Dict[str, Any]: ...
def agreement(a: _Path, b: _Path, *, kind: Optional[str] = None, measure: Optional[str] = None) -> Dict[str, Any]: ...
def citations(results: _Paths, *, per_answer: bool = False) -> Dict[str, Any]: ...
def graded(
    qrels: _Path, runs: _Paths, *, k: int = 10, compat: str = "trec-eval", per_topic: bool = False
) -> Dict[str, Any]: ...
