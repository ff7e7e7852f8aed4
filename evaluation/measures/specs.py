"""The scoring options, read one way wherever they come from (pure: no Django).

The command line (`evaluate -m -l -c -M --gain --trec-eval-version`), the dashboards' query
string (evaluation.forms), the API's scoring parameters, run upload and evaluation request
(evaluation.api) and the background tasks' arguments all hand their raw values to
`read_scoring_options`, or a field to its reader, so every input shape accepts the same
values and refuses the rest with the same words (MESSAGES).

    read_scoring_options(measures=["nDCG@10", "map"], gain="exp", relevance_level="2")
        -> ScoringOptions(measures=("nDCG@10", "map"), options=Options(gain="exp", ...))

Values may be typed (argparse, JSON) or text (a query string, a form); None (or "") means
the default. Measures are names in either dialect (dialects.py). `canonical_measures` is the
dashboards' canonical form of a measure list, and `options_key` the key stored evaluations
are found by; both are unchanged for trec_eval names, so evaluations stored before ir_measures
names existed are found again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import catalog
from .catalog import DEFAULT_MEASURES, Options
from .dialects import is_mean, parse_request
from .grouped import output_names, parse_requests

__all__ = [
    "MAX_MEASURES",
    "MAX_RELEVANCE_LEVEL",
    "MESSAGES",
    "OptionsError",
    "ScoringOptions",
    "canonical_measures",
    "options_key",
    "read_complete",
    "read_depth",
    "read_gain",
    "read_measures",
    "read_relevance_level",
    "read_scoring_options",
    "read_trec_eval_version",
]

MAX_RELEVANCE_LEVEL = 32767
MAX_DEPTH = 2**31 - 1
MAX_MEASURES = 50
GAINS = ("linear", "exp")

MESSAGES = {
    "gain": "The gain is 'linear' (the grade, trec_eval's) or 'exp' (2^grade - 1), not {value}.",
    "relevance_level": ("The relevance level (-l) is a whole number from 1 to 32767, not {value}."),
    "depth": "The depth (-M) is a whole number from 1 to 2147483647, or empty for all, not {value}.",
    "trec_eval_version": "The trec_eval version is 9 (9.0.8) or 10 (10.0), not {value}.",
    "complete": "Complete (-c) is true or false, not {value}.",
    "no_measures": "Choose at least one measure, e.g. nDCG@10 or ndcg_cut.10.",
    "too_many_measures": "Choose at most {n} measures.",
    "measure_text": "A measure is a name such as nDCG@10 or ndcg_cut.10, not {value}.",
    "not_a_mean": (
        "'{spec}': dashboards show means over topics, and {name} is not one (counts and "
        "gm_map are not); choose a measure such as nDCG@10, P@10, AP, RR or ERR@20."
    ),
}

_DEFAULTS = Options()
_WHOLE = re.compile(r"[+-]?[0-9]+")
_TRUE = frozenset({"true", "1", "on", "yes"})
_FALSE = frozenset({"false", "0", "off", "no", ""})


class OptionsError(ValueError):
    """A scoring option that cannot be used; `field` names it (measures, gain, ...)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _shown(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _whole(value, field: str, low: int, high: int) -> int:
    if isinstance(value, bool):
        raise OptionsError(field, MESSAGES[field].format(value=_shown(value)))
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        raise OptionsError(field, MESSAGES[field].format(value=_shown(value)))
    if not low <= number <= high:
        raise OptionsError(field, MESSAGES[field].format(value=_shown(value)))
    return number


def _empty(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def read_gain(value) -> str:
    if _empty(value):
        return "linear"
    if isinstance(value, str) and value.strip() in GAINS:
        return value.strip()
    raise OptionsError("gain", MESSAGES["gain"].format(value=_shown(value)))


def read_relevance_level(value) -> int:
    if _empty(value):
        return 1
    return _whole(value, "relevance_level", 1, MAX_RELEVANCE_LEVEL)


def read_depth(value) -> int | None:
    if _empty(value):
        return None
    return _whole(value, "depth", 1, MAX_DEPTH)


def read_trec_eval_version(value) -> int:
    if _empty(value):
        return 9
    number = _whole(value, "trec_eval_version", 9, 10)
    return number


def read_complete(value) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise OptionsError("complete", MESSAGES["complete"].format(value=_shown(value)))


def read_measures(values, default: Sequence[str] = DEFAULT_MEASURES) -> tuple[str, ...]:
    """Measure names in either dialect, checked (empty names are left out); `default`
    when none is given."""
    if values is None:
        values = []
    if isinstance(values, str):
        values = [values]
    specs = []
    for value in values:
        if not isinstance(value, str):
            raise OptionsError("measures", MESSAGES["measure_text"].format(value=_shown(value)))
        if value.strip():
            specs.append(value.strip())
    if not specs:
        if not default:
            raise OptionsError("measures", MESSAGES["no_measures"])
        specs = list(default)
    if len(specs) > MAX_MEASURES:
        raise OptionsError("measures", MESSAGES["too_many_measures"].format(n=MAX_MEASURES))
    try:
        parse_requests(specs)
    except ValueError as error:
        raise OptionsError("measures", str(error)) from None
    return tuple(specs)


@dataclass(frozen=True)
class ScoringOptions:
    """Measures (as given, or canonical on dashboards) and the engine's options."""

    measures: tuple[str, ...]
    options: Options

    def params(self) -> dict:
        """Plain JSON values that `read_scoring_options(**params)` reads back (a task's
        arguments). The options at their defaults that older arguments lacked are left
        out, so those still read the same."""
        options = self.options
        params = {
            "measures": list(self.measures),
            "gain": options.gain,
            "relevance_level": options.relevance_level,
            "complete": options.complete,
        }
        if options.depth is not None:
            params["depth"] = options.depth
        if options.trec_eval_version != 9:
            params["trec_eval_version"] = options.trec_eval_version
        return params


def read_scoring_options(
    *,
    measures: Iterable[str] | str | None = None,
    gain=None,
    relevance_level=None,
    complete=None,
    depth=None,
    trec_eval_version=None,
    default_measures: Sequence[str] = DEFAULT_MEASURES,
) -> ScoringOptions:
    """Every option read and checked; OptionsError names the first bad one."""
    options = Options(
        relevance_level=read_relevance_level(relevance_level),
        gain=read_gain(gain),
        trec_eval_version=read_trec_eval_version(trec_eval_version),
        depth=read_depth(depth),
        complete=read_complete(complete),
    )
    return ScoringOptions(read_measures(measures, default_measures), options)


# --- the dashboards' canonical form, and the stored evaluations' key ----------------------

# The order of trec_eval measures in a canonical list: the dashboards' default list
# (services.DASHBOARD_MEASURES) is canonical as it is; keys of stored evaluations depend on it.
_GROUP_ORDER = ("ndcg_cut", "P", "map", "recip_rank", "judged", "ndcg", "recall", "map_cut")
_GROUP_ORDER += ("Rprec", "bpref", "success")


def canonical_measures(specs: Iterable[str], options: Options = _DEFAULTS) -> tuple[str, ...]:
    """A measure list as one canonical list, so the same choice always finds the same stored
    evaluation: trec_eval measures (ir_measures names of them, nDCG@10, included) one
    argument each, cutoffs merged and sorted, in a fixed order; then the measures with
    options of their own and ours, by their ir_measures names, sorted. Only means over
    topics are allowed (OptionsError otherwise)."""
    level = options.relevance_level
    cutoffs: dict[str, set] = {}
    others: set[str] = set()
    for spec in specs:
        try:
            request = parse_request(spec)
            if request.rel == level and request.family not in (None, "RBP"):
                request = dataclasses.replace(request, rel=None)
            own_group = request.group(level) == (level, None, False, None)
            if request.trec is not None and (request.is_trec_dialect or own_group):
                parsed = catalog.parse_measures([request.trec])
            else:
                parsed = None
                names = output_names([request.name()], options)
        except ValueError as error:
            raise OptionsError("measures", str(error)) from None
        if parsed is None:
            _check_means(spec, names)
            others.add(request.name())
            continue
        for measure in parsed:
            _check_means(spec, measure.output_names, measure.name)
            cutoffs.setdefault(measure.name, set()).update(measure.cutoffs)
    if not cutoffs and not others:
        raise OptionsError("measures", MESSAGES["no_measures"])
    known = [name for name in _GROUP_ORDER if name in cutoffs]
    ordered = known + sorted(name for name in cutoffs if name not in _GROUP_ORDER)
    trec = tuple(
        name
        + ("." + ",".join(map(catalog.cutoff_text, sorted(cutoffs[name]))) if cutoffs[name] else "")
        for name in ordered
    )
    return trec + tuple(sorted(others))


def _check_means(spec: str, names: list[str], family: str | None = None) -> None:
    if not names or not all(is_mean(name) for name in names):
        message = MESSAGES["not_a_mean"].format(spec=spec, name=family or spec)
        raise OptionsError("measures", message)


# Options fields every key has carried since the first stored evaluation. A field added
# later enters the key only when it differs from its default, so adding one to Options
# leaves every stored key as it was.
_KEYED_FIELDS = ("relevance_level", "gain", "trec_eval_version", "depth", "complete")


def options_key(measure_specs: Sequence[str], options: Options, engine_version: str) -> str:
    """The key of a stored evaluation: SHA-256 of the canonical JSON of the engine version,
    the measures as given and the options."""
    values = dataclasses.asdict(options)
    defaults = dataclasses.asdict(_DEFAULTS)
    keyed = {
        name: value
        for name, value in values.items()
        if name in _KEYED_FIELDS or value != defaults.get(name)
    }
    canonical = json.dumps(
        {"engine": engine_version, "measures": list(measure_specs), "options": keyed},
        sort_keys=True,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
