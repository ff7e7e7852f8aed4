"""Template tags for the agreement and calibration pages: a statistic with its interval or
the reason it is undefined, the words that interpret it, and the tint of a heatmap cell.

Usage: ``{% load agreement_tags %}`` then ``{% statistic report.fleiss %}``,
``{{ stat.value|kappa_band }}``, ``{{ stat.value|heat }}``, ``{{ row.share|tint }}``.
Colours live in static/css/agreement.css as classes (no inline styles: the pages run under a
Content Security Policy without 'unsafe-inline').
"""

import math

from django import template
from django.utils.html import format_html

from annotation.agreement import Statistic, krippendorff_band, landis_koch

register = template.Library()

BUCKETS = 10


@register.simple_tag
def statistic(stat: Statistic):
    """The value to 4 decimals with its interval, or "undefined" and the reason; a note on
    a defined value goes in its title."""
    if stat.value is None:
        return format_html(
            '<span class="undefined">undefined</span> <span class="reason">{}</span>', stat.reason
        )
    interval = ""
    if stat.low is not None:
        interval = format_html(
            ' <span class="interval">[{}, {}]</span>', decimal(stat.low), decimal(stat.high)
        )
    note = format_html(' title="{}"', stat.note) if stat.note else ""
    return format_html('<span class="value"{}>{}</span>{}', note, decimal(stat.value), interval)


@register.filter
def decimal(value) -> str:
    """4 decimals, or an em dash for None."""
    return "—" if value is None else f"{value:.4f}"


@register.filter
def signed(value) -> str:
    """4 decimals with a sign (+0.1250), or an em dash for None."""
    return "—" if value is None else f"{value:+.4f}"


@register.filter
def kappa_band(value) -> str:
    """Landis & Koch's words for a kappa."""
    return landis_koch(value)


@register.filter
def alpha_band(value) -> str:
    """Krippendorff's words for an alpha."""
    return krippendorff_band(value)


@register.filter
def band_class(words: str) -> str:
    """A CSS class for a band's words: "almost perfect" -> "band-almost-perfect"."""
    return "band-" + words.replace(" ", "-")


@register.filter
def heat(value) -> str:
    """The heatmap class of a kappa: heat-neg below 0, heat-0 … heat-9 for tenths of 0..1,
    heat-none when undefined."""
    if value is None or not math.isfinite(value):
        return "heat-none"
    if value < 0:
        return "heat-neg"
    return f"heat-{min(int(value * BUCKETS), BUCKETS - 1)}"


@register.filter
def tint(share) -> str:
    """The tint class of a share between 0 and 1: tint-0 … tint-9."""
    if share is None:
        return "tint-0"
    return f"tint-{max(0, min(int(share * BUCKETS), BUCKETS - 1))}"
