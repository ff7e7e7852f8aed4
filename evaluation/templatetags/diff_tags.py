"""The run diff page's two long tables, built here rather than in the template (as the
leaderboard's cells are, evaluation/templatetags/dashboard_tags.py): 100 topic rows and the
side-by-side ranks would otherwise cost most of the page's time in template tags and lazy
escaping. Every text is escaped with the standard library; numbers are formatted floats."""

from html import escape
from urllib.parse import quote

from django import template
from django.urls import reverse
from django.utils.safestring import mark_safe

from evaluation.templatetags.dashboard_tags import decimals4, grade_class, signed4

register = template.Library()


@register.simple_tag
def diff_topic_rows(links, current) -> str:
    """One row per (TopicChange, url) of the topics list; ``current`` is the shown qid."""
    rows = []
    for topic, url in links:
        here = topic.qid == current
        direction = "up" if (topic.delta or 0) > 0 else "down" if (topic.delta or 0) < 0 else ""
        flip = (
            ' <span class="flip" title="against the overall sign">⇅</span>' if topic.flips else ""
        )
        entering = (
            f'<span class="unjudged-count">{topic.entering}</span>' if topic.entering else "0"
        )
        rows.append(
            f"<tr{' aria-current="true" class="current"' if here else ''}>"
            f'<td><a href="{escape(url)}" data-testid="diff-topic-link">{escape(topic.qid)}</a>{flip}</td>'
            f'<td class="num {direction}">{signed4(topic.delta)}</td>'
            f'<td class="num">{decimals4(topic.tau_ap)}</td>'
            f'<td class="num">{decimals4(topic.rbo)}</td>'
            f'<td class="num">{topic.only_a} / {topic.only_b}</td>'
            f'<td class="num">{entering}</td></tr>'
        )
    return mark_safe("".join(rows))


def _cell(docno, grade, other, rank, qid, document_url) -> str:
    if docno is None:
        return '<td class="muted">·</td>'
    unjudged = grade is None
    classes = "doc" + (" is-unjudged" if unjudged else "") + (" only" if other is None else "")
    chip_title = "unjudged" if unjudged else f"grade {grade}"
    chip = "?" if unjudged else str(grade)
    href = f"{document_url}?docno={quote(docno, safe='')}&qid={quote(qid, safe='')}"
    hidden = '<span class="visually-hidden"> (unjudged)</span>' if unjudged else ""
    if other is None:
        mark = '<span class="only-mark" title="not in the other run\'s list">only here</span>'
    elif other < rank:
        mark = f'<span class="move up" title="rank {other} in the other run">↑{other}</span>'
    elif other > rank:
        mark = f'<span class="move down" title="rank {other} in the other run">↓{other}</span>'
    else:
        mark = '<span class="move same" title="same rank in the other run">=</span>'
    return (
        f'<td class="{classes}"><span class="chip {grade_class(grade)}" title="{chip_title}">'
        f"{chip}</span>"
        f'<button type="button" class="docno" hx-get="{escape(href)}" '
        f'hx-target="#document-panel" hx-swap="innerHTML">{escape(docno)}</button>{hidden} '
        f"{mark}</td>"
    )


@register.simple_tag
def side_by_side_rows(rows, k, qid) -> str:
    """The shown topic's ranks: #, A's document, B's document; a line under rank k."""
    document_url = reverse("evaluation:document-text")
    out = []
    for row in rows:
        cut = ' class="cut"' if row.rank == k else ""
        out.append(
            f'<tr{cut}><td class="num muted">{row.rank}</td>'
            f"{_cell(row.docno_a, row.grade_a, row.other_a, row.rank, qid, document_url)}"
            f"{_cell(row.docno_b, row.grade_b, row.other_b, row.rank, qid, document_url)}</tr>"
        )
    return mark_safe("".join(out))
