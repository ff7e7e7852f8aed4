"""The judging page, its pair fragment and the grade/skip/undo/note endpoints
(annotation/views/judging.py), through the Django test client."""

import json
import uuid

import polars as pl
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Document,
    Judgment,
    JudgmentChange,
    PairSource,
    Topic,
)
from annotation.services import campaign_files
from annotation.services.common import MESSAGES
from common import text_limits
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

GUIDELINES = """Grade **what the page says**, not what you know.

<script>alert("guidelines")</script> <img src="/x.png" onerror="alert(2)">
[TREC DL](https://trec.nist.gov/) · [bad](javascript:alert(1))
"""


def judging_world():
    """Two judges (judy, otto) who both judge every pair of a two-topic campaign (overlap 2),
    and a third user who judges nothing."""
    User = get_user_model()
    lead = User.objects.create_user("lead")
    judy = User.objects.create_user("judy")
    otto = User.objects.create_user("otto")
    stranger = User.objects.create_user("stranger")
    campaign = services.create_campaign(
        lead=lead, name="Passports", overlap=2, judges=[judy, otto], guidelines=GUIDELINES
    )
    Topic.objects.create(
        campaign=campaign,
        qid="101",
        query="passport renewal fees",
        description="How much does it cost?",
        narrative="Pages naming a price are relevant.",
    )
    Topic.objects.create(campaign=campaign, qid="102", query="visa waiver")
    services.add_pairs(
        campaign=campaign,
        pairs=[("101", "d1"), ("101", "d2"), ("101", "d3"), ("102", "d4")],
        source=PairSource.IMPORTED,
    )
    Document.objects.filter(campaign=campaign, docno="d1").update(
        title="Renewing a passport",
        text="Passport fees: renewals cost $130. <script>alert('doc')</script>",
        url="https://example.org/fees",
    )
    # Judges grade only documents with text (d9, added by a test, has none).
    for docno in ("d2", "d3", "d4"):
        Document.objects.filter(campaign=campaign, docno=docno).update(text=f"Passage {docno}.")
    return {
        "campaign": campaign,
        "judy": judy,
        "otto": otto,
        "stranger": stranger,
        "lead": lead,
    }


world_made = made_once(judging_world)


