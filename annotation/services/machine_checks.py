"""A machine judge's connection test: one request to its endpoint with one passage, as the
lead presses "Test the connection" (no retry, capped in time, nothing stored)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from annotation.llm import (
    ChatClient,
    Passage,
    render_messages,
)
from annotation.models import (
    MachineJudge,
    Pair,
)
from annotation.services import machine_judges
from annotation.services.machine_judges import (
    endpoint_for,
    template_of,
)
from annotation.services.machine_runs import Item, ask_judge

# "Test connection": one request, no retry, at most this many seconds (it runs in the page's
# request, so it must not hold a web worker for a judge's full timeout).
TEST_SECONDS = 15.0


# The passage a connection test asks about when no pair of the pool has text yet.
TEST_PASSAGE = Passage(
    query="what is a relevance judgment",
    description="",
    narrative="",
    title="Relevance judgments",
    text="A relevance judgment records how well a document answers a query, on a graded "
    "scale, so that search systems can be compared on the same topics.",
)


@dataclass(frozen=True)
class ConnectionCheck:
    """What one test request gave: a grade, or the failure's class and reason; the answer's
    raw text either way; which pair it asked about (None: the built-in sample passage)."""

    ok: bool
    seconds: float
    grade: int | None
    failure: str
    reason: str
    raw: str
    model: str
    qid: str | None
    docno: str | None


def test_connection(*, machine: MachineJudge) -> ConnectionCheck:
    """One request, as a run sends it, about the first pair of the pool that has text (or a
    sample passage when none has): no retry, at most TEST_SECONDS, nothing stored."""
    campaign = machine.judge.campaign
    pair = (
        Pair.objects.filter(campaign=campaign)
        .exclude(document__text="")
        .select_related("topic", "document")
        .order_by("topic__qid", "document__docno")
        .first()
    )
    passage = TEST_PASSAGE if pair is None else machine_judges.passage_of(pair)
    where = {"qid": pair.topic.qid, "docno": pair.document.docno} if pair else {}
    try:
        endpoint = endpoint_for(machine)
    except ValidationError as error:
        reason = " ".join(error.messages)
        return ConnectionCheck(False, 0.0, None, "configuration", reason, "", "", **_where(where))
    endpoint = dataclasses.replace(
        endpoint, timeout=min(endpoint.timeout, TEST_SECONDS), max_retries=0
    )
    messages = render_messages(
        template_of(machine), passage, campaign.scale, max_passage_chars=machine.max_passage_chars
    )
    client = ChatClient(endpoint)
    try:
        answer = ask_judge(client, machine, campaign.grades, Item(pair.pk if pair else 0, messages))
    finally:
        client.close()
    return ConnectionCheck(
        ok=answer.grade is not None,
        seconds=answer.seconds or 0.0,
        grade=answer.grade,
        failure=answer.failure,
        reason=answer.reason,
        raw=answer.raw,
        model=answer.model,
        **_where(where),
    )


def _where(where: dict) -> dict:
    return {"qid": where.get("qid"), "docno": where.get("docno")}
