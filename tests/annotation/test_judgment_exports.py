"""The raw judgments, in all three places (``manage.py export_judgments``, the page's
download, ``GET …/raw-judgments/``), hold every judge's own grades: people judging here,
outside people and machines, the imported ones marked with their file (issue 28: a campaign
with only imported grades exported nothing)."""

import csv
import io
from datetime import datetime

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.services.roles import Role
from annotation.services.grade_tables import JUDGMENT_HEADER
from annotation.services.imports import import_judgments
from tests.annotation.adjudication_data import grade_all

pytestmark = pytest.mark.django_db

CROWD = "qid,docno,judge,grade,note,seconds,judged_at\n1,d0,w1,2,clear,12.5,2026-11-20T10:00:00Z\n2,d1,w2,0,,,\n"
MACHINE_QRELS = b"1 0 d0 3\n"


def imported(campaign, lead):
    import_judgments(campaign=campaign, source=CROWD.encode(), file_name="crowd.csv", user=lead)
    import_judgments(
        campaign=campaign,
        source=MACHINE_QRELS,
        file_name="llm.qrels",
        user=lead,
        judge_name="gpt",
        judge_kind="machine",
    )


def from_command(campaign) -> list[list[str]]:
    out = io.StringIO()
    call_command("export_judgments", campaign.pk, stdout=out)
    return list(csv.reader(io.StringIO(out.getvalue())))


def from_page(client, campaign) -> list[list[str]]:
    response = client.get(f"/campaigns/{campaign.pk}/download/judgments/")
    assert response.status_code == 200, response.content[:300]
    return list(csv.reader(io.StringIO(response.content.decode())))


def from_api(client, campaign, **query) -> dict:
    response = client.get(f"/api/v1/campaigns/{campaign.pk}/raw-judgments/", query)
    assert response.status_code == 200, response.content[:300]
    return response.json()


def as_cells(row: dict) -> list[str]:
    """An API row as the CSV writes it (seconds with one decimal, null as empty, the time in
    isoformat: DRF writes UTC as Z)."""
    cells = dict(row, time=datetime.fromisoformat(row["time"]).isoformat())
    cells["grade"] = "" if row["grade"] is None else str(row["grade"])
    cells["seconds"] = "" if row["seconds"] is None else f"{row['seconds']:.1f}"
    return [cells[name] for name in JUDGMENT_HEADER]


@pytest.fixture
def lead_client(setup):
    _, lead, _ = setup
    lead.groups.add(Group.objects.get(name=Role.LEAD))
    client = APIClient()
    client.force_login(lead)
    return client


def test_a_campaign_with_only_imported_grades_exports_them_in_all_three_places(setup, lead_client):
    campaign, lead, _ = setup
    imported(campaign, lead)

    rows = from_command(campaign)

    assert rows[0] == JUDGMENT_HEADER
    by_judge = {row[2]: dict(zip(JUDGMENT_HEADER, row, strict=True)) for row in rows[1:]}
    assert sorted(by_judge) == ["machine:gpt", "outside:w1", "outside:w2"]
    w1 = by_judge["outside:w1"]
    assert (w1["qid"], w1["docno"], w1["grade"], w1["note"], w1["seconds"]) == (
        "1",
        "d0",
        "2",
        "clear",
        "12.5",
    )
    # The time the source gave; the kind of judge and the file each grade came from.
    assert w1["time"] == "2026-11-20T10:00:00+00:00"
    assert (w1["judge_kind"], w1["imported_from"]) == ("outside", "crowd.csv")
    assert by_judge["outside:w2"]["seconds"] == ""  # the file gave none
    gpt = by_judge["machine:gpt"]
    assert (gpt["grade"], gpt["judge_kind"], gpt["imported_from"]) == ("3", "machine", "llm.qrels")

    assert from_page(lead_client, campaign) == rows
    body = from_api(lead_client, campaign)
    assert body["count"] == 3
    assert [JUDGMENT_HEADER, *map(as_cells, body["results"])] == rows


def test_grades_given_here_and_imported_ones_come_in_one_order_everywhere(setup, lead_client):
    campaign, lead, judges = setup
    grade_all(campaign, judges, {("1", "d0"): (1, 2, None)})
    imported(campaign, lead)

    rows = from_command(campaign)

    assert [(r[0], r[1], r[2], r[3], r[4], r[8], r[9]) for r in rows[1:]] == [
        ("1", "d0", "j0", "1", "", "here", ""),
        ("1", "d0", "j1", "2", "", "here", ""),
        ("1", "d0", "j2", "", "x", "here", ""),
        ("1", "d0", "machine:gpt", "3", "", "machine", "llm.qrels"),
        ("1", "d0", "outside:w1", "2", "", "outside", "crowd.csv"),
        ("2", "d1", "outside:w2", "0", "", "outside", "crowd.csv"),
    ]
    assert from_page(lead_client, campaign) == rows
    first = from_api(lead_client, campaign, page_size=4)
    second = lead_client.get(first["next"]).json()
    assert (len(first["results"]), len(second["results"]), second["next"]) == (4, 2, None)
    api_rows = [as_cells(row) for row in first["results"] + second["results"]]
    assert [JUDGMENT_HEADER, *api_rows] == rows
