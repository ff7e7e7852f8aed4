"""Template filters for judging pages: campaign guidelines as sanitised Markdown, query terms
marked in documents, and document links made safe to follow; and whether the user leads a
campaign, for the lead's navigation.

Usage: ``{% load annotation_tags %}`` then ``{{ campaign.guidelines|markdown }}``,
``{{ document.text|highlight:topic.query }}``, ``{{ document.url|safe_url }}``,
``{% if user|leads:campaign %}``.
"""

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

from annotation import access
from annotation.highlight import highlight as highlight_terms

register = template.Library()

# What guidelines may contain once rendered: text structure, links, tables and images; no
# scripts, styles, forms or frames (nh3 drops those and every event-handler attribute).
GUIDELINE_TAGS = {
    *("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code"),
    *("ul", "ol", "li", "dl", "dt", "dd", "strong", "em", "b", "i", "u", "s", "del", "ins"),
    *("sub", "sup", "kbd", "mark", "abbr", "a", "img", "details", "summary"),
    *("table", "thead", "tbody", "tr", "th", "td", "caption"),
}
GUIDELINE_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "abbr": {"title"},
    "th": {"align"},
    "td": {"align"},
}
URL_SCHEMES = {"http", "https", "mailto"}


@register.filter
def markdown(text: str) -> str:
    """Markdown (with tables, fenced code and definition lists) rendered to HTML, then
    sanitised with nh3: raw HTML in the source is allowed only as far as GUIDELINE_TAGS,
    links keep http(s)/mailto targets only and open in a new tab without a referrer."""
    if not text:
        return ""
    rendered = markdown_lib.markdown(str(text), extensions=["extra", "sane_lists"])
    cleaned = nh3.clean(
        rendered,
        tags=GUIDELINE_TAGS,
        attributes=GUIDELINE_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_blank"}},
    )
    return mark_safe(cleaned)  # nh3 has just sanitised it


@register.filter
def highlight(text: str, query: str) -> str:
    """The text escaped, with the query's terms wrapped in <mark> (annotation/highlight.py
    escapes every piece itself, so the result is safe to mark safe)."""
    return mark_safe(highlight_terms(str(text or ""), str(query or "")))


@register.filter
def safe_url(url: str) -> str:
    """The url when it is an http(s) address, else "" (a document imported with a
    ``javascript:`` url must not become a link a judge can click)."""
    url = str(url or "").strip()
    return url if url.lower().startswith(("http://", "https://")) else ""


@register.filter
def leads(user, campaign) -> bool:
    """annotation.access.leads: the one rule of who manages a campaign."""
    return access.leads(user, campaign)


@register.filter
def points(value) -> str:
    """A share as signed percentage points with one decimal (0.123 -> +12.3)."""
    return "—" if value is None else f"{100 * value:+.1f}"


@register.filter
def percent1(value) -> str:
    """A share as a percentage with one decimal (0.123 -> 12.3%)."""
    return "—" if value is None else f"{100 * value:.1f}%"


@register.filter
def points_plain(value) -> str:
    """A share as percentage points with one decimal, unsigned (0.02 -> 2.0)."""
    return "—" if value is None else f"{100 * value:.1f}"
