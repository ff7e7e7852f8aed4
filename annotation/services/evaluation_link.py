"""annotation's answers to evaluation's questions (evaluation.judging.JudgingLink):
evaluation may not import annotation (annotation imports it), so AnnotationConfig.ready
registers these. They serve the "send unjudged documents to judging" forms, the document
panel of the dashboards, the query text beside a topic's qid and the pool depth of the
leave-one-run-out test, and the origin a published qrels version's page shows.
"""

from django.db import transaction
from django.db.models import Q
from django.urls import reverse

from annotation.access import campaigns_led_by, get_campaign_for_lead, leads
from annotation.models import AdjudicationRule, Document, PairSource, Publication, Topic
from annotation.services.campaigns import add_pairs, pool_depth_of_qrels
from annotation.services.certified_board import certified_board
from evaluation.judging import (
    CertifiedBoard,
    CertifiedPair,
    CertifiedRun,
    JudgingLink,
    QrelsOrigin,
    SentToJudging,
    TopicText,
)
from jobs.services.limits import check_sync_write

MESSAGES = {
    "send_fewer": "Send fewer at a time (a smaller k, or one topic), or import them as a pairs "
    "file on the campaign's pool page or at /api/v1/campaigns/<id>/pairs/ (a job adds any "
    "number).",
}


def send_unjudged_pairs(
    campaign, pairs: list[tuple[str, str]], documents: dict[str, tuple[str, str]] | None = None
) -> SentToJudging:
    """Add unjudged (qid, docno) pairs to a campaign's pool (source "unjudged"). Pairs of
    topics the campaign does not have are left out and their qids reported: a pool pair
    needs the campaign's topic. In a request (the pages and the API send them), at most
    SYNC_WRITE_ROWS pairs: jobs.services.limits.TooLargeForRequest (a 413) says what to do instead.
    ``documents`` ({docno: (title, text)}: what a search engine returned) gives the texts of
    documents the campaign lacks or holds without any text; a text it has is kept."""
    topics = set(campaign.topics.values_list("qid", flat=True))
    kept = [(qid, docno) for qid, docno in pairs if qid in topics]
    missing = sorted({qid for qid, _ in pairs if qid not in topics})
    if not kept:
        return SentToJudging(0, 0, 0, missing, len(pairs))
    check_sync_write(len(kept), what="unjudged pairs", instead=MESSAGES["send_fewer"])
    with transaction.atomic():
        if documents:
            _fill_texts(campaign, {docno for _, docno in kept}, documents)
        change = add_pairs(campaign=campaign, pairs=kept, source=PairSource.UNJUDGED)
    return SentToJudging(
        added=change.added,
        already=change.already,
        assigned=change.assigned,
        missing_qids=missing,
        left_out=len(pairs) - len(kept),
    )


def _fill_texts(campaign, docnos: set[str], documents: dict[str, tuple[str, str]]) -> None:
    """Create the documents of ``docnos`` the campaign lacks with the given title and text,
    and give those it holds without any text theirs (before the pairs are added, so they are
    assigned at once: a pair without text waits outside the judges' queues)."""
    wanted = {docno: documents[docno] for docno in docnos if docno in documents}
    if not wanted:
        return
    held = {d.docno: d for d in campaign.documents.filter(docno__in=list(wanted))}
    empty = [d for d in held.values() if not d.title and not d.text]
    for document in empty:
        document.title, document.text = wanted[document.docno]
    Document.objects.bulk_update(empty, ["title", "text"], batch_size=500)
    Document.objects.bulk_create(
        [
            Document(campaign=campaign, docno=docno, title=title, text=text)
            for docno, (title, text) in sorted(wanted.items())
            if docno not in held
        ],
        batch_size=500,
    )


# Whose documents and topics a user reads on evaluation's pages: those of the campaigns
# they lead (admins: every campaign), the rule of the API's documents and topics
# (annotation/api/pool.py). A judge reads a pair's document only through their own
# assignment on the judging page, and nobody reads another lead's campaign.


def find_document(user, docno: str, qid: str = ""):
    """A document with this docno and some text from a campaign ``user`` leads, preferring
    campaigns that have the topic ``qid`` (the newest such campaign); None when no campaign
    they lead holds its text."""
    documents = Document.objects.filter(
        campaign__in=campaigns_led_by(user).values("pk"), docno=docno
    ).exclude(Q(text="") & Q(title=""))
    if qid:
        preferred = documents.filter(campaign__topics__qid=qid).order_by("-campaign_id").first()
        if preferred is not None:
            return preferred
    return documents.order_by("-campaign_id").first()


