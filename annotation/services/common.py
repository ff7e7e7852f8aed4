"""What the annotation services share: their messages, the fast-judge threshold, storing
assignments' positions fast (set_positions), and the check that a file's topics are the
campaign's (topics_check)."""

from collections.abc import Callable, Iterable

from django.db import connection

from annotation.formats import quote
from annotation.models import Assignment, Campaign

# Judges whose median active time per judgment is below this are flagged for leads: nobody
# reads a document and its query properly in under two seconds.
SUSPICIOUSLY_FAST_SECONDS = 2.0

MESSAGES = {
    "judge_outside_team": "Not a judge of the team {team}: {judges}.",
    "overlap_above_judges": (
        "Judges per pair is {overlap} but the campaign has {judges} judge{s}: each pair goes to "
        "{judges} until you add more judges."
    ),
    "not_your_assignment": "This pair is assigned to another judge.",
    "grade_not_in_scale": "Grade {grade} is not on this campaign's scale ({grades}).",
    "skip_needs_reason": "Say why you skip this pair (for example: can't judge).",
    "unknown_scale": "Unknown scale {scale!r}; choose one of {choices}.",
    "threshold_outside_scale": "The relevance threshold {threshold} is not a grade of the scale.",
    "not_a_judge": "{user} is not a judge of this campaign.",
    "note_needs_judgment": "Grade the pair before adding a note.",
    # The lead's pages say "judges cannot grade these yet" of the same documents.
    "document_lacks_text": (
        "Document {docno} has no text yet, so this pair cannot be graded. It waits outside "
        "your queue until the campaign's lead imports its text."
    ),
    "bad_request_id": "request_id must be a UUID, got {value!r}.",
    "overlap_below_one": "Overlap must be at least 1.",
    "grade_in_use": "Judgments already use grade {grade}; this scale stops at grade {top}.",
    # File imports (pools from runs, gold pairs, judgments) refer to a campaign's own topics.
    "unknown_topic": "topic {qid} is not in this campaign (import it first)",
}


def set_positions(assignments: Iterable[Assignment]) -> None:
    """Store each assignment's ``position``: one UPDATE statement prepared once and run for
    every row. Adding pairs renumbers the judges' open assignments in the pairs' topics, tens
    of thousands in a large pool; bulk_update's CASE expressions took seconds per 10,000
    rows of that, holding the database's write lock (issue 27), this a fraction of one."""
    rows = [(a.position, a.pk) for a in assignments]
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(Assignment._meta.db_table)
    column = quote(Assignment._meta.get_field("position").column)
    with connection.cursor() as cursor:
        key = quote(Assignment._meta.pk.column)
        cursor.executemany(f"UPDATE {table} SET {column} = %s WHERE {key} = %s", rows)


def topics_check(campaign: Campaign) -> Callable[[list], Iterable[tuple[int, str]]]:
    """A reader's ``check`` (annotation.formats.source.read) of records with a ``qid``: each
    one naming a topic the campaign does not have is a problem of its line, listed with the
    file's other problems in one answer."""
    qids = set(campaign.topics.values_list("qid", flat=True))

    def check(records) -> Iterable[tuple[int, str]]:
        for record in records:
            if record.qid not in qids:
                yield record.line, MESSAGES["unknown_topic"].format(qid=quote(record.qid))

    return check
