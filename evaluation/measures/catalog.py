"""Which measures exist, how trec_eval names them, and how a `-m` argument is read.

The table follows trec_eval 9.0.8's `measures.c`: measures are computed and printed in the
order of that table, whatever order they were asked for in. Our `judged` comes last.

`-m` syntax (trec_eval's `mark_measure` and `get_long_cutoffs`/`get_double_cutoffs`):
    NAME              the measure with its default cutoffs
    NAME.C1,C2,...    the measure with these cutoffs; trec_eval sorts them ascending and
                      refuses duplicates and non-positive values
    official          trec_eval's nickname for the set it prints when `-m` is not given
When one measure is named several times, trec_eval keeps the first cutoff list given for it
(`te_init_meas_a_double_cut_long` stops at the first matching argument) and uses the default
cutoffs only when no list was given at all: `-m P.5 -m P.10` prints P_5 alone, and so do we.
We are stricter than trec_eval's `atol`/`atof`: a cutoff that is not a plain number, and a
cutoff list on a measure that takes none, are errors rather than silently read or ignored.
"""

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["DEFAULT_MEASURES", "Measure", "Options", "parse_measures"]


@dataclass(frozen=True)
class Options:
    """How to score, in trec_eval's terms.

    relevance_level: `-l`: binary measures call a document relevant when its grade >= this.
        nDCG ignores it (trec_eval does too).
    gain: nDCG gain of grade g >= 0: "linear" is g (trec_eval), "exp" is 2^g - 1. Binary
        measures are unchanged by "exp" (a grade g >= l exactly when 2^g - 1 >= 2^l - 1).
    trec_eval_version: 9 follows trec_eval 9.0.8 (scores rounded to float32 before ranking,
        iprec_at_recall's recall cutoff as (long)(p * R + 0.9)); 10 follows trec_eval 10.0
        (double scores, lround(p * R), and `-c` lists the topics missing from the run).
    depth: `-M`: only the first `depth` documents of each ranking count (None: all).
    complete: `-c`: topics judged in the qrels but absent from the run score 0 and count in
        every mean; otherwise they are skipped.
    judged_only: `-J`: documents without a judgment (or with a negative grade) are dropped
        from each ranking after the depth cut, and the rest ranked 1, 2, ... again.
    num_docs_in_coll: `-N`: the number of documents in the collection (trec_eval's utility
        measure uses it; 0 by default, as in trec_eval).
    """

    relevance_level: int = 1
    gain: Literal["linear", "exp"] = "linear"
    trec_eval_version: Literal[9, 10] = 9
    depth: int | None = None
    complete: bool = False
    judged_only: bool = False
    num_docs_in_coll: int = 0

    def __post_init__(self) -> None:
        if not _is_int(self.relevance_level) or self.relevance_level < 1:
            raise ValueError(
                f"relevance_level must be an integer >= 1, got {self.relevance_level!r}"
            )
        if self.gain not in ("linear", "exp"):
            raise ValueError(f"gain must be 'linear' or 'exp', got {self.gain!r}")
        if self.trec_eval_version not in (9, 10) or isinstance(self.trec_eval_version, bool):
            raise ValueError(f"trec_eval_version must be 9 or 10, got {self.trec_eval_version!r}")
        if self.depth is not None and (not _is_int(self.depth) or self.depth < 1):
            raise ValueError(f"depth must be None or an integer >= 1, got {self.depth!r}")
        if not isinstance(self.complete, bool):
            raise ValueError(f"complete must be True or False, got {self.complete!r}")
        if not isinstance(self.judged_only, bool):
            raise ValueError(f"judged_only must be True or False, got {self.judged_only!r}")
        if not _is_int(self.num_docs_in_coll) or self.num_docs_in_coll < 0:
            raise ValueError(
                f"num_docs_in_coll must be an integer >= 0, got {self.num_docs_in_coll!r}"
            )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class _Kind:
    """One row of trec_eval's measure table, reduced to what printing and parsing need."""

    cutoffs: Literal["none", "int", "float"] = "none"
    defaults: tuple[int, ...] | tuple[float, ...] = ()
    per_topic: bool = True  # printed on the per-topic lines of `-q` (gm_map, num_q are not)
    integer: bool = False  # printed with %ld (counts) rather than %6.4f
    at_most_one: bool = True  # float cutoffs are recall points in [0, 1] (not R multiples)


