"""annotation/tasks.py's imports, stored a batch per transaction (SYNC_WRITE_ROWS)."""

import pytest

from annotation import services
from annotation.models import Document, Topic
from annotation.services import campaign_files

pytestmark = pytest.mark.django_db(transaction=True)


def test_documents_are_stored_in_batches_with_the_same_counts_as_at_once(
    django_user_model, settings
):
    settings.SYNC_WRITE_ROWS = 2
    lead = django_user_model.objects.create_user("lead")
    campaign = services.create_campaign(lead=lead, name="c")
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(campaign=campaign, pairs=[("1", "d2")], source="imported")  # a placeholder
    Document.objects.create(campaign=campaign, docno="d3", title="Three", text="Same.")
    lines = [
        '{"docno": "d1", "text": "One."}',
        '{"docno": "d2", "text": "Two, filled in."}',
        '{"docno": "d3", "title": "Three", "text": "Same."}',
        '{"docno": "d4", "text": "Four."}',
        '{"docno": "d5", "text": "Five."}',
    ]
    counts = campaign_files.import_documents(
        campaign=campaign, source="\n".join(lines).encode(), filename="docs.jsonl"
    )

    assert (counts.created, counts.updated, counts.unchanged) == (3, 1, 1)
    texts = dict(campaign.documents.values_list("docno", "text"))
    assert texts == {
        "d1": "One.",
        "d2": "Two, filled in.",
        "d3": "Same.",
        "d4": "Four.",
        "d5": "Five.",
    }
