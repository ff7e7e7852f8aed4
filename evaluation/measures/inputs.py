"""Which measures each of trec_eval's relevance inputs (`-R`) can compute.

trec_eval reads qrels by default; `-R prefs` reads preferences, `-R qrels_prefs` a qrels file
as preferences, `-R qrels_jg` a qrels file whose iteration field names judgment groups. Each
measure needs one kind of input (trec_eval stops with "Can't calculate measure" otherwise);
runid and num_q work with any. We refuse the mismatch up front, naming what would work.
"""

from collections.abc import Iterable

from evaluation.trec import REL_FORMATS

from .catalog import Measure

__all__ = ["REL_FORMATS", "check_measures", "default_measures", "measures_for"]

_ANY = frozenset({"runid", "num_q"})
_JUDGMENT_GROUPS = frozenset({"map_avgjg", "P_avgjg", "Rprec_mult_avgjg"})


def measures_for(name: str) -> tuple[str, ...]:
    """The -R formats that can compute the measure ``name``."""
    if name in _ANY:
        return REL_FORMATS
    if name.startswith("prefs_"):
        return ("prefs", "qrels_prefs")
    if name in _JUDGMENT_GROUPS:
        return ("qrels_jg",)
    return ("qrels",)


def default_measures(rel_format: str) -> tuple[str, ...]:
    """What is scored when no measure is named: trec_eval's "official" set for qrels, and
    its nickname for the other inputs (trec_eval itself would fail on "official" there)."""
    return {"qrels": ("official",), "qrels_jg": ("qrels_jg",)}.get(rel_format, ("prefs",))


def check_measures(rel_format: str, measures: Iterable[Measure]) -> None:
    """ValueError unless every measure can be computed from ``rel_format``."""
    if rel_format not in REL_FORMATS:
        raise ValueError(f"unknown -R format '{rel_format}'; known: {', '.join(REL_FORMATS)}")
    for measure in measures:
        formats = measures_for(measure.name)
        if rel_format not in formats:
            needs = " or ".join(f"-R {f}" for f in formats)
            raise ValueError(
                f"measure '{measure.name}' needs {needs}; with -R {rel_format} use "
                f"-m {default_measures(rel_format)[0]}"
                + (" or -m all_prefs" if rel_format in ("prefs", "qrels_prefs") else "")
            )