def topic_queries(user, qids: list[str]) -> dict[str, str]:
    """{qid: query} for the qids of the campaigns ``user`` leads; the newest campaign's text
    wins. One query. A topic of someone else's campaign never changes how a qid reads on
    this user's pages."""
    found = (
        Topic.objects.filter(campaign__in=campaigns_led_by(user).values("pk"), qid__in=qids)
        .order_by("campaign_id")
        .values_list("qid", "query")
    )
    return dict(found)  # later campaigns overwrite earlier ones


def topic_texts(user, qids: list[str]) -> dict[str, TopicText]:
    """{qid: TopicText} for the qids of the campaigns ``user`` leads; the newest
    campaign's text wins (the rule of :func:`topic_queries`)."""
    found = (
        Topic.objects.filter(campaign__in=campaigns_led_by(user).values("pk"), qid__in=qids)
        .order_by("campaign_id")
        .values_list("qid", "query", "description", "narrative")
    )
    return {row[0]: TopicText(*row) for row in found}


def campaign_topics(user, campaign_id) -> tuple[str, list[TopicText]] | None:
    """The name and topics of a campaign ``user`` leads (admins: any), None otherwise."""
    campaign = campaigns_led_by(user).filter(pk=campaign_id).first()
    if campaign is None:
        return None
    rows = campaign.topics.order_by("qid").values_list("qid", "query", "description", "narrative")
    return campaign.name, [TopicText(*row) for row in rows]


def qrels_origin(qrels, user) -> QrelsOrigin | None:
    """The campaign and publication behind a qrels version (None: imported). Its page and
    the provenance of each grade (every judge's grade by username) are the campaign lead's
    and the admins' (annotation.access.get_campaign_for_lead); others read the name only."""
    publication = (
        Publication.objects.select_related("campaign", "published_by").filter(qrels=qrels).first()
    )
    if publication is None:
        return None
    campaign = publication.campaign
    led = leads(user, campaign)
    provenance = reverse("annotation:campaign-download", args=[campaign.pk, "provenance"])
    return QrelsOrigin(
        campaign=campaign.name,
        campaign_url=campaign.get_absolute_url() if led else "",
        rule=AdjudicationRule(publication.rule).label,
        relevance_threshold=publication.relevance_threshold,
        published_by=publication.published_by.get_username() if publication.published_by else "",
        published_at=publication.published_at,
        left_out=publication.counts.get("left_out", 0),
        provenance_url=f"{provenance}?publication={publication.pk}" if led else "",
    )


def certified_boards(user, runs: list, qrels=None) -> list[CertifiedBoard]:
    """The certified leaderboard of each campaign ``user`` leads that pooled one of ``runs``
    and is certified (with ``qrels``: only the campaign that published it), restricted to
    those runs and the pairs that hold one of them. Each board is services/certified_board.py's, the
    campaign page's numbers (few campaigns have one, and only their leads see them)."""
    found = []
    wanted = {str(run.pk) for run in runs}
    campaigns = campaigns_led_by(user).filter(
        pooled_runs__run__in=[run.pk for run in runs], certified_design__isnull=False
    )
    if qrels is not None:
        campaigns = campaigns.filter(publications__qrels=qrels)
    for campaign in campaigns.distinct().order_by("pk"):
        board = certified_board(campaign=campaign)
        if board.certified is None:
            continue
        url = reverse("annotation:certified", args=[campaign.pk])
        result = board.certified
        found.append(
            CertifiedBoard(
                campaign=campaign.name,
                campaign_url=url,
                humans=result.humans,
                pool_size=result.pool_size,
                runs=tuple(
                    CertifiedRun(
                        run=int(estimate.run),
                        campaign=campaign.name,
                        campaign_url=url,
                        ndcg=estimate.estimate,
                        low=estimate.low,
                        high=estimate.high,
                        humans=result.humans,
                        pool_size=result.pool_size,
                    )
                    for estimate in result.runs
                    if estimate.run in wanted
                ),
                pairs=tuple(
                    CertifiedPair(
                        a=int(p.a),
                        b=int(p.b),
                        a_label=board.label(p.a),
                        b_label=board.label(p.b),
                        difference=p.difference,
                        low=p.low,
                        high=p.high,
                        p_holm=p.p_holm,
                        settled=p.settled_holm,
                    )
                    for p in result.pairs
                    if p.a in wanted or p.b in wanted
                ),
            )
        )
    return found


LINK = JudgingLink(
    campaigns_led_by=campaigns_led_by,
    campaign_for_lead=get_campaign_for_lead,
    send_pairs=send_unjudged_pairs,
    find_document=find_document,
    topic_queries=topic_queries,
    pool_depth=pool_depth_of_qrels,
    qrels_origin=qrels_origin,
    topic_texts=topic_texts,
    campaign_topics=campaign_topics,
    certified_boards=certified_boards,
)
