"""Filters of the dashboard pages. Numbers are printed as trec_eval prints them: ``%.4f`` of
the double itself (Django's floatformat rounds the decimal repr half up, so 0.56785 would
show as 0.5679 where trec_eval prints 0.5678)."""

from html import escape

from django import template
from django.utils.safestring import mark_safe

from evaluation.dashboards import format_p

register = template.Library()

WARNING_MARK = mark_safe('<span aria-hidden="true">⚠ </span>')
BEST_MARK = mark_safe('<span class="visually-hidden"> (best)</span>')


@register.filter
def decimals4(value) -> str:
    """0.5678; an em dash for a missing or undefined (NaN) value."""
    return "—" if value is None or value != value else f"{value:.4f}"


@register.filter
def signed4(value) -> str:
    """+0.0123 or -0.0123, as the comparison table of `evaluate --baseline` prints it."""
    return "—" if value is None else f"{value:+.4f}"


@register.filter
def pvalue(value) -> str:
    return format_p(value)


@register.filter
def get(mapping, key):
    """``values|get:name``: a dict's value (None when absent)."""
    return mapping.get(key) if mapping else None


@register.filter
def grade_class(grade) -> str:
    """The CSS class of a grade chip: grade-0 … grade-5, grade-neg, or unjudged."""
    if grade is None:
        return "unjudged"
    if grade < 0:
        return "grade-neg"
    return f"grade-{min(grade, 5)}"


@register.simple_tag
def leaderboard_cells(row, bounds=None, bounds_measure="") -> str:
    """A leaderboard row's measure cells: mean, 95% interval, best and warning marks. Built
    here rather than in the template, and escaped with the standard library: with 50 runs ×
    11 measures, template tags and Django's lazy escaping cost most of the page's time. The
    numbers are formatted floats; the two texts are escaped."""
    parts = []
    for cell in row.shown_cells:
        classes = "num value" + (" best" if cell.best else "") + (" warn" if cell.warning else "")
        title = f' title="{escape(cell.warning)}"' if cell.warning else ""
        interval = (
            f'<span class="ci">{decimals4(cell.low)}–{decimals4(cell.high)}</span>'
            if cell.low is not None
            else ""
        )
        residual = ""
        if cell.name == bounds_measure and bounds is not None:
            # The run's residual (issue 17): the mean with its unjudged top k filled both ways.
            low, high = bounds.means.get(cell.name, (None, None))
            residual = (
                f'<span class="ci residual" data-testid="leaderboard-bounds" title="The mean '
                f"if the unjudged documents of each topic's top k were judged not relevant – "
                f'relevant at grade {bounds.top_grade}">if judged {decimals4(low)}–'
                f"{decimals4(high)}</span>"
            )
        parts.append(
            f'<td class="{classes}"{title} data-measure="{escape(cell.name)}">'
            f"{WARNING_MARK if cell.warning else ''}"
            f'<span class="mean">{decimals4(cell.mean)}</span>'
            f"{BEST_MARK if cell.best else ''}{interval}{residual}</td>"
        )
    return mark_safe("".join(parts))
