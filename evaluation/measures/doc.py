"""How the measures page words a measure (pure): MeasureDoc, one entry, and the phrases the
entries share. The entries themselves are declared with their families (families.py)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MeasureDoc"]

TIES = (
    "trec_eval's order: score descending, then docno descending (byte order); 9.0.8 compares "
    "scores rounded to float32, 10.0 the doubles"
)
DOUBLES_ASCENDING = (
    "score descending (compared as doubles), then docno ascending (byte order), as "
    "ir_measures' {provider} provider orders them, whatever the trec_eval version"
)
UNJUDGED_NOT_RELEVANT = "not relevant (gain 0), but each takes a rank"
MISSING_ZERO = "a topic judged but absent from the run scores 0 and counts in the mean"
RANK_CUTOFFS = "k: rank cutoff (trec_eval's default list: 5, 10, 15, 20, 30, 100, 200, 500, 1000)"
REL = "rel=N: relevant from grade N (default: the request's -l, 1)"
JUDGED_ONLY = "judged_only=True: unjudged documents are removed before ranking (trec_eval -J)"


@dataclass(frozen=True)
class MeasureDoc:
    """One entry of the measures page. `family` and `mean` are its Family's (filled in by
    reference.py)."""

    ir: str  # ir_measures name, e.g. nDCG@k
    trec: str  # trec_eval -m name, e.g. ndcg_cut.k ("" when trec_eval has none)
    title: str
    parameters: str
    formula: str
    ties: str = TIES
    unjudged: str = UNJUDGED_NOT_RELEVANT
    complete: str = MISSING_ZERO
    family: str = ""  # the ir_measures family, to tell which exist here
    mean: bool = True  # its "all" value is the mean over topics (dashboards offer it)

    @property
    def trec_family(self) -> str:
        return self.trec.partition(".")[0]
