"""A campaign backup carries the stop rule (format version 5): the rule, and whether it paused
judging or the lead resumed it, come back as they were; a version 4 backup, written before
the rule was carried, restores with no rule and judging not paused."""

import json

import pytest

from annotation.models import Campaign, StopRule
from annotation.services import stopping
from tests.annotation.test_backup import (
    as_before_version_5,
    as_version_4,
    build_campaign,
    delete_everything,
    dump,
    export,
    import_file,
    read_document,
    without_export_time,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


def test_a_paused_campaign_comes_back_paused_under_its_rule(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    document = read_document(tmp_path / "b.json")
    assert document["version"] == 5
    assert {k: document["campaign"][k] for k in ("stop_rule", "stop_confidence", "stop_top")} == {
        "stop_rule": "top",
        "stop_confidence": 0.9,
        "stop_top": 2,
    }
    assert document["campaign"]["paused_at"] == "2026-11-27T10:15:00.250000+00:00"
    delete_everything()
    import_file(tmp_path / "b.json")

    restored = Campaign.objects.get()
    status = stopping.stop_status(restored)
    assert (status["rule"], status["confidence"], status["top"]) == ("top", 0.9, 2)
    assert status["paused"] and status["event"]["spent"] == 7
    assert status["described"] == "the top 2 runs settled at 90% (nDCG@10)"
    export(restored, tmp_path / "again.json")
    assert without_export_time(read_document(tmp_path / "again.json")) == without_export_time(
        document
    )


def test_a_resumed_rule_stays_quiet_after_a_restore(tmp_path):
    """The lead chose to judge on: the restored rule must not pause judging again."""
    campaign = build_campaign()
    lead = campaign.lead
    stopping.resume_judging(campaign=campaign, by=lead)
    campaign.refresh_from_db()
    assert not stopping.rule_armed(campaign)
    export(campaign, tmp_path / "b.json")
    event = read_document(tmp_path / "b.json")["campaign"]["stop_event"]
    assert event["resumed_by"] == "lead" and "resumed_at" in event
    delete_everything()
    import_file(tmp_path / "b.json")

    restored = Campaign.objects.get()
    assert restored.paused_at is None and restored.stop_rule == StopRule.TOP
    assert restored.stop_event == event
    assert not stopping.rule_armed(restored)


def test_a_version_4_backup_still_restores_with_no_stop_rule(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    before = dump()
    (tmp_path / "v4.json").write_text(json.dumps(as_version_4(read_document(tmp_path / "b.json"))))
    delete_everything()
    said = import_file(tmp_path / "v4.json")

    assert said.startswith(f"Created campaign {campaign.name!r}")
    after = dump()
    as_before_version_5(before)
    after.pop("users"), before.pop("users")
    assert after == before
    restored = Campaign.objects.get()
    assert restored.stop_rule == StopRule.NONE and restored.paused_at is None
    assert stopping.stop_status(restored)["event"] == {}
