from typing import Dict, Iterable, List, Mapping, Set

supported_measures: Set[str]
supported_nicknames: Dict[str, Set[str]]

def parse_run(f_run: Iterable[str]) -> Dict[str, Dict[str, float]]: ...
def parse_qrel(f_qrel: Iterable[str]) -> Dict[str, Dict[str, int]]: ...
def compute_aggregated_measure(measure: str, values: List[float]) -> float: ...

class RelevanceEvaluator:
    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None: ...
    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]: ...
