"""Which measures exist, how trec_eval names them, and how a `-m` argument is read.

The table follows trec_eval's `measures.c`: measures are computed and printed in the order
of that table, whatever order they were asked for in. Our `judged` comes last.

`-m` syntax (trec_eval's `mark_measure` and `get_long_cutoffs`/`get_double_cutoffs`/
`get_double_params`/`get_param_pairs`):
    NAME              the measure with its default parameters
    NAME.C1,C2,...    rank cutoffs (P, recall, ndcg_cut, ...: read as trec_eval's atol reads
                      them, 23.4 is 23) or recall points / multiples of R (iprec_at_recall,
                      Rprec_mult); sorted ascending, duplicates and non-positive ranks refused
    NAME.A,B,...      numbers in the order given: utility.A,B,C,D, 11pt_avg.P1,P2,...,
                      set_F.BETA, relstring.N; printed in the name (utility_2,-1,0,0)
    NAME.L=G,...      a gain G for grade L (ndcg, ndcg_rel, Rndcg, G, dcg, ideal_dcg, rbp;
                      rbp also takes p=0.8); printed in the name (ndcg_1=3,2=9)
    official, all_trec, set   trec_eval's nicknames
When one measure is named several times, trec_eval keeps the first cutoff list given for it
(`te_init_meas_a_double_cut_long` stops at the first matching argument) and uses the default
cutoffs only when no list was given at all: `-m P.5 -m P.10` prints P_5 alone, and so do we.
We are stricter than trec_eval's `atol`/`atof` elsewhere: a parameter that is not a plain
number, and parameters on a measure that takes none, are errors rather than silently read
or ignored.
"""

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["ALL_TREC", "DEFAULT_MEASURES", "SET_MEASURES", "Measure", "Options", "parse_measures"]


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
    """One row of trec_eval's measure table, reduced to what printing and parsing need.

    params: how `NAME.PARAMS` is read, as trec_eval's te_init_meas_* read it:
        "none"   no parameters
        "int"    rank cutoffs (get_long_cutoffs: atol, sorted, > 0, no duplicates)
        "float"  recall points or multiples of R (get_double_cutoffs: atof, sorted, no
                 duplicates), printed "%3.2f"
        "list"   numbers kept in the order given (get_double_params), printed as given
        "pairs"  `level=gain` pairs, and `p=0.8` for rbp (get_param_pairs), printed as given
    """

    params: Literal["none", "int", "float", "list", "pairs"] = "none"
    defaults: tuple = ()
    per_topic: bool = True  # printed on the per-topic lines of `-q` (gm_map, num_q are not)
    integer: bool = False  # printed with %ld (counts) rather than %6.4f
    summary: bool = True  # has an "all" line (relstring has not)
    since_10: bool = False  # trec_eval 10.0 added it; 9.0.8 does not know it


