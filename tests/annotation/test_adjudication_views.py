"""The lead's disagreement queue, decision page, publishing page and downloads (issue:
agreement and adjudication, items 4-5), through the test client."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.services.roles import Role
from annotation.models import LeadDecision, Pair, Publication
from evaluation.models import QrelsVersion
from tests.annotation.adjudication_data import GRADES, grade_all
from tests.annotation.conftest import three_judges
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


def graded():
    """tests/annotation/conftest.py's campaign with its lead and judges in their roles, every
    pair graded (GRADES)."""
    campaign, lead, judges = three_judges(get_user_model())
    lead.groups.add(Group.objects.get(name=Role.LEAD))
    for judge in judges:
        judge.groups.add(Group.objects.get(name=Role.JUDGE))
    grade_all(campaign, judges, GRADES)
    return campaign, lead, judges


world_made = made_once(graded)


@pytest.fixture
def world(world_copy, client):
    """graded(), made once for the module (tests/worlds.py), and the lead's client."""
    campaign, lead, judges = world_copy
    client.force_login(lead)
    return campaign, lead, judges, client


def url(name, campaign, *args):
    return reverse(f"annotation:{name}", args=[campaign.pk, *args])


def pair_id(qid, docno):
    return Pair.objects.get(topic__qid=qid, document__docno=docno).pk


def test_the_queue_lists_undecided_disputes_first_and_all_on_request(world):
    campaign, _, _, client = world
    page = client.get(url("adjudication", campaign)).content.decode()
    assert page.count("Decide →") == 1 and "d2" in page
    page = client.get(url("adjudication", campaign) + "?show=all").content.decode()
    # Straddlers first (1×d1 spread 3, 1×d2 spread 2), then 2×d0.
    assert page.index(">d1<") < page.index(">d2<") < page.rindex(">d0<")
    topic = campaign.topics.get(qid="2")
    page = client.get(url("adjudication", campaign) + f"?topic={topic.pk}&show=all").content
    assert b">d1<" not in page and b">d0<" in page


@pytest.mark.parametrize("query", ["?topic=999999", "?topic=abc"])
def test_an_unknown_topic_is_a_404(world, query):
    campaign, _, _, client = world
    assert client.get(url("adjudication", campaign) + query).status_code == 404


def test_judges_and_other_leads_get_404_on_every_lead_page(world, client, django_user_model):
    campaign, _, judges, _ = world
    other = django_user_model.objects.create_user("other-lead")
    other.groups.add(Group.objects.get(name=Role.LEAD))
    for user in (judges[0], other):
        client.force_login(user)
        for name, args in [
            ("adjudication", ()),
            ("adjudicate-pair", (pair_id("1", "d2"),)),
            ("publish", ()),
            ("campaign-download", ("judgments",)),
        ]:
            assert client.get(url(name, campaign, *args)).status_code == 404, (user, name)
        response = client.post(
            url("adjudicate-pair", campaign, pair_id("1", "d2")),
            {"grade": 1, "reason": "x", "based_on": ""},
        )
        assert response.status_code == 404
    assert not LeadDecision.objects.exists()


def test_deciding_a_pair_moves_to_the_next_in_the_queue(world):
    campaign, _, _, client = world
    first = pair_id("1", "d1")
    page = client.get(url("adjudicate-pair", campaign, first) + "?show=all").content.decode()
    assert "j0" in page and "j1" in page and "Final grade" in page
    response = client.post(
        url("adjudicate-pair", campaign, first) + "?show=all",
        {"grade": 2, "reason": "partly answers", "based_on": ""},
    )
    assert response.status_code == 302
    assert response["Location"].startswith(url("adjudicate-pair", campaign, pair_id("1", "d2")))
    decision = LeadDecision.objects.get()
    assert (decision.pair_id, decision.grade, decision.reason) == (first, 2, "partly answers")


def test_the_last_decision_goes_back_to_the_queue(world):
    campaign, _, _, client = world
    response = client.post(
        url("adjudicate-pair", campaign, pair_id("1", "d2")),
        {"grade": 1, "reason": "related", "based_on": ""},
    )
    assert response.status_code == 302
    assert response["Location"] == url("adjudication", campaign) + "?show=undecided"