_RANK_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# trec_eval 9.0.8 measures.c order, restricted to what we compute, then ours.
_KINDS: dict[str, _Kind] = {
    "runid": _Kind(per_topic=False),
    "num_q": _Kind(per_topic=False, integer=True),
    "num_ret": _Kind(integer=True),
    "num_rel": _Kind(integer=True),
    "num_rel_ret": _Kind(integer=True),
    "map": _Kind(),
    "gm_map": _Kind(per_topic=False),
    "Rprec": _Kind(),
    "bpref": _Kind(),
    "recip_rank": _Kind(),
    "iprec_at_recall": _Kind("float", _RECALL_POINTS),
    "P": _Kind("int", _RANK_CUTOFFS),
    "recall": _Kind("int", _RANK_CUTOFFS),
    "ndcg": _Kind(),
    "ndcg_cut": _Kind("int", _RANK_CUTOFFS),
    "map_cut": _Kind("int", _RANK_CUTOFFS),
    "success": _Kind("int", (1, 5, 10)),
    # -R prefs / qrels_prefs (evaluation.measures.prefs) and -R qrels_jg (judgment_groups)
    "prefs_num_prefs_poss": _Kind(integer=True),
    "prefs_num_prefs_ful": _Kind(integer=True),
    "prefs_num_prefs_ful_ret": _Kind(integer=True),
    "prefs_simp": _Kind(),
    "prefs_pair": _Kind(),
    "prefs_avgjg": _Kind(),
    "prefs_avgjg_Rnonrel": _Kind(),
    "prefs_simp_ret": _Kind(),
    "prefs_pair_ret": _Kind(),
    "prefs_avgjg_ret": _Kind(),
    "prefs_avgjg_Rnonrel_ret": _Kind(),
    "prefs_simp_imp": _Kind(),
    "prefs_pair_imp": _Kind(),
    "prefs_avgjg_imp": _Kind(),
    "map_avgjg": _Kind(),
    "P_avgjg": _Kind("int", _RANK_CUTOFFS),
    "Rprec_mult_avgjg": _Kind("float", _R_MULTIPLES, at_most_one=False),
    "judged": _Kind("int", _RANK_CUTOFFS),
}

# trec_eval's "official" nickname: what it prints when no -m is given.
DEFAULT_MEASURES: tuple[str, ...] = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
# trec_eval's preference nicknames (measures.c): "prefs" is the main set, "all_prefs" all.
_ALL_PREFS = tuple(name for name in _KINDS if name.startswith("prefs_"))
_PREFS_OFFICIAL = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
)
_NICKNAMES = {
    "official": DEFAULT_MEASURES,
    "prefs": ("runid", "num_q", *_PREFS_OFFICIAL),
    "all_prefs": ("runid", "num_q", *_ALL_PREFS),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

_INT_CUTOFF = re.compile(r"[0-9]+")
_FLOAT_CUTOFF = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


@dataclass(frozen=True)
class Measure:
    """A measure with its cutoffs (ranks, or recall points for iprec_at_recall), sorted."""

    name: str
    cutoffs: tuple[int, ...] | tuple[float, ...] = ()

    @property
    def output_names(self) -> list[str]:
        """trec_eval's printed names: P_10, iprec_at_recall_0.10 ("%s_%3.2f"), map."""
        kind = _KINDS[self.name]
        if kind.cutoffs == "int":
            return [f"{self.name}_{k}" for k in self.cutoffs]
        if kind.cutoffs == "float":
            return [f"{self.name}_{p:3.2f}" for p in self.cutoffs]
        return [self.name]

    @property
    def per_topic(self) -> bool:
        return _KINDS[self.name].per_topic

    @property
    def integer(self) -> bool:
        return _KINDS[self.name].integer


def parse_measures(specs: Sequence[str]) -> list[Measure]:
    """Read trec_eval `-m` arguments (one per element) into measures in trec_eval's order.

    Raises ValueError for an unknown measure, a malformed, non-positive or duplicate
    cutoff, or cutoffs on a measure that takes none.
    """
    if isinstance(specs, str):
        specs = [specs]
    marked: set[str] = set()
    cutoff_lists: dict[str, tuple[int, ...] | tuple[float, ...]] = {}
    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"a measure must be a string such as 'ndcg_cut.10', got {spec!r}")
        name, dot, params = spec.partition(".")
        if name in _NICKNAMES:
            if dot:
                raise ValueError(f"'{spec}': the nickname '{name}' takes no cutoffs")
            marked.update(_NICKNAMES[name])
            continue
        kind = _KINDS.get(name)
        if kind is None:
            known = ", ".join([*_KINDS, *_NICKNAMES])
            raise ValueError(f"unknown measure '{name}' in '{spec}'; known measures: {known}")
        marked.add(name)
        if not dot:
            continue
        if kind.cutoffs == "none":
            raise ValueError(f"'{spec}': the measure '{name}' takes no cutoffs")
        if name not in cutoff_lists:
            cutoff_lists[name] = _parse_cutoffs(spec, params, kind)
    if not marked:
        raise ValueError("no measure requested")
    return [
        Measure(name, cutoff_lists.get(name, kind.defaults if kind.cutoffs != "none" else ()))
        for name, kind in _KINDS.items()
        if name in marked
    ]