_RANK_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# trec_eval 10.0's measures.c order (9.0.8's is the same without dcg, ideal_dcg, rbp,
# rbp_resid and unj), restricted to the measures over qrels and runs, then ours.
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
    "relstring": _Kind("list", (10.0,), summary=False),
    "recall": _Kind("int", _RANK_CUTOFFS),
    "infAP": _Kind(),
    "gm_bpref": _Kind(per_topic=False),
    "Rprec_mult": _Kind("float", _R_MULTIPLES),
    "utility": _Kind("list", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": _Kind("list", _RECALL_POINTS),
    "binG": _Kind(),
    "G": _Kind("pairs"),
    "dcg": _Kind("pairs", since_10=True),
    "ideal_dcg": _Kind("pairs", since_10=True),
    "ndcg": _Kind("pairs"),
    "ndcg_rel": _Kind("pairs"),
    "Rndcg": _Kind("pairs"),
    "ndcg_cut": _Kind("int", _RANK_CUTOFFS),
    "map_cut": _Kind("int", _RANK_CUTOFFS),
    "relative_P": _Kind("int", _RANK_CUTOFFS),
    "success": _Kind("int", (1, 5, 10)),
    "set_P": _Kind(),
    "set_relative_P": _Kind(),
    "set_recall": _Kind(),
    "set_map": _Kind(),
    "set_F": _Kind("list", (1.0,)),
    "num_nonrel_judged_ret": _Kind(integer=True),
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
    "Rprec_mult_avgjg": _Kind("float", _R_MULTIPLES),
    "yaap": _Kind(),
    "rbp": _Kind("pairs", since_10=True),
    "rbp_resid": _Kind("pairs", since_10=True),
    "unj": _Kind("int", (5, 10, 20), since_10=True),
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
# measures.c's trec_names (10.0; 9.0.8 has no unj, rbp, rbp_resid) and set_names.
ALL_TREC: tuple[str, ...] = (
    *DEFAULT_MEASURES,
    *("relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility"),
    *("11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut"),
    *("ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map"),
    *("set_F", "num_nonrel_judged_ret"),
)
SET_MEASURES: tuple[str, ...] = (
    *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P"),
    *("set_recall", "set_relative_P", "set_map", "set_F"),
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
    "all_trec": ALL_TREC,
    "set": SET_MEASURES,
    "prefs": ("runid", "num_q", *_PREFS_OFFICIAL),
    "all_prefs": ("runid", "num_q", *_ALL_PREFS),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

_LEVEL = re.compile(r"[0-9]+")  # a grade level (ASCII: str.isdigit() also takes "²")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_INT_CUTOFF = re.compile(r"[0-9]+(\.[0-9]*)?")
_PAIR_NAME = re.compile(r"[0-9]+|p")


@dataclass(frozen=True)
class Measure:
    """A measure with its parameters.

    cutoffs: rank cutoffs or recall points, sorted; or the numbers of a "list" measure
        (utility's four coefficients, 11pt_avg's recall points, set_F's beta,
        relstring's length) in the order given.
    pairs: a "pairs" measure's `level=gain` pairs (and rbp's `p=...`), in the order given.
    given: the parameter text from the command line, for the printed name of "list" and
        "pairs" measures (`utility_2,-1,0,0`, `ndcg_1=3,2=9`); None when defaulted.
    """

    name: str
    cutoffs: tuple = ()
    pairs: tuple[tuple[str, float], ...] = ()
    given: str | None = None

    @property
    def output_names(self) -> list[str]:
        """trec_eval's printed names: P_10, iprec_at_recall_0.10 ("%s_%3.2f"), map,
        utility_2,-1,0,0."""
        kind = _KINDS[self.name]
        if kind.params == "int":
            return [f"{self.name}_{k}" for k in self.cutoffs]
        if kind.params == "float":
            return [f"{self.name}_{p:3.2f}" for p in self.cutoffs]
        if self.given is not None:
            return [f"{self.name}_{self.given}"]
        return [self.name]

    @property
    def singles(self) -> list[tuple[str, str, int | float | None]]:
        """Each output name with the `-m` argument that prints it alone and its cutoff as a
        number (a rank cutoff or recall point; None for the others): P.5,10 gives
        (P_5, P.5, 5) and (P_10, P.10, 10); set_F.0.5 gives (set_F_0.5, set_F.0.5, None)."""
        if _KINDS[self.name].params in ("int", "float"):
            return [
                (name, f"{self.name}.{cutoff_text(cutoff)}", cutoff)
                for name, cutoff in zip(self.output_names, self.cutoffs, strict=True)
            ]
        spec = self.name if self.given is None else f"{self.name}.{self.given}"
        return [(name, spec, None) for name in self.output_names]

    @property
    def per_topic(self) -> bool:
        return _KINDS[self.name].per_topic

    @property
    def integer(self) -> bool:
        return _KINDS[self.name].integer

    def pair(self, name: str, default: float) -> float:
        """The value of the first `name=value` pair given, else `default`."""
        return next((value for key, value in self.pairs if key == name), default)

    @property
    def level_gains(self) -> dict[int, float]:
        """The `level=gain` pairs as trec_eval's setup_gains reads them (the first pair given
        for a level wins; names that are not levels, such as rbp's p, are left out)."""
        gains: dict[int, float] = {}
        for key, value in self.pairs:
            if _LEVEL.fullmatch(key):
                gains.setdefault(int(key), value)
        return gains


def parse_measures(specs: Sequence[str], *, trec_eval_version: int = 10) -> list[Measure]:
    """Read trec_eval `-m` arguments (one per element) into measures in trec_eval's order.

    `trec_eval_version` picks the measure table: 9.0.8's lacks dcg, ideal_dcg, rbp,
    rbp_resid and unj (naming one is an error; `all_trec` leaves them out).

    Raises ValueError for an unknown measure, a malformed, non-positive or duplicate
    cutoff, or parameters on a measure that takes none.
    """
    if isinstance(specs, str):
        specs = [specs]
    specs = tuple(specs)
    if not all(isinstance(spec, str) for spec in specs):  # not kept: refused in order below
        return list(_parse_measures.__wrapped__(specs, trec_eval_version))
    return list(_parse_measures(specs, trec_eval_version))


# The measures are a pure function of the arguments, read again on every evaluation
# (thousands of times in a test run): the readings are kept (errors are raised again).
@functools.lru_cache(maxsize=1024)
def _parse_measures(specs: tuple[str, ...], trec_eval_version: int) -> tuple[Measure, ...]:
    marked: set[str] = set()
    parameters: dict[str, Measure] = {}
    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"a measure must be a string such as 'ndcg_cut.10', got {spec!r}")
        name, dot, params = spec.partition(".")
        if name in _NICKNAMES:
            if dot:
                raise ValueError(f"'{spec}': the nickname '{name}' takes no cutoffs")
            marked.update(
                n for n in _NICKNAMES[name] if trec_eval_version == 10 or not _KINDS[n].since_10
            )
            continue
        kind = _KINDS.get(name)
        if kind is None:
            known = ", ".join([*_KINDS, *_NICKNAMES])
            raise ValueError(f"unknown measure '{name}' in '{spec}'; known measures: {known}")
        if kind.since_10 and trec_eval_version != 10:
            raise ValueError(
                f"'{spec}': trec_eval 9.0.8 has no measure '{name}' (it came with 10.0: "
                "use --trec-eval-version 10)"
            )
        marked.add(name)
        if not dot:
            continue
        if kind.params == "none":
            raise ValueError(f"'{spec}': the measure '{name}' takes no cutoffs")
        if name not in parameters:
            parameters[name] = _parse_parameters(spec, name, params, kind)
    if not marked:
        raise ValueError("no measure requested")
    return tuple(
        parameters.get(name) or Measure(name, kind.defaults)
        for name, kind in _KINDS.items()
        if name in marked
    )


def _parse_parameters(spec: str, name: str, params: str, kind: _Kind) -> Measure:
    texts = params.split(",")
    if kind.params == "pairs":
        pairs = []
        for text in texts:
            key, equals, value = text.partition("=")
            if not equals or not _PAIR_NAME.fullmatch(key) or not _NUMBER.fullmatch(value):
                raise ValueError(
                    f"'{spec}': '{text}' is not a pair such as 2=9 (a gain for grade 2)"
                    + (" or p=0.8" if name.startswith("rbp") else "")
                )
            pairs.append((key, float(value)))
        return Measure(name, (), tuple(pairs), params)
    values: list = []
    for text in texts:
        if kind.params == "int":
            # trec_eval reads a cutoff with atol: 23.4 is 23.
            if not _INT_CUTOFF.fullmatch(text) or int(text.partition(".")[0]) < 1:
                raise ValueError(f"'{spec}': cutoff '{text}' is not a positive integer")
            values.append(int(text.partition(".")[0]))
        elif not _NUMBER.fullmatch(text):
            raise ValueError(f"'{spec}': '{text}' is not a number")
        else:
            values.append(float(text))
    if kind.params == "list":
        if name == "utility" and len(values) != 4:
            raise ValueError(f"'{spec}': utility takes 4 coefficients (a,b,c,d), got {len(values)}")
        if name in ("set_F", "relstring") and len(values) != 1:
            raise ValueError(f"'{spec}': {name} takes one number, got {len(values)}")
        return Measure(name, tuple(values), (), params)
    if name == "iprec_at_recall" and not all(0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"'{spec}': a recall point is not a number in [0, 1]")
    values.sort()
    for previous, current in itertools.pairwise(values):
        if previous == current:
            raise ValueError(f"'{spec}': duplicate cutoff {current} (trec_eval refuses them too)")
    return Measure(name, tuple(values))


# Names printed with %ld, and names with no per-topic line (runid has no value at all).
COUNT_NAMES = frozenset(name for name, kind in _KINDS.items() if kind.integer)
SUMMARY_ONLY_NAMES = frozenset(name for name, kind in _KINDS.items() if not kind.per_topic)
GEOMETRIC_NAMES = frozenset({"gm_map", "gm_bpref"})  # means are exp(mean of the logs)


def cutoff_text(value: int | float) -> str:
    """A cutoff as `-m` arguments write it: 10, 0.5 (a float's shortest round-trip text)."""
    return repr(value) if isinstance(value, float) else str(value)


def is_measure_name(name: str) -> bool:
    """Whether trec_eval knows `name` as a measure or a nickname (official, ...)."""
    return name in _KINDS or name in _NICKNAMES


def measure_names() -> list[str]:
    """trec_eval's measure names and nicknames, in its table order."""
    return [*_KINDS, *_NICKNAMES]
