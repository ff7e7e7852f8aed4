"""The query sandbox's arithmetic (Quepid's loop): per-query values of several arms (saved
versions of an endpoint, an unsaved edit) on one query set, their means over the topics the
qrels judge, each arm's per-query deltas against the first, and a line diff of two
templates. No Django here.

    table = compare_arms(qids, [saved_values, edit_values], [saved_failed, edit_failed])
    table.means        # [0.4120, 0.4480]
    table.rows[0]      # QueryRow(qid="7", values=[0.2, 0.9], deltas=[None, 0.7], failed=[...])

A topic absent from an arm's run (its query failed, or found nothing) scores 0 there, as
trec_eval's ``-c`` counts it: a template that finds nothing for the hard queries does not
look better for skipping them. Means are over the query set's judged topics only.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_ARMS = 5  # a saved version and an edit, or up to five versions side by side
DIFF_CONTEXT = 3


@dataclass(frozen=True)
class QueryRow:
    qid: str
    values: list[float]  # one per arm
    deltas: list[float | None]  # against the first arm; None for the first
    failed: list[bool]  # the arm's query failed (its value is the 0 of a missing topic)

    @property
    def last_delta(self) -> float:
        return self.deltas[-1] or 0.0


@dataclass(frozen=True)
class ArmTable:
    rows: list[QueryRow]  # in qid order
    means: list[float]
    unjudged: list[str]  # qids of the query set the qrels do not judge (not in any mean)

    def mean_deltas(self) -> list[float | None]:
        return [None] + [mean - self.means[0] for mean in self.means[1:]]

    def counts(self, arm: int = -1) -> dict:
        """How many topics the arm wins, loses and ties against the first."""
        deltas = [row.deltas[arm] or 0.0 for row in self.rows]
        return {
            "better": sum(d > 0 for d in deltas),
            "worse": sum(d < 0 for d in deltas),
            "same": sum(d == 0 for d in deltas),
        }

    def moved(self, arm: int = -1) -> list[QueryRow]:
        """The rows whose value changed, largest change first (losses before gains at equal
        size, then by qid)."""
        changed = [row for row in self.rows if (row.deltas[arm] or 0.0) != 0]
        return sorted(changed, key=lambda row: (-abs(row.deltas[arm]), row.deltas[arm], row.qid))


def compare_arms(
    qids: Sequence[str],
    values: Sequence[Mapping[str, float]],
    failed: Sequence[set[str]],
    judged: set[str],
) -> ArmTable:
    """The per-query table of ``values`` (one {qid: value} per arm, as scored with
    trec_eval's ``-c``) over the ``qids`` of the query set that ``judged`` holds; a qid
    missing from an arm's values is 0. ValueError when there is no arm or no judged qid."""
    if not values or len(values) != len(failed):
        raise ValueError("one set of values and one set of failed queries per arm")
    kept = sorted({qid for qid in qids if qid in judged})  # trec_eval's order
    if not kept:
        raise ValueError("none of the query set's topics is judged in the qrels")
    rows = []
    for qid in kept:
        row = [float(arm.get(qid, 0.0)) for arm in values]
        rows.append(
            QueryRow(
                qid=qid,
                values=row,
                deltas=[None] + [value - row[0] for value in row[1:]],
                failed=[qid in arm_failed for arm_failed in failed],
            )
        )
    means = [sum(row.values[n] for row in rows) / len(rows) for n in range(len(values))]
    unjudged = sorted({qid for qid in qids if qid not in judged})
    return ArmTable(rows, means, unjudged)


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add", "remove", "context" or "hunk"
    text: str


def text_diff(old: str, new: str, *, old_label: str, new_label: str) -> list[DiffLine]:
    """A unified diff of two templates' lines (the ``---``/``+++`` header left out): what a
    version changed, in the words a reviewer reads."""
    lines = []
    diff = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=old_label,
        tofile=new_label,
        lineterm="",
        n=DIFF_CONTEXT,
    )
    for line in diff:
        if line.startswith(("---", "+++")) and not lines:
            continue
        if line.startswith("@@"):
            lines.append(DiffLine("hunk", line))
        elif line.startswith("+"):
            lines.append(DiffLine("add", line[1:]))
        elif line.startswith("-"):
            lines.append(DiffLine("remove", line[1:]))
        else:
            lines.append(DiffLine("context", line[1:]))
    return lines


def mapping_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(field, old, new) for each mapping field that differs, in the mapping's order."""
    fields = [*old, *(field for field in new if field not in old)]
    return [
        (field, old.get(field, ""), new.get(field, ""))
        for field in fields
        if old.get(field, "") != new.get(field, "")
    ]
