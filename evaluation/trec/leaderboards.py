"""Leaderboards in the TREC ecosystem's layouts, out and in, and two leaderboards compared
(pure: no Django).

A leaderboard here is a list of Entry(run, topic, measure, value); the topic ``all`` holds
a run's aggregate (trec_eval's "all" line). Layouts (LAYOUTS), one entry per line:

- ``trec_eval``: what ``trec_eval -q`` prints, ``measure<TAB>topic<TAB>value``, each run's
  block closed by its "all" lines, which include ``runid all NAME`` (several runs: their
  outputs one after the other). Values with 4 decimals, counts as integers, as trec_eval.
  trec_eval prints no runid line unless asked (``-m runid``): a file without any is read
  as one run named after the file (``bm25.txt``: ``bm25``).
- ``ir_measures``: ``run topic measure value`` (whitespace-separated);
- ``tot``: ``run measure topic value`` (the TREC AutoJudge tooling's layout);
- ``jsonl``: ``{"run_id": ..., "topic_id": ..., "measure": ..., "value": ...}``.

- ``trec_eval_zip`` (written, not read): a zip archive of one ``trec_eval -q`` file per run,
  ``RUN.txt``, the layout the trec_eval-based tools (autojudge-evaluate, trec_eval itself)
  expect: one run per file.

The last three text layouts carry full precision (Python's shortest round-trip repr), so a file written
and read back gives the same numbers. Reading is all-or-nothing: every bad line is reported
as ``file:line: problem`` (up to MAX_ERRORS, with the total), and nothing is returned.
Counting stops where evaluation.trec's readers stop (errors.MAX_ERRORS_COUNTED), with the
same note; a JSON line may nest at most common.nesting.MAX_DEPTH deep.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass

from common.json_keys import RepeatedKeys, unique_keys
from common.nesting import MAX_DEPTH, nesting_depth
from evaluation.trec.errors import MAX_ERRORS_COUNTED, STOPPED
from evaluation.trec.source import TEXT_HEAD, text_problem

__all__ = [
    "DOWNLOAD_LAYOUTS",
    "LAYOUTS",
    "MAX_ERRORS",
    "Comparison",
    "Entry",
    "LeaderboardFormatError",
    "compare_leaderboards",
    "read_leaderboard",
    "write_leaderboard",
    "write_leaderboard_zip",
]

LAYOUTS = ("trec_eval", "ir_measures", "tot", "jsonl")  # read and written
ZIP_LAYOUT = "trec_eval_zip"
DOWNLOAD_LAYOUTS = (*LAYOUTS, ZIP_LAYOUT)
# Each download layout's file suffix, and its media type where it is not plain text.
CONTENT_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "trec_eval_zip": "application/zip"}
SUFFIXES = {
    "trec_eval": "txt",
    "ir_measures": "txt",
    "tot": "tot",
    "jsonl": "jsonl",
    "trec_eval_zip": "zip",
}
MAX_ERRORS = 20
ALL = "all"
TOLERANCE = 5e-5  # half of trec_eval's last printed decimal
_INTEGER_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret"})
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class Entry:
    run: str
    topic: str
    measure: str
    value: float


class LeaderboardFormatError(ValueError):
    """A refused file: ``errors`` are ``file:line: problem`` (the first MAX_ERRORS), ``total``
    how many problems there were."""

    def __init__(self, errors: list[str], total: int):
        more = f" (and {total - len(errors)} more)" if total > len(errors) else ""
        super().__init__("; ".join(errors[:3]) + more)
        self.errors = errors
        self.total = total


def _label(text: str) -> str:
    """A run or topic as a whitespace-separated field: whitespace becomes ``_``."""
    return re.sub(r"\s+", "_", text.strip()) or "_"


def _repr(value: float) -> str:
    return repr(float(value))


def write_leaderboard(entries: Iterable[Entry], layout: str) -> str:
    """The entries in ``layout``; in trec_eval's, each run's topics then its "all" lines,
    with ``runid all RUN`` first among them."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
    entries = list(entries)
    if layout == "jsonl":
        return "".join(
            json.dumps(
                {"run_id": e.run, "topic_id": e.topic, "measure": e.measure, "value": e.value},
                ensure_ascii=False,
            )
            + "\n"
            for e in entries
        )
    if layout == "ir_measures":
        return "".join(
            f"{_label(e.run)} {_label(e.topic)} {_label(e.measure)} {_repr(e.value)}\n"
            for e in entries
        )
    if layout == "tot":
        return "".join(
            f"{_label(e.run)} {_label(e.measure)} {_label(e.topic)} {_repr(e.value)}\n"
            for e in entries
        )
    lines = []
    by_run: dict[str, list[Entry]] = {}
    for entry in entries:
        by_run.setdefault(entry.run, []).append(entry)
    for run, items in by_run.items():
        topics = [e for e in items if e.topic != ALL]
        totals = [e for e in items if e.topic == ALL]
        for entry in topics:
            lines.append(_trec_line(entry))
        lines.append(f"{'runid':<22}\t{ALL}\t{_label(run)}\n")
        lines.extend(_trec_line(entry) for entry in totals)
    return "".join(lines)


