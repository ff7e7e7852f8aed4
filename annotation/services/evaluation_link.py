"""annotation's answers to evaluation's questions (evaluation.judging.JudgingLink):
evaluation may not import annotation (annotation imports it), so AnnotationConfig.ready
registers these. They serve the "send unjudged documents to judging" forms, the document
panel of the dashboards, the query text beside a topic's qid and the pool depth of the
leave-one-run-out test.
"""

from django.db.models import Q

from annotation.access import campaigns_led_by
from annotation.models import Document, PairSource, Topic
from annotation.services.campaigns import add_pairs, pool_depth_of_qrels
from evaluation.judging import JudgingLink, SentToJudging


def send_unjudged_pairs(campaign, pairs: list[tuple[str, str]]) -> SentToJudging:
    """Add unjudged (qid, docno) pairs to a campaign's pool (source "unjudged"). Pairs of
    topics the campaign does not have are left out and their qids reported: a pool pair
    needs the campaign's topic."""
    topics = set(campaign.topics.values_list("qid", flat=True))
    kept = [(qid, docno) for qid, docno in pairs if qid in topics]
    missing = sorted({qid for qid, _ in pairs if qid not in topics})
    if not kept:
        return SentToJudging(0, 0, 0, missing, len(pairs))
    change = add_pairs(campaign=campaign, pairs=kept, source=PairSource.UNJUDGED)
    return SentToJudging(
        added=change.added,
        already=change.already,
        assigned=change.assigned,
        missing_qids=missing,
        left_out=len(pairs) - len(kept),
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


LINK = JudgingLink(
    campaigns_led_by=campaigns_led_by,
    send_pairs=send_unjudged_pairs,
    find_document=find_document,
    topic_queries=topic_queries,
    pool_depth=pool_depth_of_qrels,
)