def test_a_stale_decision_is_a_conflict_that_names_who_decided(world):
    campaign, lead, _, client = world
    target = pair_id("1", "d2")
    client.post(
        url("adjudicate-pair", campaign, target), {"grade": 1, "reason": "a", "based_on": ""}
    )
    response = client.post(
        url("adjudicate-pair", campaign, target), {"grade": 3, "reason": "b", "based_on": ""}
    )
    assert response.status_code == 409
    assert f"{lead.username} decided this pair as 1" in response.content.decode()
    assert list(LeadDecision.objects.values_list("grade", flat=True)) == [1]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reason": "x"}, "Choose a grade"),
        ({"grade": 1, "reason": " "}, "Give a reason"),
        ({"grade": 9, "reason": "x"}, "Grade 9 is not on this campaign"),
    ],
)
def test_a_bad_decision_is_refused_with_a_message(world, data, message):
    campaign, _, _, client = world
    response = client.post(url("adjudicate-pair", campaign, pair_id("1", "d2")), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not LeadDecision.objects.exists()


def test_publishing_is_blocked_then_leaves_undecided_pairs_out_explicitly(world):
    campaign, _, _, client = world
    response = client.post(url("publish", campaign), {"name": "web-2026"})
    assert response.status_code == 400
    assert "3 pairs still undecided" in response.content.decode()
    assert not QrelsVersion.objects.exists()

    response = client.post(url("publish", campaign), {"name": "web-2026", "leave_out": "on"})
    qrels = QrelsVersion.objects.get()
    assert response.status_code == 302 and response["Location"] == qrels.get_absolute_url()
    assert qrels.label == "web-2026 v1" and qrels.judgment_count == 3
    page = client.get(url("publish", campaign)).content.decode()
    assert "web-2026 v1" in page and "provenance" in page


def test_downloads_trec_binary_provenance_and_raw_judgments(world):
    campaign, _, _, client = world
    client.post(url("publish", campaign), {"name": "web-2026", "leave_out": "on"})
    qrels = QrelsVersion.objects.get()
    trec = client.get(reverse("evaluation:qrels-download", args=[qrels.pk]))
    assert b"".join(trec.streaming_content if trec.streaming else [trec.content]).decode() == (
        "1 0 d0 2\n1 0 d1 3\n2 0 d0 1\n"
    )
    binary = client.get(reverse("evaluation:qrels-download", args=[qrels.pk]) + "?binary=1")
    assert binary.content.decode() == "1 0 d0 1\n1 0 d1 1\n2 0 d0 1\n"
    assert "binary-at-1" in binary["Content-Disposition"]
    strict = client.get(
        reverse("evaluation:qrels-download", args=[qrels.pk]) + "?binary=1&threshold=3"
    )
    assert strict.content.decode() == "1 0 d0 0\n1 0 d1 1\n2 0 d0 0\n"

    rows = list(
        csv.reader(
            io.StringIO(
                client.get(url("campaign-download", campaign, "provenance")).content.decode()
            )
        )
    )
    assert rows[0] == [
        "qid",
        "docno",
        "grade",
        "basis",
        "judges",
        "lead_reason",
        "lead",
        "decided_at",
        "rule_in_force",
    ]
    assert rows[2] == ["1", "d1", "3", "majority", "j0=0 j1=3 j2=3", "", "", "", ""]

    rows = list(
        csv.reader(
            io.StringIO(
                client.get(url("campaign-download", campaign, "judgments")).content.decode()
            )
        )
    )
    assert rows[0] == [
        "qid",
        "docno",
        "judge",
        "grade",
        "skip_reason",
        "note",
        "seconds",
        "time",
        "judge_kind",
        "imported_from",
    ]
    assert len(rows) == 1 + 15  # five finished pairs × three judges
    assert client.get(url("campaign-download", campaign, "nothing")).status_code == 404


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(world):
    campaign, _, judges, client = world
    judgment = judges[0].assignments.filter(judgment__isnull=False).first().judgment
    judgment.note = '=HYPERLINK("http://evil")'
    judgment.save()
    body = client.get(url("campaign-download", campaign, "judgments")).content.decode()
    assert "'=HYPERLINK" in body
    assert ",=HYPERLINK" not in body and ',"=HYPERLINK' not in body


def test_the_diff_page_shows_what_changed_between_versions(world):
    campaign, _, _, client = world
    client.post(url("publish", campaign), {"name": "web-2026", "leave_out": "on"})
    client.post(
        url("adjudicate-pair", campaign, pair_id("1", "d1")),
        {"grade": 2, "reason": "partial", "based_on": ""},
    )
    client.post(url("publish", campaign), {"name": "web-2026", "leave_out": "on"})
    new, old = Publication.objects.all()[0].qrels, Publication.objects.all()[1].qrels
    page = client.get(reverse("evaluation:qrels-diff", args=[new.pk, old.pk])).content.decode()
    assert "0 added · 0 removed · 1 changed · 2 unchanged" in page
    assert "changes since web-2026 v1" in client.get(url("publish", campaign)).content.decode()


def test_the_binary_download_of_a_published_version_keeps_its_threshold(world):
    from annotation import services

    campaign, _, _, client = world
    client.post(url("publish", campaign), {"name": "web-2026", "leave_out": "on"})
    publication = Publication.objects.get()
    assert publication.relevance_threshold == campaign.relevance_threshold == 1
    download = reverse("evaluation:qrels-download", args=[publication.qrels.pk]) + "?binary=1"
    before = client.get(download)

    services.update_campaign(campaign=campaign, relevance_threshold=3)
    after = client.get(download)
    assert after.content == before.content == b"1 0 d0 1\n1 0 d1 1\n2 0 d0 1\n"
    assert "binary-at-1" in after["Content-Disposition"]
    # The next version freezes the threshold in force when it is published (the same grades:
    # the lead confirms the copy).
    again = {"name": "web-2026", "leave_out": "on", "identical_to": publication.qrels_id}
    assert client.post(url("publish", campaign), again).status_code == 302
    newer = Publication.objects.order_by("-pk").first()
    assert newer.relevance_threshold == 3
    binary = client.get(reverse("evaluation:qrels-download", args=[newer.qrels.pk]) + "?binary=1")
    assert binary.content == b"1 0 d0 0\n1 0 d1 1\n2 0 d0 0\n"


def test_the_decision_log_download_names_the_rule_in_force(world):
    from annotation import services

    campaign, _, _, client = world
    client.post(
        url("adjudicate-pair", campaign, pair_id("1", "d2")), {"grade": "1", "reason": "close"}
    )
    services.update_campaign(campaign=campaign, adjudication_rule="lead")
    first = LeadDecision.objects.get()
    client.post(
        url("adjudicate-pair", campaign, pair_id("1", "d2")),
        {"grade": "2", "reason": "=on reflection", "based_on": str(first.pk)},
    )
    response = client.get(url("campaign-download", campaign, "decisions"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [
        "qid",
        "docno",
        "grade",
        "reason",
        "lead",
        "decided_at",
        "rule_in_force",
        "replaces",
    ]
    assert [(r[2], r[3], r[4], r[6], r[7]) for r in rows[1:]] == [
        ("1", "close", "lead", "majority", ""),
        ("2", "'=on reflection", "lead", "lead", str(first.pk)),
    ]
    page = client.get(url("adjudicate-pair", campaign, pair_id("1", "d2"))).content.decode()
    assert "(rule: majority (a tie goes to the lead))" in page
    assert "(rule: the lead decides every disagreement)" in page


def test_each_topics_disputed_count_on_the_agreement_report_matches_the_queue_it_links_to(world):
    import re

    from annotation import services
    from annotation.models import Assignment

    campaign, _, judges, client = world
    # Topic 2's open pair gets two different grades; its third judge has not graded it.
    for judge, grade in zip(judges[:2], (0, 3), strict=True):
        mine = Assignment.objects.get(pair_id=pair_id("2", "d2"), judge=judge)
        services.record_judgment(assignment_id=mine.pk, judge=judge, grade=grade)
    page = client.get(url("agreement", campaign)).content.decode()
    links = re.findall(
        r'<a class="disputed" href="([^"]+)" aria-label="(\d+) disputed pairs of topic (\w+)"',
        page,
    )
    assert {qid: int(n) for _, n, qid in links} == {"1": 2, "2": 2}
    for href, n, qid in links:
        queue = client.get(href.replace("&amp;", "&")).content.decode()
        rows = re.findall(r"<tr>\s*<td><span class=\"qid\">(\w+)</span>", queue)
        assert rows == [qid] * int(n), f"topic {qid}: the link says {n}, the queue lists {rows}"
    # Topic 2: d0 settled by majority, d2 still waiting for its third judge.
    topic_2 = next(href for href, _, qid in links if qid == "2")
    queue = client.get(topic_2.replace("&amp;", "&")).content.decode()
    assert "waiting for 1 judge" in queue
    undecided = client.get(url("adjudication", campaign) + "?show=undecided").content.decode()
    assert "waiting for" not in undecided


def test_the_publish_pages_name_input_has_the_servers_rule(world):
    from annotation.services import adjudication

    campaign, _, _, client = world
    page = client.get(url("publish", campaign)).content.decode()
    assert f'pattern="{adjudication.QRELS_NAME_PATTERN}"' in page
    refused = client.post(url("publish", campaign), {"name": "Web-2026", "leave_out": "on"})
    assert refused.status_code == 400
    assert "e.g. &#x27;web-2026&#x27;" in refused.content.decode()