@pytest.fixture
def world(world_copy):
    """judging_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def queue_of(world, who):
    return services.judge_queue(campaign=world["campaign"], judge=world[who])


def client_for(world, who) -> Client:
    client = Client()
    client.force_login(world[who])
    return client


def url(name, world, assignment=None):
    args = [world["campaign"].pk] + ([assignment] if assignment is not None else [])
    return reverse(f"annotation:{name}", args=args)


def page_config(response) -> dict:
    html = response.content.decode()
    start = html.index('<script id="judge-config" type="application/json">')
    body = html[start:].split(">", 1)[1].split("</script>", 1)[0]
    return json.loads(body)


# --- the page ------------------------------------------------------------------------------


def test_the_page_opens_at_the_first_open_assignment_in_the_judges_queue(world):
    queue = queue_of(world, "judy")
    for assignment_id in queue[:2]:
        services.record_judgment(assignment_id=assignment_id, judge=world["judy"], grade=1)

    response = client_for(world, "judy").get(url("judge", world))

    assert response.status_code == 200
    config = page_config(response)
    assert [row[0] for row in config["queue"]] == queue, "the page must follow judge_queue order"
    assert config["start"] == queue[2], "the page should resume at the first open assignment"
    assert [row[2] for row in config["queue"]] == ["done", "done", "open", "open"]
    assert f'data-assignment="{queue[2]}"' in response.content.decode()


def test_the_page_needs_a_logged_in_user(world):
    response = Client().get(url("judge", world))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))


def test_someone_who_does_not_judge_the_campaign_gets_404_everywhere(world):
    client = client_for(world, "stranger")
    assignment = queue_of(world, "judy")[0]
    assert client.get(url("judge", world)).status_code == 404
    assert client.get(url("judge-pair", world, assignment)).status_code == 404
    for name in ("judge-grade", "judge-skip", "judge-undo", "judge-note"):
        response = client.post(url(name, world, assignment), {"grade": 1, "reason": "x"})
        assert response.status_code == 404, f"{name} must hide the campaign from non-judges"
        assert response.json() == {"error": "No such pair among your assignments in this campaign."}
    assert not Judgment.objects.exists()


def test_even_the_lead_does_not_get_the_judging_page_of_a_campaign_they_do_not_judge(world):
    assert client_for(world, "lead").get(url("judge", world)).status_code == 404


def test_the_page_lists_only_the_judges_own_assignments(world):
    config = page_config(client_for(world, "judy").get(url("judge", world)))
    mine = set(Assignment.objects.filter(judge=world["judy"]).values_list("pk", flat=True))
    assert {row[0] for row in config["queue"]} == mine
    assert config["grades"] == [0, 1, 2, 3]
    assert [item["tone"] for item in config["scale"]] == [0, 2, 3, 5]


def test_the_page_shows_topic_scale_and_sanitised_guidelines(world):
    html = client_for(world, "judy").get(url("judge", world)).content.decode()
    assert "passport renewal fees" in html and "How much does it cost?" in html
    assert "Pages naming a price are relevant." in html
    for label in ("Irrelevant", "Related", "Highly relevant", "Perfectly relevant"):
        assert label in html, f"the scale label {label!r} should always be on the page"
    assert "Has nothing to do with the query." in html
    assert "<strong>what the page says</strong>" in html, "guidelines are rendered Markdown"
    assert 'alert("guidelines")' not in html, "a <script> in the guidelines must be removed"
    assert "onerror" not in html, "event-handler attributes in the guidelines must be removed"
    assert 'href="https://trec.nist.gov/"' in html
    assert "javascript:alert" not in html
    assert 'rel="noopener noreferrer"' in html


def test_the_page_has_no_inline_javascript(world):
    html = client_for(world, "judy").get(url("judge", world)).content.decode()
    scripts = html.count("<script")
    assert scripts == html.count('<script src="') + html.count('type="application/json"'), (
        "every <script> must load a file or carry json_script data: a CSP without "
        "'unsafe-inline' is coming"
    )
    assert " onclick=" not in html and " onkeydown=" not in html
    assert 'src="/static/js/judge.js" defer' in html


def test_when_every_pair_is_done_the_page_says_so(world):
    for assignment_id in queue_of(world, "judy"):
        services.record_judgment(assignment_id=assignment_id, judge=world["judy"], grade=0)
    response = client_for(world, "judy").get(url("judge", world))
    assert page_config(response)["start"] is None
    assert "You have been through every pair" in response.content.decode()


def test_a_judge_without_assignments_sees_an_empty_state(world, django_user_model):
    newcomer = django_user_model.objects.create_user("newcomer")
    services.add_judge(campaign=world["campaign"], judge=newcomer)
    Assignment.objects.filter(judge=newcomer).delete()
    client = Client()
    client.force_login(newcomer)
    response = client.get(url("judge", world))
    assert response.status_code == 200
    assert "No pairs for you yet" in response.content.decode()


# --- the pair fragment ---------------------------------------------------------------------


def test_the_fragment_escapes_the_document_and_marks_the_query_terms(world):
    d1 = Assignment.objects.get(judge=world["judy"], pair__document__docno="d1")
    html = client_for(world, "judy").get(url("judge-pair", world, d1.pk)).content.decode()
    assert "<mark>Passport</mark> <mark>fees</mark>: <mark>renewals</mark> cost $130." in html
    assert "<script>alert('doc')</script>" not in html
    assert "&lt;script&gt;alert(&#x27;doc&#x27;)&lt;/script&gt;" in html
    assert 'href="https://example.org/fees" target="_blank" rel="noopener noreferrer"' in html, (
        "the document link opens in a new tab without leaking the judging page"
    )
    assert "<html" not in html, "a fragment, not a page"


def test_the_fragment_shows_the_judges_own_grade_and_note_only(world):
    judy_a = Assignment.objects.get(judge=world["judy"], pair__document__docno="d2")
    otto_a = Assignment.objects.get(judge=world["otto"], pair__document__docno="d2")
    services.record_judgment(assignment_id=otto_a.pk, judge=world["otto"], grade=3)
    services.set_note(assignment_id=otto_a.pk, judge=world["otto"], note="OTTO-SECRET")
    services.record_judgment(assignment_id=judy_a.pk, judge=world["judy"], grade=1)

    html = client_for(world, "judy").get(url("judge-pair", world, judy_a.pk)).content.decode()

    assert 'data-grade="1"' in html and 'data-status="done"' in html
    assert "OTTO-SECRET" not in html, "judges never see other judges' notes"
    assert 'data-grade="3"' not in html, "judges never see other judges' grades"


def test_the_page_and_fragment_do_not_reveal_how_a_document_was_pooled(world):
    """Blind judging: nothing on the page says which run retrieved a document or at what rank;
    the only trace a pooled pair carries is its source, which must not reach the judge."""
    run = pl.DataFrame(
        {"qid": ["102", "102"], "docno": ["top-ranked", "second"], "score": [9.0, 8.0]},
        schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64},
    )
    services.pool_from_runs(campaign=world["campaign"], run_frames=[run], depth=10)
    client = client_for(world, "judy")
    pooled = Assignment.objects.get(judge=world["judy"], pair__document__docno="top-ranked")
    pages = [
        client.get(url("judge", world)).content.decode(),
        client.get(url("judge-pair", world, pooled.pk)).content.decode(),
    ]
    for html in pages:
        for leak in ("pooled", "Depth-k pooling", "score", "rank "):
            assert leak not in html, f"{leak!r} must not reach judges (blind judging)"


def test_another_judges_assignment_is_404_in_the_fragment(world):
    theirs = queue_of(world, "otto")[0]
    assert client_for(world, "judy").get(url("judge-pair", world, theirs)).status_code == 404


def test_an_assignment_of_another_campaign_is_404_even_for_its_own_judge(world):
    other = services.create_campaign(lead=world["lead"], name="Other", judges=[world["judy"]])
    Topic.objects.create(campaign=other, qid="9", query="q")
    services.add_pairs(campaign=other, pairs=[("9", "x")], source=PairSource.IMPORTED)
    Document.objects.filter(campaign=other, docno="x").update(text="Some text.")
    elsewhere = services.judge_queue(campaign=other, judge=world["judy"])[0]
    client = client_for(world, "judy")
    assert client.get(url("judge-pair", world, elsewhere)).status_code == 404
    response = client.post(url("judge-grade", world, elsewhere), {"grade": 1})
    assert response.status_code == 404
    assert not Judgment.objects.exists()


# --- methods, login, CSRF ------------------------------------------------------------------


def test_wrong_methods_get_405(world):
    client = client_for(world, "judy")
    assignment = queue_of(world, "judy")[0]
    assert client.post(url("judge", world)).status_code == 405
    assert client.post(url("judge-pair", world, assignment)).status_code == 405
    for name in ("judge-grade", "judge-skip", "judge-undo", "judge-note"):
        for method in (client.get, client.put, client.delete):
            response = method(url(name, world, assignment))
            assert response.status_code == 405, f"{method.__name__} {name}"
            assert response["Allow"] == "POST"
            assert response.json() == {"error": "Use POST for this endpoint."}


def test_a_logged_out_submission_gets_401_json_not_a_login_redirect(world):
    """fetch() follows redirects: a 302 to the login page would look like a success."""
    assignment = queue_of(world, "judy")[0]
    response = Client().post(url("judge-grade", world, assignment), {"grade": 1})
    assert response.status_code == 401
    assert "Log in again" in response.json()["error"]


def test_submissions_need_the_csrf_token(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world["judy"])
    assignment = queue_of(world, "judy")[0]
    assert client.post(url("judge-grade", world, assignment), {"grade": 1}).status_code == 403
    token = client.get(url("judge", world)).cookies["csrftoken"].value
    response = client.post(
        url("judge-grade", world, assignment), {"grade": 1}, headers={"X-CSRFToken": token}
    )
    assert response.status_code == 200


# --- grade ---------------------------------------------------------------------------------


def test_grading_records_the_grade_and_returns_the_state(world):
    queue = queue_of(world, "judy")
    response = client_for(world, "judy").post(
        url("judge-grade", world, queue[0]),
        {"grade": 2, "seconds": "7.25", "request_id": str(uuid.uuid4())},
    )
    assert response.status_code == 200
    assert response.json() == {
        "assignment": queue[0],
        "status": "done",
        "grade": 2,
        "skip_reason": "",
        "note": "",
        "paused": False,  # the campaign's stop rule has not paused it
    }
    judgment = Judgment.objects.get(assignment_id=queue[0])
    assert (judgment.grade, judgment.seconds) == (2, 7.25)
    assert Assignment.objects.get(pk=queue[0]).status == AssignmentStatus.DONE


def test_a_grade_outside_the_scale_is_refused_with_the_services_message(world):
    assignment = queue_of(world, "judy")[0]
    response = client_for(world, "judy").post(url("judge-grade", world, assignment), {"grade": 4})
    assert response.status_code == 400
    assert response.json() == {
        "error": services.MESSAGES["grade_not_in_scale"].format(grade=4, grades="0, 1, 2, 3")
    }
    assert not Judgment.objects.exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Send the grade as a whole number."),
        ({"grade": "two"}, "Send the grade as a whole number."),
        ({"grade": 1, "seconds": "-3"}, "Send seconds as a number of seconds."),
        ({"grade": 1, "seconds": "nan"}, "Send seconds as a number of seconds."),
        ({"grade": 1, "request_id": "not-a-uuid"}, "Send request_id as a UUID."),
    ],
)
def test_malformed_submissions_are_refused_with_a_message(world, data, message):
    assignment = queue_of(world, "judy")[0]
    response = client_for(world, "judy").post(url("judge-grade", world, assignment), data)
    assert response.status_code == 400
    assert response.json() == {"error": message}
    assert not Judgment.objects.exists()


def test_absurd_active_time_is_capped_at_an_hour(world):
    assignment = queue_of(world, "judy")[0]
    client_for(world, "judy").post(
        url("judge-grade", world, assignment), {"grade": 1, "seconds": "1e9"}
    )
    assert Judgment.objects.get().seconds == 3600.0


def test_a_repeated_request_id_is_counted_once(world):
    """judge.js retries a submission whose answer it never got, with the same request_id."""
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    data = {"grade": 3, "seconds": "4", "request_id": str(uuid.uuid4())}
    answers = [client.post(url("judge-grade", world, assignment), data) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert {answer.json()["grade"] for answer in answers} == {3}
    judgment = Judgment.objects.get()
    assert judgment.seconds == 4, "a retried submission must not count its time again"
    assert JudgmentChange.objects.count() == 1


def test_a_judge_revising_their_own_grade_keeps_the_history(world):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    for grade in (1, 3, 3):
        client.post(
            url("judge-grade", world, assignment),
            {"grade": grade, "seconds": "2", "request_id": str(uuid.uuid4())},
        )
    assert Judgment.objects.get().grade == 3
    history = list(
        JudgmentChange.objects.values_list("action", "old_grade", "new_grade", "changed_by")
    )
    judy = world["judy"].pk
    assert history == [("graded", None, 1, judy), ("regraded", 1, 3, judy)], (
        "every change is kept, and re-sending the same grade is not a change"
    )


def test_a_judge_cannot_touch_another_judges_assignment(world):
    theirs = queue_of(world, "otto")[0]
    services.record_judgment(assignment_id=theirs, judge=world["otto"], grade=2)
    client = client_for(world, "judy")
    for name, data in [
        ("judge-grade", {"grade": 0}),
        ("judge-skip", {"reason": "can't judge"}),
        ("judge-undo", {}),
        ("judge-note", {"note": "mine now"}),
    ]:
        response = client.post(url(name, world, theirs), data)
        assert response.status_code == 404, f"{name} on another judge's pair must be a 404"
    judgment = Judgment.objects.get(assignment_id=theirs)
    assert (judgment.grade, judgment.note) == (2, "")
    assert JudgmentChange.objects.filter(assignment_id=theirs).count() == 1


# --- skip, undo, note ----------------------------------------------------------------------


def test_skipping_needs_a_reason_and_is_recorded(world):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    response = client.post(url("judge-skip", world, assignment), {"reason": "   "})
    assert response.status_code == 400
    assert response.json() == {"error": services.MESSAGES["skip_needs_reason"]}

    response = client.post(
        url("judge-skip", world, assignment),
        {"reason": "can't judge", "seconds": "3", "request_id": str(uuid.uuid4())},
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["grade"], body["skip_reason"]) == ("skipped", None, "can't judge")
    assert Assignment.objects.get(pk=assignment).status == AssignmentStatus.SKIPPED


def test_a_repeated_skip_is_applied_once(world):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    data = {"reason": "can't judge", "seconds": "3", "request_id": str(uuid.uuid4())}
    client.post(url("judge-skip", world, assignment), data)
    client.post(url("judge-skip", world, assignment), data)
    assert JudgmentChange.objects.filter(action="skipped").count() == 1
    assert Judgment.objects.get().seconds == 3


def test_undo_reopens_the_pair_and_the_page_resumes_there(world):
    queue = queue_of(world, "judy")
    client = client_for(world, "judy")
    client.post(url("judge-grade", world, queue[0]), {"grade": 2})
    client.post(url("judge-grade", world, queue[1]), {"grade": 0})

    response = client.post(url("judge-undo", world, queue[0]))

    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["grade"]) == ("open", None)
    assert not Judgment.objects.filter(assignment_id=queue[0]).exists()
    assert list(
        JudgmentChange.objects.filter(assignment_id=queue[0]).values_list("action", "old_grade")
    ) == [("graded", None), ("undone", 2)]
    assert page_config(client.get(url("judge", world)))["start"] == queue[0]


def test_undo_of_an_open_pair_changes_nothing(world):
    assignment = queue_of(world, "judy")[0]
    response = client_for(world, "judy").post(url("judge-undo", world, assignment))
    assert response.status_code == 200
    assert response.json()["status"] == "open"
    assert not JudgmentChange.objects.exists()


def test_a_note_attaches_to_the_judges_judgment_and_is_kept_in_history(world):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    response = client.post(url("judge-note", world, assignment), {"note": "too early"})
    assert response.status_code == 400
    assert response.json() == {"error": "Grade the pair before adding a note."}

    client.post(url("judge-grade", world, assignment), {"grade": 1})
    response = client.post(url("judge-note", world, assignment), {"note": "  price is for 2019  "})

    assert response.status_code == 200
    assert response.json()["note"] == "price is for 2019"
    assert Judgment.objects.get().note == "price is for 2019"
    assert JudgmentChange.objects.last().action == "noted"
    fragment = client.get(url("judge-pair", world, assignment)).content.decode()
    assert "price is for 2019" in fragment


# --- query counts --------------------------------------------------------------------------


def test_the_fragment_costs_four_queries(world, django_assert_num_queries):
    assignment = queue_of(world, "judy")[0]
    services.record_judgment(assignment_id=assignment, judge=world["judy"], grade=1)
    client = client_for(world, "judy")
    # 1 session, 2 user, 3 the campaign if the user judges it (access.get_campaign_for_judge),
    # 4 the assignment with its topic, document and own judgment (get_assignment_for_judge).
    with django_assert_num_queries(4):
        response = client.get(url("judge-pair", world, assignment))
    assert response.status_code == 200


def test_an_open_pairs_fragment_costs_the_same_four_queries(world, django_assert_num_queries):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    # As above: the judgment comes in the assignment's join, there or not.
    with django_assert_num_queries(4):
        client.get(url("judge-pair", world, assignment))


def test_a_first_grade_costs_thirteen_queries_eight_on_postgresql(world, django_assert_num_queries):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    data = {"grade": 2, "seconds": "1.5", "request_id": str(uuid.uuid4())}
    # 1 session, 2 user, then services.record_judgment: 3 savepoint (BEGIN outside tests),
    # 4 the judge's assignment in this campaign, locked (the access check and the lock in one
    # statement), 5 its pair's and topic's rows locked, with the campaign's scale and rule,
    # the judgment (none) and whether an agreement refresh is queued, 6 the pair's judges'
    # and outside people's (and counted machines') grades and the pair as it is (its tally,
    # gold grade, lead decision, rule); then the writes, one statement on PostgreSQL (a
    # data-modifying WITH), one each elsewhere: 7 insert the judgment, 8 insert the
    # JudgmentChange, 9 mark the assignment done, 10 move one count of the judge's tally
    # (open -> graded), 11 store the pair's tally, 12 shift its topic's counts by the pair's
    # change (no count of the topic's pairs); 13 release the savepoint (COMMIT). (The
    # agreement is only marked stale with a task worker, from what 5 read: inline, nothing.)
    with django_assert_num_queries(8 if connection.vendor == "postgresql" else 13):
        response = client.post(url("judge-grade", world, assignment), data)
    assert response.status_code == 200


def test_a_revised_grade_costs_ten_queries_eight_on_postgresql(world, django_assert_num_queries):
    assignment = queue_of(world, "judy")[0]
    services.record_judgment(assignment_id=assignment, judge=world["judy"], grade=1)
    client = client_for(world, "judy")
    data = {"grade": 2, "seconds": "1.5", "request_id": str(uuid.uuid4())}
    # 1 session, 2 user, 3 savepoint, 4 the locked assignment, 5 the pair and topic locked
    # with the scale and the judgment, 6 the pair's grades and the pair as it is, then the
    # writes (one statement on PostgreSQL): 7 update the judgment, 8 insert the
    # JudgmentChange, 9 store the pair's tally (the assignment stays done; its topic's counts
    # do not move: one judge's grade 1 -> 2 changes no count, so no shift is sent); 10
    # release the savepoint.
    with django_assert_num_queries(8 if connection.vendor == "postgresql" else 10):
        response = client.post(url("judge-grade", world, assignment), data)
    assert response.status_code == 200
    # A retry stops after the judgment is read: 1-5, then release.
    with django_assert_num_queries(6):
        client.post(url("judge-grade", world, assignment), data)


def test_the_page_costs_seven_queries(world, django_assert_num_queries):
    client = client_for(world, "judy")
    # 1 session, 2 user, 3 the campaign if the user judges it, 4 the queue (ids, topics,
    # statuses), 5 how many of the judge's pairs wait for their document's text, 6 the first
    # open assignment with topic and document, 7 the user's roles for the navigation
    # (accounts.context_processors).
    with django_assert_num_queries(7):
        client.get(url("judge", world))


def test_the_pages_queue_is_services_judge_queue(world):
    """The page draws progress from its own query; it must keep judge_queue's order."""
    for who in ("judy", "otto"):
        config = page_config(client_for(world, who).get(url("judge", world)))
        assert [row[0] for row in config["queue"]] == queue_of(world, who)