def write_leaderboard_zip(entries: Iterable[Entry]) -> bytes:
    """A zip of one trec_eval-layout file per run (``RUN.txt``; characters a file name
    should not hold become ``_``, and a name two runs share gets ``-2``, ``-3``...)."""
    by_run: dict[str, list[Entry]] = {}
    for entry in entries:
        by_run.setdefault(entry.run, []).append(entry)
    buffer = io.BytesIO()
    taken: set[str] = set()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for run, items in by_run.items():
            stem = re.sub(r"[^A-Za-z0-9._-]", "_", run).strip(".") or "run"
            name, n = f"{stem}.txt", 1
            while name in taken:
                n += 1
                name = f"{stem}-{n}.txt"
            taken.add(name)
            archive.writestr(name, write_leaderboard(items, "trec_eval"))
    return buffer.getvalue()


def _trec_line(entry: Entry) -> str:
    integer = entry.measure in _INTEGER_MEASURES
    value = f"{int(entry.value)}" if integer else f"{entry.value:.4f}"
    return f"{_label(entry.measure):<22}\t{_label(entry.topic)}\t{value}\n"


# --- reading -------------------------------------------------------------------------------


def _number(text: str) -> float | None:
    """A finite decimal number, all of it (``2.5abc``, ``nan`` and ``inf`` are refused)."""
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def read_leaderboard(data: bytes, layout: str, *, filename: str = "leaderboard") -> list[Entry]:
    """The entries of a file in ``layout``; LeaderboardFormatError lists its bad lines.
    Blank lines are skipped; an entry (run, topic, measure) given twice is an error."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
    if problem := text_problem(data[:TEXT_HEAD]):
        raise LeaderboardFormatError([f"{filename}:0: {problem}"], 1)
    errors: list[str] = []
    total = 0

    def fail(line: int, problem: str) -> None:
        nonlocal total
        total += 1
        if len(errors) < MAX_ERRORS:
            errors.append(f"{filename}:{line}: {problem}")
        if total >= MAX_ERRORS_COUNTED:
            errors.append(f"{filename}:{line}: {STOPPED.format(count=total)}")
            raise LeaderboardFormatError(errors, total)

    entries: list[tuple[int, Entry]] = []
    pending: list[tuple[int, str, str, float]] = []  # trec_eval: lines waiting for their runid
    current_run: str | None = None  # trec_eval: the run whose "all" lines are being read
    for number, raw in _numbered_lines(data):
        raw = raw.removesuffix(b"\r")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            fail(number, "not UTF-8 text")
            continue
        if number == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        if layout == "jsonl":
            parsed = _jsonl_entry(line)
            if isinstance(parsed, str):
                fail(number, parsed)
            else:
                entries.append((number, parsed))
            continue
        fields = line.split()
        if layout in ("ir_measures", "tot"):
            if len(fields) != 4:
                order = (
                    "run topic measure value"
                    if layout == "ir_measures"
                    else "run measure topic value"
                )
                fail(number, f"expected 4 fields ({order}), found {len(fields)}")
                continue
            if layout == "ir_measures":
                run, topic, measure, text = fields
            else:
                run, measure, topic, text = fields
            value = _number(text)
            if value is None:
                fail(number, f"the value {text!r} is not a finite number")
                continue
            entries.append((number, Entry(run, topic, measure, value)))
            continue
        # trec_eval -q
        if len(fields) != 3:
            fail(number, f"expected 3 fields (measure topic value), found {len(fields)}")
            continue
        measure, topic, text = fields
        if measure == "runid":
            if topic != ALL:
                fail(number, f"a runid line names topic all, not {topic!r}")
                continue
            current_run = text
            for at, pending_topic, pending_measure, value in pending:
                entries.append((at, Entry(text, pending_topic, pending_measure, value)))
            pending = []
            continue
        value = _number(text)
        if value is None:
            fail(number, f"the value {text!r} is not a finite number")
            continue
        if topic == ALL and current_run is not None:
            entries.append((number, Entry(current_run, topic, measure, value)))
        else:
            if topic != ALL:
                current_run = None  # a topic line: the next run's block has begun
            pending.append((number, topic, measure, value))
    if pending:
        # trec_eval prints no runid line unless asked (-m runid, or the default measures):
        # a file without one is one run, named after the file.
        run = _stem(filename)
        entries.extend(
            (at, Entry(run, topic, measure, value)) for at, topic, measure, value in pending
        )
    seen: dict[tuple[str, str, str], int] = {}
    for number, entry in entries:
        key = (entry.run, entry.topic, entry.measure)
        if key in seen:
            fail(
                number,
                f"{entry.run} {entry.topic} {entry.measure} is given twice (first on line {seen[key]})",
            )
        else:
            seen[key] = number
    if not entries and not total:
        fail(1, "the file holds no entry")
    if total:
        raise LeaderboardFormatError(errors, total)
    return [entry for _, entry in entries]


def _numbered_lines(data: bytes):
    """``enumerate(data.split(b"\\n"), 1)`` without a list of every line at once (a 50 MB file
    of empty lines would be 50 million bytes objects)."""
    start, number = 0, 1
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            yield number, data[start:]
            return
        yield number, data[start:end]
        start, number = end + 1, number + 1


def _stem(filename: str) -> str:
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return name.split(".", 1)[0] or name


def _jsonl_entry(line: str) -> Entry | str:
    if line.count("[") + line.count("{") > MAX_DEPTH and (
        nesting_depth(line, stop_above=MAX_DEPTH) > MAX_DEPTH
    ):
        return f"not JSON (nested more than {MAX_DEPTH} levels deep)"
    try:
        record = json.loads(line, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as error:
        return f"not JSON ({error.msg})"
    except RepeatedKeys as repeated:
        return str(repeated)
    except RecursionError:  # not below MAX_DEPTH; still never a crash
        return f"not JSON (nested more than {MAX_DEPTH} levels deep)"
    except ValueError:  # an integer of more digits than Python converts
        return "not JSON (a number has too many digits)"
    if not isinstance(record, dict):
        return "expected an object {run_id, topic_id, measure, value}"
    missing = [key for key in ("run_id", "topic_id", "measure", "value") if key not in record]
    if missing:
        return f"missing {', '.join(missing)}"
    for key in ("run_id", "topic_id", "measure"):
        if (
            not isinstance(record[key], str | int)
            or isinstance(record[key], bool)
            or not str(record[key]).strip()
        ):
            return f"{key} must be a non-empty string"
    value = record["value"]
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return f"the value {value!r} is not a finite number"
    return Entry(
        str(record["run_id"]), str(record["topic_id"]), str(record["measure"]), float(value)
    )


# --- comparing -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    run: str
    topic: str
    measure: str
    ours: float
    theirs: float

    @property
    def delta(self) -> float:
        return self.theirs - self.ours


@dataclass(frozen=True)
class Comparison:
    """Theirs against ours on the entries both hold (after the names are matched)."""

    compared: int
    same: int
    differences: list[Difference]  # largest |delta| first
    only_ours: int
    only_theirs: int
    unknown_runs: list[str]  # their runs matching none of ours
    unknown_measures: list[str]
    tolerance: float

    @property
    def max_delta(self) -> float:
        return max((abs(d.delta) for d in self.differences), default=0.0)


def compare_leaderboards(
    ours: list[Entry],
    theirs: list[Entry],
    *,
    run_aliases: dict[str, str] | None = None,
    measure_aliases: dict[str, str] | None = None,
    tolerance: float = TOLERANCE,
) -> Comparison:
    """Their values against ours, entry by entry: the same when they differ by at most
    ``tolerance`` (default half of trec_eval's 4th decimal). Their run and measure names
    are first mapped through the aliases (e.g. a run's bare name to ``system/run``,
    ``nDCG@10`` to ``ndcg_cut_10``)."""
    run_aliases = run_aliases or {}
    measure_aliases = measure_aliases or {}
    mine = {(e.run, e.topic, e.measure): e.value for e in ours}
    our_runs = {e.run for e in ours}
    our_measures = {e.measure for e in ours}
    matched: dict[tuple[str, str, str], float] = {}
    unknown_runs, unknown_measures = set(), set()
    for entry in theirs:
        run = entry.run if entry.run in our_runs else run_aliases.get(entry.run, entry.run)
        measure = (
            entry.measure
            if entry.measure in our_measures
            else measure_aliases.get(entry.measure, entry.measure)
        )
        if run not in our_runs:
            unknown_runs.add(entry.run)
        if measure not in our_measures:
            unknown_measures.add(entry.measure)
        matched[(run, entry.topic, measure)] = entry.value
    common = mine.keys() & matched.keys()
    differences = [
        Difference(run, topic, measure, mine[(run, topic, measure)], matched[(run, topic, measure)])
        for run, topic, measure in common
        if abs(mine[(run, topic, measure)] - matched[(run, topic, measure)]) > tolerance
    ]
    differences.sort(key=lambda d: (-abs(d.delta), d.run, d.topic.encode(), d.measure))
    return Comparison(
        compared=len(common),
        same=len(common) - len(differences),
        differences=differences,
        only_ours=len(mine.keys() - matched.keys()),
        only_theirs=len(matched.keys() - mine.keys()),
        unknown_runs=sorted(unknown_runs),
        unknown_measures=sorted(unknown_measures),
        tolerance=tolerance,
    )
