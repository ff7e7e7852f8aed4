"""Measure names in both dialects: trec_eval's (`ndcg_cut.10`, `P.5,10`, `map`) and
ir_measures' (`nDCG@10`, `P(rel=2)@5`, `AP`, `RBP(p=0.8)`), read by one parser (pure).

ir_measures syntax, as ir_measures 0.4 writes it:
    NAME                      AP, Rprec, NumQ, SetF, ...
    NAME@K                    nDCG@10, P@5, RR@10, ERR@20, IPrec@0.1 (a recall point)
    NAME(PARAM=VALUE,...)[@K] P(rel=2)@5, nDCG(gains={0:0,1:1,2:3})@10, RBP(rel=1,p=0.5),
                              AP(judged_only=True), SetF(beta=0.5)
Aliases: NDCG = nDCG, MRR = RR, MAP = AP, BPref = Bpref, RPrec = Rprec, Precision = P,
Recall = R. NumRelRet is NumRet(rel=N) at the request's relevance level (ir_measures:
NumRet(rel=1), its name for it).

A name that trec_eval knows (with its `.` parameters) is read as trec_eval's; any other as
ir_measures'. Each ir_measures name maps onto the engine's trec_eval measure with the same
numbers (nDCG@10 is ndcg_cut.10), or onto a measure of ours (ERR@k, RR@k, Judged without
a cutoff, RBP: see cascade.py), computed the way ir_measures' default provider for it
computes it, ties included. Parameters:
    rel=N          the relevance level of this measure alone (trec_eval's -l for it); without
                   it the request's level applies (1 unless -l says otherwise)
    judged_only    score only the retrieved documents that are judged (trec_eval's -J)
    gains={g:x}    nDCG's gain of each grade (whole numbers; unlisted grades keep their value)
    p              RBP's persistence (default 0.8, ir_measures'); beta: SetF's beta (1.0)
Measures that need other parameters than the request's are scored in a group of their own
(see grouped.py) and their values are named by their ir_measures name.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import catalog
from .families import FAMILIES as DECLARED
from .families import RBP_P, SET_F_BETA, Family

__all__ = [
    "MESSAGES",
    "MeasureRequest",
    "display_name",
    "ir_name",
    "ir_names",
    "is_mean",
    "parse_request",
]

MESSAGES = {
    "not_text": "a measure must be a string such as 'nDCG@10' or 'ndcg_cut.10', got {spec!r}",
    "syntax": (
        "'{spec}': cannot read this measure; ir_measures names look like nDCG@10, "
        "P(rel=2)@5, AP, RBP(p=0.8), and trec_eval names like ndcg_cut.10, P.5, map"
    ),
    "unknown": (
        "unknown measure '{name}' in '{spec}'; known ir_measures names: {ir_known}; "
        "known trec_eval names: {trec_known}"
    ),
    "needs_cutoff": "'{spec}': {name} needs a cutoff, e.g. {name}@10",
    "no_cutoff": "'{spec}': {name} takes no cutoff",
    "bad_cutoff": "'{spec}': the cutoff '{value}' is not a whole number >= 1",
    "bad_recall": "'{spec}': the recall point '{value}' is not a number in [0, 1]",
    "unknown_param": "'{spec}': {name} has no parameter '{param}'{allowed}",
    "repeated_param": "'{spec}': the parameter '{param}' is given twice",
    "bad_rel": "'{spec}': rel={value} is not a whole number >= 1",
    "bad_bool": "'{spec}': {param}={value} must be True or False",
    "bad_p": "'{spec}': p={value} is not a number between 0 and 1 (exclusive)",
    "bad_beta": "'{spec}': beta={value} is not a number > 0",
    "bad_gains": (
        "'{spec}': gains={value} must map whole-number grades to whole-number gains, "
        "e.g. gains={{0:0,1:1,2:3}}"
    ),
    "bad_dcg": "'{spec}': only dcg='log2' (trec_eval's nDCG) is available, not {value}",
}


# The ir_measures families by name (families.py declares them, gm_map aside: it has no
# ir_measures name), and their other spellings.
FAMILIES: dict[str, Family] = {family.ir: family for family in DECLARED if family.ir}
ALIASES = {alias: family.ir for family in FAMILIES.values() for alias in family.aliases}


@dataclass(frozen=True)
class MeasureRequest:
    """One measure as asked for, in either dialect.

    spec: as written. trec: the engine's `-m` argument, or None for one of ours (ours).
    family, cutoff: the ir_measures family and cutoff (None for a trec_eval name).
    rel: this measure's own relevance level (None: the request's); for RBP, the level that
        makes it binary (None: graded).
    gains: nDCG's gain table, sorted by grade; judged_only: trec_eval's -J for it alone.
    """

    spec: str
    trec: str | None = None
    ours: str | None = None
    family: str | None = None
    cutoff: int | float | None = None
    rel: int | None = None
    gains: tuple[tuple[int, int], ...] | None = None
    judged_only: bool = False
    p: float = RBP_P
    beta: float = SET_F_BETA
    params: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_trec_dialect(self) -> bool:
        return self.family is None

    def group(self, relevance_level: int) -> tuple:
        """The options this measure is scored with: (relevance level, gains, judged_only,
        SetF's beta). RBP's rel is its own parameter (binary RBP), not a level for the group.
        A SetF with another beta is scored apart: trec_eval takes one beta per run, the
        first given (`-m set_F.0.5 -m set_F` prints set_F with beta 0.5 alone)."""
        rel = self.rel if self.rel is not None and self.family != "RBP" else relevance_level
        beta = self.beta if self.family == "SetF" and self.beta != SET_F_BETA else None
        return (rel, self.gains, self.judged_only, beta)

    def name(self, *, with_rel: bool = True) -> str:
        """The canonical ir_measures name: nDCG@10, P(rel=2)@5, RBP(rel=1,p=0.5)."""
        assert self.family is not None
        if self.family == "NumRelRet":  # ir_measures' NumRelRet is NumRet(rel=1)
            return _ir_text("NumRet", None, rel=self.rel or 1)
        return _ir_text(
            self.family,
            self.cutoff,
            rel=self.rel if with_rel or self.family == "RBP" else None,
            gains=self.gains,
            judged_only=self.judged_only,
            p=self.p if self.family == "RBP" else None,
            beta=self.beta if self.family == "SetF" else None,
        )


def _ir_text(family, cutoff, *, rel=None, gains=None, judged_only=False, p=None, beta=None):
    params = []
    if rel is not None:
        params.append(f"rel={rel}")
    if p is not None and p != RBP_P:
        params.append(f"p={p!r}")
    if beta is not None and beta != SET_F_BETA:
        params.append(f"beta={beta!r}")
    if gains is not None:
        params.append("gains={" + ",".join(f"{g}:{x}" for g, x in gains) + "}")
    if judged_only:
        params.append("judged_only=True")
    text = family + (f"({','.join(params)})" if params else "")
    if cutoff is not None:
        text += f"@{catalog.cutoff_text(cutoff)}"
    return text


# --- reading -----------------------------------------------------------------------------

_SPEC = re.compile(
    r"\s*(?P<name>[A-Za-z][A-Za-z0-9_]*)\s*(?:\((?P<params>.*)\))?\s*(?:@\s*(?P<cutoff>[^@()]+?))?\s*"
)
_PARAM = re.compile(r"\s*(?P<key>[A-Za-z_]+)\s*=\s*(?P<value>\{[^{}]*\}|[^,{}]+?)\s*(?:,|$)")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_request(spec: str) -> MeasureRequest:
    """One measure name in either dialect. ValueError (MESSAGES) when it cannot be read."""
    if not isinstance(spec, str):
        raise ValueError(MESSAGES["not_text"].format(spec=spec))
    return _parse_request(spec)


# A request is a pure function of its text, read again on every evaluation (thousands of
# times in a test run): the readings are kept (errors are not, and are raised again).
@functools.lru_cache(maxsize=4096)
def _parse_request(spec: str) -> MeasureRequest:
    text = spec.strip()
    if catalog_name(text):
        return MeasureRequest(spec=text, trec=text)
    match = _SPEC.fullmatch(text)
    if match is None:
        base, dot, _ = text.partition(".")
        if dot and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", base):  # a trec_eval-style name
            raise ValueError(_unknown(base, spec))
        raise ValueError(MESSAGES["syntax"].format(spec=spec))
    name = ALIASES.get(match["name"], match["name"])
    family = FAMILIES.get(name)
    if family is None:
        raise ValueError(_unknown(match["name"], spec))
    params = _read_params(spec, name, family, match["params"])
    cutoff = _read_cutoff(spec, name, family, match["cutoff"])
    return _request(spec, name, family, cutoff, params)


def _unknown(name: str, spec: str) -> str:
    return MESSAGES["unknown"].format(
        name=name,
        spec=spec,
        ir_known=", ".join(FAMILIES),
        trec_known=", ".join(catalog.measure_names()),
    )


def catalog_name(text: str) -> bool:
    """Whether `text` is a trec_eval -m argument's measure (or nickname)."""
    return catalog.is_measure_name(text.partition(".")[0])


def _read_params(spec: str, name: str, family: Family, text: str | None) -> dict:
    params: dict = {}
    if text is None or not text.strip():
        return params
    position = 0
    while position < len(text):
        match = _PARAM.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(MESSAGES["syntax"].format(spec=spec))
        key, value = match["key"], match["value"].strip()
        if key not in family.params:
            allowed = f" (it has: {', '.join(family.params)})" if family.params else ""
            raise ValueError(
                MESSAGES["unknown_param"].format(spec=spec, name=name, param=key, allowed=allowed)
            )
        if key in params:
            raise ValueError(MESSAGES["repeated_param"].format(spec=spec, param=key))
        params[key] = _read_value(spec, key, value)
        position = match.end()
    return params


def _read_value(spec: str, key: str, value: str):
    if key == "rel":
        if not _INT.fullmatch(value) or int(value) < 1:
            raise ValueError(MESSAGES["bad_rel"].format(spec=spec, value=value))
        return int(value)
    if key == "judged_only":
        if value not in ("True", "False", "true", "false"):
            raise ValueError(MESSAGES["bad_bool"].format(spec=spec, param=key, value=value))
        return value in ("True", "true")
    if key == "p":
        if not _FLOAT.fullmatch(value) or not 0 < float(value) < 1:
            raise ValueError(MESSAGES["bad_p"].format(spec=spec, value=value))
        return float(value)
    if key == "beta":
        if not _FLOAT.fullmatch(value) or not float(value) > 0:
            raise ValueError(MESSAGES["bad_beta"].format(spec=spec, value=value))
        return float(value)
    if key == "dcg":
        if value.strip("'\"") != "log2":
            raise ValueError(MESSAGES["bad_dcg"].format(spec=spec, value=value))
        return "log2"
    # gains
    if not (value.startswith("{") and value.endswith("}")):
        raise ValueError(MESSAGES["bad_gains"].format(spec=spec, value=value))
    table: dict[int, int] = {}
    body = value[1:-1].strip()
    for item in body.split(",") if body else []:
        grade, colon, gain = item.partition(":")
        grade, gain = grade.strip(), gain.strip()
        if not colon or not _INT.fullmatch(grade) or not _INT.fullmatch(gain):
            raise ValueError(MESSAGES["bad_gains"].format(spec=spec, value=value))
        if int(grade) in table:
            raise ValueError(MESSAGES["bad_gains"].format(spec=spec, value=value))
        table[int(grade)] = int(gain)
    if not table:
        raise ValueError(MESSAGES["bad_gains"].format(spec=spec, value=value))
    return table


def _read_cutoff(spec: str, name: str, family: Family, text: str | None):
    if text is None:
        if family.cutoff in ("required", "recall"):
            raise ValueError(MESSAGES["needs_cutoff"].format(spec=spec, name=name))
        return None
    text = text.strip()
    if family.cutoff == "none":
        raise ValueError(MESSAGES["no_cutoff"].format(spec=spec, name=name))
    if family.cutoff == "recall":
        if not _FLOAT.fullmatch(text) or not 0 <= float(text) <= 1:
            raise ValueError(MESSAGES["bad_recall"].format(spec=spec, value=text))
        return float(text)
    if not _INT.fullmatch(text) or int(text) < 1:
        raise ValueError(MESSAGES["bad_cutoff"].format(spec=spec, value=text))
    return int(text)


def _request(spec: str, name: str, family: Family, cutoff, params: dict) -> MeasureRequest:
    gains = params.get("gains")
    if gains is not None:
        # Grades whose gain is their own value change nothing (ir_measures drops them too).
        gains = tuple(sorted((g, x) for g, x in gains.items() if g != x)) or None
    rel = params.get("rel")
    ours = family.ours if (cutoff is not None or family.trec_plain is None) else None
    if name == "Judged":  # Judged@k is the engine's judged.k; over the whole ranking, ours
        ours = "Judged" if cutoff is None else None
    if ours is not None:
        trec = None
    elif cutoff is None:
        trec = family.trec_plain or family.trec
    elif family.cutoff == "recall":
        trec = f"{family.trec}.{cutoff!r}"
    else:
        trec = f"{family.trec}.{cutoff}"
    if name == "NumRet" and rel is not None:
        trec = "num_rel_ret"
    beta = params.get("beta", SET_F_BETA)
    if name == "SetF" and beta != SET_F_BETA:
        trec = f"set_F.{beta!r}"
    return MeasureRequest(
        spec=spec,
        trec=trec,
        ours=ours,
        family=name,
        cutoff=cutoff,
        rel=rel,
        gains=gains,
        judged_only=params.get("judged_only", False),
        p=params.get("p", RBP_P),
        beta=beta,
        params=params,
    )


# --- naming ------------------------------------------------------------------------------

# trec_eval output names (P_5, ndcg_cut_10, map) as ir_measures names.
_IR_CUT = {f.trec: name for name, f in FAMILIES.items() if f.trec and f.cutoff != "none"}
_IR_PLAIN = {
    plain: name
    for name, f in FAMILIES.items()
    if (plain := f.trec_plain or (f.trec if f.cutoff == "none" else None))
}
# Families whose value depends on the relevance level (-l): their ir_measures name says rel.
_REL_FAMILIES = frozenset(name for name, f in FAMILIES.items() if f.by_level)


def ir_name(output_name: str, relevance_level: int = 1) -> str:
    """The ir_measures name of an output name: ndcg_cut_10 → nDCG@10, P_5 → P@5 (with
    relevance level 2: P(rel=2)@5), recip_rank → RR. Names that are ir_measures names
    already (a measure scored with options of its own: P(rel=2)@5, ERR@20) and trec_eval
    names with no ir_measures twin (gm_map, utility) are returned as they are."""
    if output_name in _IR_PLAIN:
        family, cutoff = _IR_PLAIN[output_name], None
    elif "@" in output_name or "(" in output_name or output_name in FAMILIES:
        return _with_level(output_name, relevance_level)
    else:
        base, _, number = output_name.rpartition("_")
        if base not in _IR_CUT or not number:
            return output_name
        family = _IR_CUT[base]
        try:
            cutoff = float(number) if base == "iprec_at_recall" else int(number)
        except ValueError:
            return output_name
    rel = relevance_level if relevance_level != 1 and family in _REL_FAMILIES else None
    if family == "NumRelRet":
        return _ir_text("NumRet", None, rel=relevance_level)
    return _ir_text(family, cutoff, rel=rel)


def _with_level(name: str, relevance_level: int) -> str:
    """An ir_measures name scored at the request's level: with rel=level when that is not
    ir_measures' default of 1 and the name sets no rel of its own."""
    if relevance_level == 1:
        return name
    try:
        request = parse_request(name)
    except ValueError:
        return name
    if request.family not in _REL_FAMILIES or request.rel is not None:
        return name
    return dataclasses.replace(request, rel=relevance_level).name()


def display_name(output_name: str) -> str:
    """How pages name a measure: the ir_measures name (nDCG@10, P@5, AP, RR)."""
    return ir_name(output_name)


# Output names whose "all" value is not the mean of the per-topic values: counts (summed),
# what has no per-topic value (runid, num_q, gm_map), geometric means; and the ir_measures
# names of counts.
_NOT_MEANS = catalog.COUNT_NAMES | catalog.SUMMARY_ONLY_NAMES | {"gm_map", "gm_bpref"}
_COUNT_FAMILIES = tuple(name for name, family in FAMILIES.items() if not family.mean)


def is_mean(output_name: str) -> bool:
    """Whether an output name's "all" value is the mean of its per-topic values (what
    intervals and paired comparisons are computed for)."""
    if output_name in _NOT_MEANS:
        return False
    return not output_name.startswith(_COUNT_FAMILIES)


def ir_names(output_names: Sequence[str], relevance_level: int = 1) -> dict[str, str]:
    return {name: ir_name(name, relevance_level) for name in output_names}