def test_a_document_url_that_is_not_http_is_shown_but_never_linked(world):
    d2 = Assignment.objects.get(judge=world["judy"], pair__document__docno="d2")
    Document.objects.filter(pk=d2.pair.document_id).update(url="javascript:alert(1)")
    html = client_for(world, "judy").get(url("judge-pair", world, d2.pk)).content.decode()
    assert 'href="javascript' not in html
    assert "javascript:alert(1)" in html, "the judge still sees what the url was"


def test_an_overlong_note_is_refused(world):
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    client.post(url("judge-grade", world, assignment), {"grade": 1})
    at_cap = client.post(url("judge-note", world, assignment), {"note": "x" * text_limits.NOTE})
    response = client.post(url("judge-note", world, assignment), {"note": "y" * 10_001})
    assert at_cap.status_code == 200
    assert response.status_code == 400
    assert response.json() == {"error": "Keep the note to 10,000 characters."}
    assert Judgment.objects.get().note == "x" * text_limits.NOTE


def test_an_overlong_skip_reason_is_refused_not_cut(world):
    # Issue 27: the reason was cut to 200 characters and kept whole in the history.
    assignment = queue_of(world, "judy")[0]
    client = client_for(world, "judy")
    response = client.post(url("judge-skip", world, assignment), {"reason": "x" * 201})
    assert response.status_code == 400
    assert response.json() == {"error": "Keep this to 200 characters; it has 201."}
    assert not Judgment.objects.exists() and not JudgmentChange.objects.exists()


