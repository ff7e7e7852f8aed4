"""What evaluation asks of the judging side, without importing it.

annotation builds pools from evaluation's runs, so it imports evaluation; the reverse would
be a cycle (DESIGN.md). Yet a few evaluation pages need judging's data: the campaigns a lead
may send unjudged documents to, adding those pairs to a pool, a document's text for the
"show document" panel, and a topic's query text beside its qid. the depth a qrels version's pool was built at (the leave-one-run-out test), and where a
published qrels version came from (its page). annotation
answers these by registering a ``JudgingLink`` from its ``AppConfig.ready``; evaluation only
calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SentToJudging:
    """What sending (qid, docno) pairs to a campaign's pool did: pairs added, pairs it
    already had, assignments made, and the topics left out because the campaign lacks them."""

    added: int
    already: int
    assigned: int
    missing_qids: list[str]
    left_out: int


@dataclass(frozen=True)
class QrelsOrigin:
    """Where a qrels version published from a campaign came from, as ``user`` may see it:
    the campaign (its page's address only for those who may open it), the adjudication
    rule and relevance threshold frozen at publication, who published it and when, and the
    address of each grade's provenance (CSV) for those who may download it ("" otherwise)."""

    campaign: str
    campaign_url: str
    rule: str
    relevance_threshold: int
    published_by: str
    published_at: Any
    left_out: int
    provenance_url: str


@dataclass(frozen=True)
class TopicText:
    """A topic's fields as a search endpoint's template reads them."""

    qid: str
    query: str
    description: str
    narrative: str


@dataclass(frozen=True)
class CertifiedRun:
    """A run's certified nDCG@10 on a campaign it was pooled into (issue 33): the estimate
    from a machine's grades and a designed human sample, with its 95% interval."""

    run: int
    campaign: str
    campaign_url: str  # the campaign's certified leaderboard
    ndcg: float
    low: float
    high: float
    humans: int
    pool_size: int


@dataclass(frozen=True)
class CertifiedPair:
    """Two runs' certified nDCG@10 difference (a minus b) with its 95% interval; settled
    when the interval excludes 0 after Holm's correction over every pair of the board."""

    a: int
    b: int
    a_label: str
    b_label: str
    difference: float
    low: float
    high: float
    p_holm: float
    settled: bool

    def among(self, runs) -> bool:
        return self.a in runs and self.b in runs


@dataclass(frozen=True)
class CertifiedBoard:
    """A campaign's certified leaderboard (issue 33) restricted to some runs: their estimates
    and every pair of runs that holds one of them, as the campaign's own page computes them."""

    campaign: str
    campaign_url: str  # the campaign's certified leaderboard
    humans: int
    pool_size: int
    runs: tuple[CertifiedRun, ...]
    pairs: tuple[CertifiedPair, ...]

    def of(self, run: int) -> CertifiedRun | None:
        return next((r for r in self.runs if r.run == run), None)

    def pairs_among(self, runs) -> list[CertifiedPair]:
        """The pairs whose two runs are both in ``runs`` (ids)."""
        wanted = set(runs)
        return [p for p in self.pairs if p.among(wanted)]

    def standing(self, run: int) -> list[tuple[str, str, CertifiedPair]]:
        """For each other run of the board: its label, where ``run`` stands against it
        ("above", "below": settled; "unsettled"), and the pair."""
        rows = []
        for p in self.pairs:
            if run not in (p.a, p.b):
                continue
            other = p.b_label if p.a == run else p.a_label
            better = (p.difference > 0) == (p.a == run)
            rows.append((other, ("above" if better else "below") if p.settled else "unsettled", p))
        return rows


@dataclass(frozen=True)
class JudgingLink:
    """The judging side's answers. Each is a plain callable:

    - ``campaigns_led_by(user)``: a queryset of the campaigns ``user`` leads;
    - ``campaign_for_lead(user, pk)``: the campaign ``pk`` if ``user`` leads it, else
      Http404, the answer pages and both APIs give (annotation.access.get_campaign_for_lead);
    - ``send_pairs(campaign, pairs, documents)``: add (qid, docno) pairs to the campaign's
      pool as unjudged-sourced pairs, returning a ``SentToJudging``; ``documents``
      ({docno: (title, text)}, maybe empty) gives the texts a search engine returned, for
      documents the campaign lacks or holds without text;
    - ``find_document(user, docno, qid)``: a document with that docno and some text (title,
      text, url attributes) from a campaign ``user`` may read the documents of, preferring
      one that has topic ``qid``, or None;
    - ``topic_queries(user, qids)``: {qid: query text} for the qids of the campaigns ``user``
      may read the topics of;
    - ``pool_depth(qrels)``: the depth the pool behind a published qrels version was built
      at from stored runs, or None when it was not pooled (imported qrels, hand-made pools);
    - ``qrels_origin(qrels, user)``: a ``QrelsOrigin`` for a version published from a
      campaign, None for an imported one;
    - ``topic_texts(user, qids)``: {qid: TopicText} for the qids of the campaigns ``user``
      may read the topics of (the rule of ``topic_queries``), with all three fields;
    - ``campaign_topics(user, campaign_id)``: (the campaign's name, [TopicText] in qid
      order) for a campaign ``user`` leads, None for any other;
    - ``certified_boards(user, runs, qrels=None)``: a ``CertifiedBoard`` for each campaign
      ``user`` leads that pooled one of ``runs`` and has a certified leaderboard (with
      ``qrels``: only the campaign that published that version), holding those runs and
      every pair of runs that holds one of them (none for everyone else).
    """

    campaigns_led_by: Callable[[Any], Any]
    campaign_for_lead: Callable[[Any, int], Any]
    send_pairs: Callable[[Any, list[tuple[str, str]], dict[str, tuple[str, str]]], SentToJudging]
    find_document: Callable[[Any, str, str], Any | None]
    topic_queries: Callable[[Any, list[str]], dict[str, str]]
    pool_depth: Callable[[Any], int | None]
    qrels_origin: Callable[[Any, Any], QrelsOrigin | None]
    topic_texts: Callable[[Any, list[str]], dict[str, TopicText]]
    campaign_topics: Callable[[Any, Any], tuple[str, list[TopicText]] | None]
    certified_boards: Callable[..., list[CertifiedBoard]]


_link: JudgingLink | None = None


def register_judging(link: JudgingLink) -> None:
    global _link
    _link = link


def judging() -> JudgingLink:
    if _link is None:
        raise RuntimeError(
            "No judging app registered its JudgingLink: is 'annotation' in INSTALLED_APPS "
            "(it registers one in AnnotationConfig.ready)?"
        )
    return _link