def _parse_cutoffs(spec: str, params: str, kind: _Kind) -> tuple[int, ...] | tuple[float, ...]:
    values: list = []
    for text in params.split(","):
        if kind.cutoffs == "int":
            if not _INT_CUTOFF.fullmatch(text) or int(text) < 1:
                raise ValueError(f"'{spec}': cutoff '{text}' is not a positive integer")
            values.append(int(text))
        elif not kind.at_most_one:  # multiples of R (Rprec_mult_avgjg)
            if not _FLOAT_CUTOFF.fullmatch(text):
                raise ValueError(f"'{spec}': '{text}' is not a non-negative number")
            values.append(float(text))
        else:
            if not _FLOAT_CUTOFF.fullmatch(text) or float(text) > 1.0:
                raise ValueError(f"'{spec}': recall point '{text}' is not a number in [0, 1]")
            values.append(float(text))
    values.sort()
    for previous, current in itertools.pairwise(values):
        if previous == current:
            raise ValueError(f"'{spec}': duplicate cutoff {current} (trec_eval refuses them too)")
    return tuple(values)


# Names printed with %ld, and names with no per-topic line (runid has no value at all).
COUNT_NAMES = frozenset(name for name, kind in _KINDS.items() if kind.integer)
SUMMARY_ONLY_NAMES = frozenset(name for name, kind in _KINDS.items() if not kind.per_topic)


# How people read measure names (STYLE.md: trec_eval notation in code, nDCG@10 on pages).
_DISPLAY = {
    "ndcg_cut": "nDCG@{}",
    "P": "P@{}",
    "recall": "Recall@{}",
    "map_cut": "MAP@{}",
    "success": "Success@{}",
    "judged": "Judged@{}",
    "iprec_at_recall": "iP@R={}",
}
_DISPLAY_PLAIN = {
    "ndcg": "nDCG",
    "map": "MAP",
    "gm_map": "GM-MAP",
    "Rprec": "R-Prec",
    "bpref": "bpref",
    "recip_rank": "MRR",
    "num_q": "Topics",
    "num_ret": "Retrieved",
    "num_rel": "Relevant",
    "num_rel_ret": "Relevant retrieved",
}


def display_name(output_name: str) -> str:
    """``ndcg_cut_10`` → ``nDCG@10``, ``recip_rank`` → ``MRR``; unknown names unchanged."""
    if output_name in _DISPLAY_PLAIN:
        return _DISPLAY_PLAIN[output_name]
    base, _, cutoff = output_name.rpartition("_")
    if base in _DISPLAY and cutoff:
        return _DISPLAY[base].format(cutoff)
    return output_name