# --- pairs whose document has no text yet --------------------------------------------------


def add_textless_pair(world, docno="d9"):
    """A pair of topic 102 whose document pooling added without title or text."""
    services.add_pairs(campaign=world["campaign"], pairs=[("102", docno)], source=PairSource.POOLED)
    return Assignment.objects.get(judge=world["judy"], pair__document__docno=docno)


def test_a_pair_without_text_waits_outside_the_queue_until_a_documents_import_fills_it(world):
    before = queue_of(world, "judy")
    waiting = add_textless_pair(world)
    titled = add_textless_pair(world, docno="d8")
    Document.objects.filter(campaign=world["campaign"], docno="d8").update(title="A title only")

    assert sorted(queue_of(world, "judy")) == sorted([*before, titled.pk]), "a title is enough"
    assert services.waiting_for_text(campaign=world["campaign"], judge=world["judy"]) == 1
    response = client_for(world, "judy").get(url("judge", world))
    config = page_config(response)
    assert waiting.pk not in [row[0] for row in config["queue"]]
    assert config["waiting"] == 1
    assert "1 more pair waits for its document&#x27;s text" in response.content.decode()

    # The lead imports the documents file: the pair is in the queue, with nothing else done.
    campaign_files.import_documents(
        campaign=world["campaign"],
        source=b'{"docno": "d9", "title": "Visa rules", "text": "Ninety days."}\n',
        filename="docs.jsonl",
    )
    assert waiting.pk in queue_of(world, "judy")
    assert services.waiting_for_text(campaign=world["campaign"], judge=world["judy"]) == 0
    config = page_config(client_for(world, "judy").get(url("judge", world)))
    assert waiting.pk in [row[0] for row in config["queue"]] and config["waiting"] == 0
    response = client_for(world, "judy").post(url("judge-grade", world, waiting.pk), {"grade": 1})
    assert response.status_code == 200


