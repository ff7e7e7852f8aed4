"""The leaderboard: every run scored with a Scoring, grouped by system, each measure's mean
with its 95% bootstrap interval, the best of each column marked, low judged@k flagged.

The page shows the judged@k columns first, beside the run (``Leaderboard.columns``,
``Row.shown_cells``): they say how far the other numbers can be trusted, and the warning
above the table points at them, so they must not be the column a narrow screen cuts off.
The cells themselves stay in the scoring's order (the API's)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evaluation import measures, services
from evaluation.analysis.ranking_agreement import tied_means
from evaluation.dashboards.scoring import JUDGED_WARNING, MESSAGES, Scoring, scored
from evaluation.models import Evaluation, Run


@dataclass(frozen=True)
class Cell:
    name: str
    mean: float
    low: float | None
    high: float | None
    best: bool = False
    warning: str = ""


@dataclass
class Row:
    run: Run
    evaluation: Evaluation
    cells: list[Cell]
    system_rows: int = 1  # on a system's first row, how many rows it has (0 on the others)
    ranked: list[float] = field(default_factory=list)  # the cells' means as ranked: tied_means

    @property
    def warning(self) -> str:
        return next((cell.warning for cell in self.cells if cell.warning), "")

    @property
    def shown_cells(self) -> list[Cell]:
        """The cells in the page's column order (display_order)."""
        return sorted(self.cells, key=lambda cell: not is_judged(cell.name))


@dataclass
class Leaderboard:
    scoring: Scoring
    rows: list[Row]
    sort: str  # "system" or a measure's output name
    descending: bool
    unscored: int

    @property
    def columns(self) -> list[str]:
        """The measures' output names in the page's column order (display_order)."""
        return display_order(self.scoring.names)

    @property
    def chart_measure(self) -> str:
        return self.sort if self.sort != "system" else self.scoring.names[0]

    def chart(self) -> dict:
        """Means with their intervals of the chart's measure, in the table's order."""
        name = self.chart_measure
        cells = [next(c for c in row.cells if c.name == name) for row in self.rows]
        return {
            "measure": measures.display_name(name),
            "labels": [str(row.run) for row in self.rows],
            "mean": [c.mean for c in cells],
            "low": [c.low for c in cells],
            "high": [c.high for c in cells],
        }

    @property
    def warned(self) -> int:
        return sum(1 for row in self.rows if row.warning)


def is_judged(name: str) -> bool:
    """judged_10, the share of judged documents in the top k: no quality measure."""
    return name.startswith("judged_")


def display_order(names: list[str]) -> list[str]:
    """The judged@k names first, then the others, each group in its given order."""
    return sorted(names, key=lambda name: not is_judged(name))


def parse_sort(sort: str, names: list[str]) -> tuple[str, bool]:
    """``-ndcg_cut_10`` (largest first), ``ndcg_cut_10`` or ``system``; an unknown key falls
    back to nDCG@10 (or the first measure), largest first."""
    key, descending = sort.lstrip("-"), sort.startswith("-")
    if key == "system" or key in names:
        return key, descending
    return ("ndcg_cut_10" if "ndcg_cut_10" in names else names[0]), True


def build_leaderboard(scoring: Scoring, *, sort: str = "") -> Leaderboard:
    """One row per scored run, grouped by system; mean and 95% interval per measure; the
    best mean of each measure marked (not judged@k's, which is no quality), judged@k below
    JUDGED_WARNING flagged. Two queries whatever the number of runs (three or four when
    intervals are still missing, which are then stored)."""
    names = scoring.names
    evaluations = list(
        scored(scoring)
        .select_related("run__system", "run__search")
        .defer("per_topic", "options", "run__search__queries", "run__search__snapshot")
    )
    services.ensure_intervals(evaluations)
    # Means equal but for rounding rank (and are marked best) together.
    ranked = {name: tied_means([e.means.get(name, -np.inf) for e in evaluations]) for name in names}
    best = {}
    for name in names:
        if not is_judged(name):
            best[name] = max(ranked[name], default=None)
    rows = []
    for row_index, evaluation in enumerate(evaluations):
        cells = []
        for name in names:
            mean = evaluation.means[name]
            low, high = evaluation.intervals.get(name, (None, None))
            warning = ""
            if is_judged(name) and mean < JUDGED_WARNING:
                share = {"share": mean, "k": scoring.outputs[name].k, "limit": JUDGED_WARNING}
                warning = MESSAGES["judged_warning"].format(**share)
            is_best = best.get(name) == ranked[name][row_index]
            cells.append(Cell(name, mean, low, high, is_best, warning))
        rows.append(
            Row(evaluation.run, evaluation, cells, ranked=[ranked[n][row_index] for n in names])
        )
    key, descending = parse_sort(sort, names)
    rows = _grouped(rows, key, descending, names)
    unscored = Run.objects.listed().count() - len(rows)
    return Leaderboard(scoring, rows, key, descending, unscored)


def _grouped(rows: list[Row], key: str, descending: bool, names: list[str]) -> list[Row]:
    """Rows grouped by system; systems ordered by their best row, rows inside by value."""
    by_system: dict[int, list[Row]] = {}
    for row in rows:
        by_system.setdefault(row.run.system_id, []).append(row)
    if key == "system":
        groups = sorted(by_system.values(), key=lambda g: g[0].run.system.name, reverse=descending)
        for group in groups:
            group.sort(key=lambda row: row.run.name)
    else:
        index = names.index(key)
        sign = -1 if descending else 1
        for group in by_system.values():
            group.sort(key=lambda row: (sign * row.ranked[index], row.run.name))
        groups = sorted(
            by_system.values(),
            key=lambda g: (sign * g[0].ranked[index], g[0].run.system.name),
        )
    ordered = []
    for group in groups:
        for i, row in enumerate(group):
            row.system_rows = len(group) if i == 0 else 0
            ordered.append(row)
    return ordered