def test_grading_a_pair_without_text_is_refused_and_stores_nothing(world):
    waiting = add_textless_pair(world)

    response = client_for(world, "judy").post(url("judge-grade", world, waiting.pk), {"grade": 2})

    assert response.status_code == 400
    assert response.json() == {"error": MESSAGES["document_lacks_text"].format(docno="d9")}
    assert "has no text yet" in response.json()["error"]
    assert not Judgment.objects.filter(assignment=waiting).exists()
    assert not JudgmentChange.objects.filter(assignment=waiting).exists()
    waiting.refresh_from_db()
    assert waiting.status == AssignmentStatus.OPEN


def test_a_judge_whose_every_pair_waits_for_text_is_told_so(world):
    Document.objects.filter(campaign=world["campaign"]).update(title="", text="")

    response = client_for(world, "judy").get(url("judge", world))

    assert page_config(response)["queue"] == []
    assert "No pairs for you yet" in response.content.decode()
    assert "4 more pairs wait for their documents&#x27; text" in response.content.decode()


def test_the_campaign_list_counts_a_judges_pairs_and_those_waiting_for_text(world):
    add_textless_pair(world)

    response = client_for(world, "judy").get(reverse("annotation:campaign-list"))

    html = response.content.decode()
    assert "0 of 4 pairs" in html and "1 more waits for its document&#x27;s text" in html
