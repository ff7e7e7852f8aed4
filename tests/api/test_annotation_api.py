"""The annotation API: campaigns, their topics, documents, pool, judges and progress, and
judging through assignments. Who may call what is in test_permissions.py; this is what each
call does, including every refusal."""

import copy
import uuid

import pytest

from annotation import api as annotation_api
from annotation import services
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Document,
    Judgment,
    JudgmentChange,
    Pair,
    Topic,
)
from annotation.scales import MAX_GRADES
from evaluation import services as evaluation
from jobs.models import JobStatus
from tests.api.conftest import DOCUMENTS, TOPICS, upload

pytestmark = pytest.mark.django_db

CAMPAIGNS_URL = "/api/v1/campaigns/"
ASSIGNMENTS_URL = "/api/v1/assignments/"
JUDGMENTS_URL = "/api/v1/judgments/"


@pytest.fixture
def world(module_world, db):
    """One world for the module (tests/api/conftest.py, ``module_world``), rolled back to
    after each test; each test gets its own copy of the objects, so one that changes them in
    memory (a campaign's overlap) leaves the next test the world as it was made."""
    return copy.deepcopy(module_world)


@pytest.fixture
def lead(api, world):
    return api(world.users["lead"])


@pytest.fixture
def judge(api, world):
    return api(world.users["judge"])


def campaign_url(world, rest: str = "") -> str:
    return f"/api/v1/campaigns/{world.campaign.pk}/{rest}"


def assignment_url(assignment, action: str = "") -> str:
    return f"/api/v1/assignments/{assignment.pk}/{action + '/' if action else ''}"


def job_of(client, response) -> dict:
    assert response.status_code == 202, response.content
    return client.get(response["Location"]).json()


# --- campaigns -----------------------------------------------------------------------------


def test_a_lead_creates_a_campaign_with_a_preset_scale_and_judges(lead, world):
    judges = [world.ids["judge"], world.ids["other_judge"]]
    response = lead.post(
        CAMPAIGNS_URL,
        {"name": "Deep", "scale": "0-5", "overlap": 2, "relevance_threshold": 3, "judges": judges},
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == body["url"]
    assert [item["grade"] for item in body["scale"]] == [0, 1, 2, 3, 4, 5]
    assert (body["overlap"], body["relevance_threshold"], body["lead"]) == (2, 3, "lea")
    assert body["role"] == "lead"
    assert body["judges"] == [
        {"id": judges[0], "username": "ann"},
        {"id": judges[1], "username": "bob"},
    ]
    assert isinstance(body["seed"], int)


def test_a_campaign_defaults_to_the_trec_deep_learning_scale(lead):
    body = lead.post(CAMPAIGNS_URL, {"name": "Plain"}, format="json").json()

    assert [item["label"] for item in body["scale"]] == [
        "Irrelevant",
        "Related",
        "Highly relevant",
        "Perfectly relevant",
    ]
    assert (body["overlap"], body["relevance_threshold"], body["judges"]) == (1, 1, [])


def test_a_custom_scale_is_used_as_given(lead):
    scale = [
        {"grade": 0, "label": "No", "definition": "Not relevant."},
        {"grade": 1, "label": "Yes", "definition": "Relevant."},
    ]
    body = lead.post(CAMPAIGNS_URL, {"name": "Binary", "scale": scale}, format="json").json()

    assert body["scale"] == scale


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        (5, annotation_api.MESSAGES["scale_type"]),
        ("0-9", "Unknown scale '0-9'; choose one of 0-3, 0-5."),
        (
            [
                {"grade": 0, "label": "No", "definition": ""},
                {"grade": 2, "label": "Yes", "definition": ""},
            ],
            "grades must run 0, 1, 2, … in order; found 2 at 1",
        ),
        (
            [
                {"grade": 0, "label": "No", "definition": ""},
                {"grade": True, "label": "Yes", "definition": ""},
            ],
            annotation_api.MESSAGES["scale_item"].format(grade=1),
        ),
        (
            [
                {"grade": 0, "label": " ", "definition": ""},
                {"grade": 1, "label": "Yes", "definition": ""},
            ],
            annotation_api.MESSAGES["scale_item"].format(grade=0),
        ),
        ([{"grade": 0, "label": "Only", "definition": ""}], "a scale needs at least two grades"),
        (
            [{"grade": g, "label": "g", "definition": ""} for g in range(MAX_GRADES + 1)],
            f"a scale has at most {MAX_GRADES} grades (0 to 100); this one has 102",
        ),
        (
            # Not even grades: the size is said first.
            [None] * 200_000,
            f"a scale has at most {MAX_GRADES} grades (0 to 100); this one has 200,000",
        ),
    ],
    ids=[
        "not a list or name",
        "unknown name",
        "gap",
        "boolean grade",
        "blank label",
        "one grade",
        "one grade too many",
        "200,000 grades",
    ],
)
def test_a_bad_scale_is_400_with_what_is_wrong(lead, scale, message):
    response = lead.post(CAMPAIGNS_URL, {"name": "Bad", "scale": scale}, format="json")

    assert response.status_code == 400
    assert response.json() == {"scale": [message]}
    assert not Campaign.objects.filter(name="Bad").exists()


def test_a_json_body_giving_a_key_twice_is_400_naming_it(lead):
    # Issue 27: the last value won silently.
    response = lead.post(
        CAMPAIGNS_URL, b'{"name": "First", "name": "Second"}', content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json() == {
        "detail": "JSON parse error - duplicate key 'name' (a key may appear once per object)."
    }
    assert not Campaign.objects.filter(name__in=["First", "Second"]).exists()


def test_campaign_fields_are_checked_on_create(lead, world):
    response = lead.post(
        CAMPAIGNS_URL,
        {
            "name": "",
            "overlap": 0,
            "relevance_threshold": 4,
            "judges": [world.ids["judge"], world.users["nobody"].pk],
        },
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {
        "name": ["This field may not be blank."],
        "overlap": ["Ensure this value is greater than or equal to 1."],
        "judges": [f"User {world.users['nobody'].pk} is not in the judge group."],
    }


def test_the_relevance_threshold_must_be_a_grade_of_the_scale(lead):
    response = lead.post(CAMPAIGNS_URL, {"name": "T", "relevance_threshold": 4}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "relevance_threshold": ["The relevance threshold 4 is not a grade of the scale."]
    }


def test_a_judge_reads_their_campaign_without_its_judges_or_seed(judge, world):
    listed = judge.get(CAMPAIGNS_URL).json()

    assert listed["count"] == 1
    [campaign] = listed["results"]
    assert (campaign["id"], campaign["role"]) == (world.campaign.pk, "judge")
    assert (campaign["judges"], campaign["seed"]) == (None, None)
    assert campaign["scale"] == world.campaign.scale


def test_an_engineer_sees_no_campaign(api, world):
    assert api(world.users["engineer"]).get(CAMPAIGNS_URL).json()["count"] == 0


def test_raising_the_overlap_gives_every_pair_more_judges(lead, world):
    response = lead.patch(campaign_url(world), {"overlap": 2}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["overlap"] == 2
    for pair in Pair.objects.filter(campaign=world.campaign):
        assert pair.assignments.count() == 2, f"pair {pair} should have both judges"


def test_a_smaller_scale_is_refused_while_judgments_use_its_missing_grades(lead, world):
    binary = [
        {"grade": 0, "label": "No", "definition": ""},
        {"grade": 1, "label": "Yes", "definition": ""},
    ]
    response = lead.patch(campaign_url(world), {"scale": binary}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "scale": ["Judgments already use grade 2; this scale stops at grade 1."]
    }
    world.campaign.refresh_from_db()
    assert len(world.campaign.scale) == 4


def test_a_changed_threshold_must_stay_on_the_scale(lead, world):
    response = lead.patch(campaign_url(world), {"relevance_threshold": 9}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "relevance_threshold": ["The relevance threshold 9 is not a grade of the scale."]
    }


def test_an_empty_change_changes_nothing(lead, world):
    response = lead.patch(campaign_url(world), {}, format="json")

    assert response.status_code == 200
    assert response.json()["name"] == "Robust"


def test_listing_campaigns_costs_the_same_few_queries_however_many_there_are(
    lead, world, django_assert_max_num_queries
):
    for name in ("A", "B", "C"):
        services.create_campaign(lead=world.users["lead"], name=name, judges=[world.users["judge"]])
    # 1 session, 2 user, 3 the user's roles, 4 count, 5 the page with leads, 6 their judges
    with django_assert_max_num_queries(6):
        response = lead.get(CAMPAIGNS_URL)
    assert response.json()["count"] == 4


# --- topics and documents ------------------------------------------------------------------


def test_importing_topics_runs_a_job_and_adds_the_new_ones(lead, world, run_jobs):
    with run_jobs():
        response = lead.post(
            campaign_url(world, "topics/"),
            {"file": upload("topics.tsv", TOPICS), "format": "tsv"},
            format="multipart",
        )

    job = job_of(lead, response)
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert job["result"]["summary"] == "Imported 3 topics: 1 new, 0 updated, 2 unchanged."
    topics = lead.get(campaign_url(world, "topics/")).json()["results"]
    assert [(t["qid"], t["query"], t["pair_count"]) for t in topics] == [
        ("1", "cheap flights", 2),
        ("2", "sourdough starter", 2),
        ("3", "new topic", 0),
    ]


def test_a_bad_topics_file_fails_its_job_and_adds_nothing(lead, world, run_jobs):
    with run_jobs():
        response = lead.post(
            campaign_url(world, "topics/"),
            {"file": upload("topics.tsv", b"9\tfine\n10\n"), "format": "tsv"},
            format="multipart",
        )

    job = job_of(lead, response)
    assert job["status"] == JobStatus.FAILED
    assert job["error_total"] == 1
    assert job["errors"][0].startswith("topics.tsv:2: ")
    assert Topic.objects.filter(campaign=world.campaign).count() == 2


def test_an_import_needs_a_file_and_a_known_format(lead, world):
    response = lead.post(campaign_url(world, "topics/"), {"format": "xml"}, format="multipart")

    assert response.status_code == 400
    assert response.json() == {
        "file": ["No file was submitted."],
        "format": ['"xml" is not a valid choice.'],
    }


def without_text(world, *docnos):
    """The world's documents have text; these lose it (a pool whose text has not come yet)."""
    Document.objects.filter(campaign=world.campaign, docno__in=docnos).update(text="")


def test_importing_documents_adds_them_and_the_list_shows_which_lack_text(lead, world, run_jobs):
    without_text(world, "d2", "d3", "d4")
    with run_jobs():
        response = lead.post(
            campaign_url(world, "documents/"),
            {"file": upload("docs.jsonl", DOCUMENTS)},
            format="multipart",
        )
    assert job_of(lead, response)["status"] == JobStatus.SUCCEEDED

    lacking = lead.get(campaign_url(world, "documents/"), {"lacking_text": "true"}).json()
    with_text = lead.get(campaign_url(world, "documents/"), {"lacking_text": "false"}).json()

    assert [d["docno"] for d in lacking["results"]] == ["d2", "d3", "d4"]
    assert [d["docno"] for d in with_text["results"]] == ["d1", "d9"]
    assert "text" not in with_text["results"][0]
    nine = Document.objects.get(campaign=world.campaign, docno="d9")
    detail = lead.get(campaign_url(world, f"documents/{nine.pk}/")).json()
    assert (detail["title"], detail["text"], detail["has_text"]) == (
        "Nine",
        "Ninth document.",
        True,
    )


def test_a_topic_or_document_of_another_campaign_is_404(lead, world):
    other = services.create_campaign(lead=world.users["lead"], name="Other")
    topic = Topic.objects.create(campaign=other, qid="1", query="q")

    assert lead.get(campaign_url(world, f"topics/{topic.pk}/")).status_code == 404


# --- the pool ------------------------------------------------------------------------------


def test_adding_pairs_reports_what_was_new_and_assigns_it(lead, world):
    response = lead.post(
        campaign_url(world, "pairs/"),
        {"pairs": [{"qid": "1", "docno": "d1"}, {"qid": "2", "docno": "d9"}]},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json() == {"added": 1, "already": 1, "new_documents": 1, "assigned": 1}
    pairs = lead.get(campaign_url(world, "pairs/"), {"qid": "2"}).json()["results"]
    assert [(p["docno"], p["source"], p["assigned"]) for p in pairs] == [
        ("d3", "imported", 1),
        ("d4", "imported", 1),
        ("d9", "imported", 1),
    ]


def test_pairs_of_unknown_topics_are_refused_and_nothing_is_added(lead, world):
    response = lead.post(
        campaign_url(world, "pairs/"),
        {"pairs": [{"qid": "1", "docno": "d7"}, {"qid": "9", "docno": "d8"}]},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {"pairs": ["This campaign has no topic '9' (import topics first)."]}
    assert Pair.objects.filter(campaign=world.campaign).count() == 4


def test_each_pair_must_be_a_qid_and_a_docno_without_spaces(lead, world):
    response = lead.post(
        campaign_url(world, "pairs/"),
        {"pairs": [{"qid": "1", "docno": "d7"}, {"qid": "1", "docno": "two words"}, {"qid": "1"}]},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {
        "pairs": {
            "1": {"docno": [annotation_api.MESSAGES["not_an_id"]]},
            "2": {"docno": ["This field is required."]},
        }
    }


def test_an_empty_list_of_pairs_is_refused(lead, world):
    response = lead.post(campaign_url(world, "pairs/"), {"pairs": []}, format="json")

    assert response.status_code == 400
    assert response.json() == {"pairs": {"non_field_errors": ["This list may not be empty."]}}


def test_pooling_runs_is_a_job_that_adds_their_top_documents(lead, world, run_jobs):
    run = evaluation.import_run(
        source=b"1 Q0 d7 1 9.0 x\n1 Q0 d8 2 8.0 x\n2 Q0 d3 1 9.0 x\n", filename="x.run", system="x"
    )
    with run_jobs():
        response = lead.post(
            campaign_url(world, "pairs/pool/"), {"runs": [run.pk], "depth": 1}, format="json"
        )

    job = job_of(lead, response)
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert job["kind"] == "annotation.pool_runs"
    pooled = Pair.objects.filter(campaign=world.campaign, document__docno="d7").get()
    assert pooled.source == "pooled"
    assert not Pair.objects.filter(campaign=world.campaign, document__docno="d8").exists()


def test_pooling_needs_known_runs_a_sane_depth_and_topics(lead, world):
    refused = lead.post(
        campaign_url(world, "pairs/pool/"), {"runs": [999], "depth": 0}, format="json"
    )
    empty = services.create_campaign(lead=world.users["lead"], name="Empty")
    no_topics = lead.post(
        f"/api/v1/campaigns/{empty.pk}/pairs/pool/", {"runs": [world.ids["run"]]}, format="json"
    )
    no_runs = lead.post(campaign_url(world, "pairs/pool/"), {"runs": []}, format="json")

    assert refused.status_code == 400
    assert refused.json() == {
        "runs": {"0": ["No run with id 999."]},
        "depth": ["Ensure this value is greater than or equal to 1."],
    }
    assert no_topics.status_code == 400
    assert no_topics.json() == {"non_field_errors": [annotation_api.MESSAGES["no_topics"]]}
    assert no_runs.json() == {"runs": [annotation_api.MESSAGES["no_runs"]]}


def test_listing_the_pool_costs_the_same_few_queries_however_large_it_is(
    lead, world, django_assert_max_num_queries
):
    services.add_pairs(
        campaign=world.campaign, pairs=[("1", f"x{i}") for i in range(20)], source="imported"
    )
    # 1 session, 2 user, 3 the campaign (led or judged), 4 the user's roles, 5 count,
    # 6 the page with topics, documents and assignment counts
    with django_assert_max_num_queries(6):
        response = lead.get(campaign_url(world, "pairs/"))
    assert response.json()["count"] == 24


# --- judges, progress, reassignment --------------------------------------------------------


def test_a_lead_lists_adds_and_removes_judges(lead, world):
    listed = lead.get(campaign_url(world, "judges/")).json()
    added = lead.post(campaign_url(world, "judges/"), {"judge": world.ids["spare_judge"]})
    open_of_bob = Assignment.objects.filter(
        judge=world.users["other_judge"], status=AssignmentStatus.OPEN
    ).count()
    removed = lead.delete(campaign_url(world, f"judges/{world.ids['other_judge']}/"))

    assert [j["username"] for j in listed["results"]] == ["ann", "bob"]
    assert added.status_code == 201
    assert added.json() == {"id": world.ids["spare_judge"], "username": "cy", "assigned": 0}
    assert removed.status_code == 200
    assert removed.json() == {"id": world.ids["other_judge"], "redistributed": open_of_bob}
    assert Judgment.objects.filter(assignment=world.other_assignment).exists(), "grades stay"
    assert not Assignment.objects.filter(
        judge=world.users["other_judge"], status=AssignmentStatus.OPEN
    ).exists()


def test_only_users_of_the_judge_group_who_do_not_judge_yet_can_be_added(lead, world):
    nobody = lead.post(campaign_url(world, "judges/"), {"judge": world.users["nobody"].pk})
    again = lead.post(campaign_url(world, "judges/"), {"judge": world.ids["judge"]})

    assert nobody.status_code == 400
    assert nobody.json() == {
        "judge": [f"User {world.users['nobody'].pk} is not in the judge group."]
    }
    assert again.json() == {"judge": ["ann already judges this campaign."]}


def test_removing_someone_who_does_not_judge_the_campaign_is_404(lead, world):
    response = lead.delete(campaign_url(world, f"judges/{world.ids['spare_judge']}/"))

    assert response.status_code == 404


def test_progress_counts_done_and_total_per_judge_and_topic(lead, world):
    body = lead.get(campaign_url(world, "progress/")).json()

    assert [(j["username"], j["done"], j["total"]) for j in body["judges"]] == [
        ("ann", 1, 2),
        ("bob", 1, 2),
    ]
    assert sum(t["total"] for t in body["topics"]) == 4
    assert {t["qid"] for t in body["topics"]} == {"1", "2"}


def test_reassigning_moves_open_pairs_to_another_judge(lead, world):
    response = lead.post(
        campaign_url(world, "reassign/"),
        {"from_judge": world.ids["judge"], "to_judge": world.ids["other_judge"]},
        format="json",
    )

    assert response.status_code == 200
    assert response.json() == {"moved": 1}
    assert not Assignment.objects.filter(
        judge=world.users["judge"], status=AssignmentStatus.OPEN
    ).exists()


def test_reassigning_needs_another_judge_of_the_campaign_and_a_known_topic(lead, world):
    ids = world.ids
    to_nobody = lead.post(
        campaign_url(world, "reassign/"),
        {"from_judge": ids["judge"], "to_judge": world.users["nobody"].pk},
        format="json",
    )
    to_self = lead.post(
        campaign_url(world, "reassign/"),
        {"from_judge": ids["judge"], "to_judge": ids["judge"]},
        format="json",
    )
    bad_topic = lead.post(
        campaign_url(world, "reassign/"),
        {"from_judge": ids["judge"], "to_judge": ids["other_judge"], "topic": "9"},
        format="json",
    )

    assert to_nobody.json() == {"to_judge": ["nobody does not judge this campaign."]}
    assert to_self.json() == {"to_judge": [annotation_api.MESSAGES["same_judge"]]}
    assert bad_topic.json() == {"topic": ["This campaign has no topic '9' (import topics first)."]}


# --- assignments and judging ---------------------------------------------------------------


def test_a_judge_lists_only_their_own_assignments_and_grades(judge, world):
    # A judge's list leaves out pairs whose document has no text (the world's d2-d4).
    Document.objects.filter(campaign=world.campaign).update(text="A passage.")
    listed = judge.get(ASSIGNMENTS_URL).json()

    mine = set(Assignment.objects.filter(judge=world.users["judge"]).values_list("pk", flat=True))
    assert {a["id"] for a in listed["results"]} == mine
    assert {a["judge"] for a in listed["results"]} == {"ann"}
    graded = [a for a in listed["results"] if a["judgment"]]
    assert [(a["id"], a["judgment"]["grade"]) for a in graded] == [(world.assignment.pk, 2)]


def test_a_lead_lists_every_assignment_of_their_campaign_and_filters_them(lead, world):
    everything = lead.get(ASSIGNMENTS_URL).json()
    bobs = lead.get(ASSIGNMENTS_URL, {"judge": world.ids["other_judge"], "status": "done"}).json()

    assert everything["count"] == 4
    assert [(a["id"], a["judgment"]["grade"]) for a in bobs["results"]] == [
        (world.other_assignment.pk, 0)
    ]


def test_assignment_filters_are_validated(judge):
    response = judge.get(ASSIGNMENTS_URL, {"status": "finished", "campaign": "x"})

    assert response.status_code == 400
    assert response.json() == {
        "campaign": [annotation_api.MESSAGES["whole_number"]],
        "status": ['"finished" is not a valid choice.'],
    }


def test_an_assignment_shows_its_topic_and_document_but_never_the_systems(judge, world):
    body = judge.get(assignment_url(world.assignment)).json()

    assert set(body) == {
        "id",
        "url",
        "campaign",
        "judge",
        "qid",
        "docno",
        "status",
        "position",
        "judgment",
        "topic",
        "document",
        "suggestion",  # the machine's grade, when the campaign shows one (null here)
    }
    assert body["suggestion"] is None
    assert set(body["topic"]) == {"qid", "query", "description", "narrative"}
    assert set(body["document"]) == {"docno", "title", "text", "url"}


def test_grading_with_the_same_request_id_twice_counts_once(judge, world):
    assignment = Assignment.objects.filter(
        judge=world.users["judge"], status=AssignmentStatus.OPEN
    ).first()
    Document.objects.filter(pk=assignment.pair.document_id).update(text="A passage.")
    request = {"grade": 3, "seconds": 4.5, "request_id": str(uuid.uuid4())}

    first = judge.post(assignment_url(assignment, "grade"), request, format="json")
    retry = judge.post(assignment_url(assignment, "grade"), request, format="json")

    assert (first.status_code, retry.status_code) == (200, 200)
    assert first.json()["status"] == "done"
    assert retry.json()["judgment"] == first.json()["judgment"]
    assert first.json()["judgment"]["grade"] == 3
    assert Judgment.objects.get(assignment=assignment).seconds == 4.5
    assert JudgmentChange.objects.filter(assignment=assignment).count() == 1


def test_a_grade_off_the_scale_and_bad_numbers_are_400(judge, world):
    Document.objects.filter(pk=world.assignment.pair.document_id).update(text="A passage.")
    url = assignment_url(world.assignment, "grade")

    off_scale = judge.post(url, {"grade": 7}, format="json")
    bad = judge.post(url, {"grade": "two", "seconds": -1, "request_id": "nope"}, format="json")
    slow = judge.post(url, {"grade": 1, "seconds": 3601}, format="json")

    assert off_scale.status_code == 400
    assert off_scale.json() == {"grade": ["Grade 7 is not on this campaign's scale (0, 1, 2, 3)."]}
    assert bad.json() == {
        "grade": [annotation_api.MESSAGES["whole_number"]],
        "seconds": [annotation_api.MESSAGES["seconds"]],
        "request_id": ["Must be a valid UUID."],
    }
    assert slow.json() == {"seconds": [annotation_api.MESSAGES["seconds"]]}
    assert Judgment.objects.get(assignment=world.assignment).grade == 2


def test_skipping_needs_a_reason_and_clears_the_grade(judge, world):
    url = assignment_url(world.assignment, "skip")

    blank = judge.post(url, {"reason": "  "}, format="json")
    skipped = judge.post(url, {"reason": "can't judge"}, format="json")

    assert blank.status_code == 400
    assert blank.json() == {"reason": [annotation_api.MESSAGES["skip_needs_reason"]]}
    assert skipped.status_code == 200
    assert skipped.json()["status"] == "skipped"
    assert skipped.json()["judgment"]["grade"] is None
    assert skipped.json()["judgment"]["skip_reason"] == "can't judge"


def test_undo_reopens_the_pair_and_the_history_keeps_every_change(judge, world):
    url = assignment_url(world.assignment)
    judge.post(url + "note/", {"note": "  Tricky.  "}, format="json")
    undone = judge.post(url + "undo/")

    assert undone.status_code == 200
    assert (undone.json()["status"], undone.json()["judgment"]) == ("open", None)
    history = judge.get(url + "history/").json()["results"]
    assert [(c["action"], c["old_grade"], c["new_grade"], c["note"]) for c in history] == [
        ("graded", None, 2, ""),
        ("noted", 2, 2, "Tricky."),
        ("undone", 2, None, "Tricky."),  # what was taken back, note included
    ]
    assert {c["changed_by"] for c in history} == {"ann"}


def test_a_note_needs_a_grade_first(judge, world):
    judge.post(assignment_url(world.assignment, "undo"))

    response = judge.post(assignment_url(world.assignment, "note"), {"note": "x"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"note": ["Grade the pair before adding a note."]}


def test_a_lead_reads_but_cannot_grade_their_judges_assignments(lead, world):
    response = lead.post(assignment_url(world.assignment, "grade"), {"grade": 0}, format="json")

    assert response.status_code == 403
    assert response.json() == {"detail": "This pair is assigned to another judge."}
    assert Judgment.objects.get(assignment=world.assignment).grade == 2


def test_another_judges_assignment_is_404_and_stays_untouched(judge, world):
    theirs = world.other_assignment

    for action in ("", "history", "grade", "skip", "undo", "note"):
        method = judge.get if action in ("", "history") else judge.post
        assert method(assignment_url(theirs, action)).status_code == 404, action
    assert Judgment.objects.get(assignment=theirs).grade == 0


def test_a_removed_judge_no_longer_reaches_their_assignments(lead, judge, world):
    lead.delete(campaign_url(world, f"judges/{world.ids['judge']}/"))

    assert judge.get(assignment_url(world.assignment)).status_code == 404
    assert judge.get(ASSIGNMENTS_URL).json()["count"] == 0
    assert judge.get(CAMPAIGNS_URL).json()["count"] == 0


def test_listing_assignments_costs_the_same_few_queries_however_many_there_are(
    judge, world, django_assert_max_num_queries
):
    services.add_pairs(
        campaign=world.campaign,
        pairs=[(qid, f"x{i}") for qid in ("1", "2") for i in range(10)],
        source="imported",
    )
    # A judge's list leaves out pairs whose document has no text (the world's d2-d4).
    Document.objects.filter(campaign=world.campaign).update(text="A passage.")
    mine = Assignment.objects.filter(judge=world.users["judge"]).count()
    assert mine > 2, "the judge should hold some of the new pairs"
    # 1 session, 2 user, 3 the user's roles, 4 count, 5 the page with pairs, topics,
    # documents, judges and judgments
    with django_assert_max_num_queries(5):
        response = judge.get(ASSIGNMENTS_URL)
    assert response.json()["count"] == mine


# --- judgments -----------------------------------------------------------------------------


def test_a_judge_reads_only_their_own_judgments(judge, world):
    listed = judge.get(JUDGMENTS_URL).json()

    assert [(j["id"], j["judge"], j["grade"]) for j in listed["results"]] == [
        (world.judgment.pk, "ann", 2)
    ]
    other = Judgment.objects.get(assignment=world.other_assignment)
    assert judge.get(f"/api/v1/judgments/{other.pk}/").status_code == 404


def test_a_lead_reads_every_judgment_of_their_campaign(lead, world):
    listed = lead.get(JUDGMENTS_URL).json()
    bobs = lead.get(JUDGMENTS_URL, {"judge": world.ids["other_judge"]}).json()

    assert sorted(j["judge"] for j in listed["results"]) == ["ann", "bob"]
    assert [j["grade"] for j in bobs["results"]] == [0]


def test_listing_judgments_costs_the_same_few_queries_however_many_there_are(
    lead, world, django_assert_max_num_queries
):
    for assignment in Assignment.objects.filter(status=AssignmentStatus.OPEN):
        services.record_judgment(assignment_id=assignment.pk, judge=assignment.judge, grade=1)
    # 1 session, 2 user, 3 the user's roles, 4 count, 5 the page with pairs and judges
    with django_assert_max_num_queries(5):
        response = lead.get(JUDGMENTS_URL)
    assert response.json()["count"] == 4


@pytest.mark.parametrize("listing", ["topics/", "documents/", "judges/"])
def test_listing_a_campaigns_parts_costs_the_same_few_queries_however_many_there_are(
    lead, world, listing, make_user, django_assert_max_num_queries
):
    services.add_pairs(
        campaign=world.campaign, pairs=[("1", f"x{i}") for i in range(20)], source="imported"
    )
    for qid in range(3, 13):
        Topic.objects.create(campaign=world.campaign, qid=str(qid), query="q")
    for name in ("dee", "eve"):
        services.add_judge(campaign=world.campaign, judge=make_user(name, "judge"))
    # 1 session, 2 user, 3 the campaign (led or judged), 4 the user's roles, 5 count,
    # 6 the page (topics with pair counts; documents with whether they have text; judges
    # with their usernames)
    with django_assert_max_num_queries(6):
        response = lead.get(campaign_url(world, listing))
    assert response.json()["count"] >= 4


def test_a_json_body_over_the_limit_is_413_before_it_is_parsed(lead, world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    pairs = [{"qid": "1", "docno": f"d{i}"} for i in range(100)]

    response = lead.post(campaign_url(world, "pairs/"), {"pairs": pairs}, format="json")

    assert response.status_code == 413
    assert response.json() == {
        "detail": "The request body is larger than the limit of 1,000 bytes; send files as uploads."
    }
    assert Pair.objects.filter(campaign=world.campaign).count() == 4


# --- adjudication and publishing -----------------------------------------------------------


def test_a_decision_over_the_api_and_a_stale_one_is_a_409(lead, world, api, django_user_model):
    url = f"{CAMPAIGNS_URL}{world.campaign.pk}/decisions/"
    body = {"pair": world.ids["pair"], "grade": 1, "reason": "checked", "based_on": None}
    first = lead.post(url, body, format="json")
    assert first.status_code == 201, first.content
    assert (first.json()["grade"], first.json()["decided_by"]) == (1, "lea")
    assert first.json()["rule"] == "majority", "the rule in force is kept with the decision"
    stale = lead.post(url, {**body, "grade": 3}, format="json")
    assert stale.status_code == 409
    assert "lea decided this pair as 1" in stale.json()["detail"]
    assert stale.json()["current"]["id"] == first.json()["id"]
    newer = lead.post(url, {**body, "grade": 3, "based_on": first.json()["id"]}, format="json")
    assert newer.status_code == 201 and newer.json()["supersedes"] == first.json()["id"]
    assert [d["grade"] for d in lead.get(url).json()["results"]] == [1, 3]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"pair": 999999, "grade": 1, "reason": "x"}, "pair"),
        ({"grade": 9, "reason": "x"}, "non_field_errors"),
        ({"grade": 1, "reason": ""}, "reason"),
    ],
)
def test_a_bad_decision_over_the_api_is_a_400_naming_the_problem(lead, world, body, field):
    body = {"pair": world.ids["pair"], **body}
    response = lead.post(f"{CAMPAIGNS_URL}{world.campaign.pk}/decisions/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_publishing_over_the_api_409s_on_undecided_pairs_then_publishes(lead, world):
    url = f"{CAMPAIGNS_URL}{world.campaign.pk}/publications/"
    blocked = lead.post(url, {"name": "robust"}, format="json")
    assert blocked.status_code == 409
    undecided = blocked.json()["undecided"]
    assert len(undecided) == 2 and all(p["open"] == 1 and p["grade"] is None for p in undecided)
    # The world published these grades as robust v1: a copy is confirmed by naming it.
    again = {"name": "robust", "leave_out_undecided": True}
    assert lead.post(url, again, format="json").status_code == 409
    again["identical_to"] = world.publication.qrels.pk
    done = lead.post(url, again, format="json")
    assert done.status_code == 201
    assert done.json()["label"] == "robust v2"
    assert done.json()["counts"] == {"unanimous": 2, "left_out": 2}
    assert done.json()["relevance_threshold"] == 1
    provenance = lead.get(f"{url}{done.json()['id']}/provenance/").json()["results"]
    assert sorted((g["grade"], g["basis"]) for g in provenance) == [
        (0, "unanimous"),
        (2, "unanimous"),
    ]
    assert {(g["reason"], g["lead"], g["decided_at"], g["rule_in_force"]) for g in provenance} == {
        ("", "", None, "")
    }
    raw = lead.get(f"{CAMPAIGNS_URL}{world.campaign.pk}/raw-judgments/").json()["results"]
    # The world's imported machine grade too (machine.qrels), marked as such.
    assert sorted((r["judge"], r["grade"], r["judge_kind"], r["imported_from"]) for r in raw) == [
        ("ann", 2, "here", ""),
        ("bob", 0, "here", ""),
        ("machine:world-machine", 1, "machine", "machine.qrels"),
    ]


def test_provenance_over_the_api_names_the_lead_and_the_rule_in_force(lead, world):
    decisions = f"{CAMPAIGNS_URL}{world.campaign.pk}/decisions/"
    body = {"pair": world.ids["pair"], "grade": 3, "reason": "checked", "based_on": None}
    assert lead.post(decisions, body, format="json").status_code == 201
    services.update_campaign(campaign=world.campaign, adjudication_rule="median")
    url = f"{CAMPAIGNS_URL}{world.campaign.pk}/publications/"
    done = lead.post(url, {"name": "robust", "leave_out_undecided": True}, format="json").json()
    assert done["rule"] == "median"
    provenance = lead.get(f"{url}{done['id']}/provenance/").json()["results"]
    decided = next(g for g in provenance if g["basis"] == "lead")
    assert (decided["grade"], decided["reason"], decided["lead"]) == (3, "checked", "lea")
    assert decided["rule_in_force"] == "majority" and decided["decided_at"]


def test_the_disagreement_queue_over_the_api(lead, world, api):
    # Give the judge's graded pair a second, different grade: overlap 2 on that pair.
    world.campaign.overlap = 2
    world.campaign.save()
    services.assign_pending(campaign=world.campaign)
    second = Assignment.objects.get(pair_id=world.ids["pair"], judge=world.users["other_judge"])
    services.record_judgment(assignment_id=second.pk, judge=world.users["other_judge"], grade=0)
    body = lead.get(f"{CAMPAIGNS_URL}{world.campaign.pk}/disagreements/?show=all").json()
    assert (body["count"], body["next"]) == (1, None)
    queue = body["results"]
    assert [(p["pair"], sorted(j["grade"] for j in p["judgments"])) for p in queue] == [
        (world.ids["pair"], [0, 2])
    ]
    assert (queue[0]["spread"], queue[0]["grade"]) == (2, None)  # a 1-1 tie: the lead decides


def test_a_lead_chooses_and_changes_the_pool_ordering(lead):
    body = lead.post(CAMPAIGNS_URL, {"name": "Plain"}, format="json").json()
    assert body["pool_ordering"] == "random", "today's order stays the default"
    body = lead.post(
        CAMPAIGNS_URL, {"name": "Lucky", "pool_ordering": "bandit"}, format="json"
    ).json()
    assert body["pool_ordering"] == "bandit"
    response = lead.patch(body["url"], {"pool_ordering": "greedy"}, format="json")
    assert response.status_code == 400
    assert "pool_ordering" in response.json()
    response = lead.patch(body["url"], {"pool_ordering": "discriminative"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["pool_ordering"] == "discriminative"


def test_a_judges_list_leaves_out_pairs_waiting_for_text_and_grading_one_is_refused(
    judge, lead, world
):
    without_text(world, "d2", "d3", "d4")
    mine = list(
        Assignment.objects.filter(judge=world.users["judge"]).select_related("pair__document")
    )
    waiting = [a for a in mine if not a.pair.document.has_text]
    assert waiting, "the world's d2, d3 and d4 have no text"

    listed = {a["id"] for a in judge.get(ASSIGNMENTS_URL).json()["results"]}
    grade = judge.post(assignment_url(waiting[0], "grade"), {"grade": 1}, format="json")

    assert listed == {a.pk for a in mine} - {a.pk for a in waiting}
    assert lead.get(ASSIGNMENTS_URL).json()["count"] == 4, "a lead still lists every one"
    assert grade.status_code == 400
    docno = waiting[0].pair.document.docno
    assert grade.json() == {"grade": [services.MESSAGES["document_lacks_text"].format(docno=docno)]}
    changes = JudgmentChange.objects.filter(assignment=waiting[0], changed_by=world.users["judge"])
    assert not changes.filter(new_grade=1).exists(), "nothing is stored"

    # Once a documents import gives it text, it is listed and graded like any other.
    Document.objects.filter(pk=waiting[0].pair.document_id).update(text="Now it has text.")
    listed = {a["id"] for a in judge.get(ASSIGNMENTS_URL).json()["results"]}
    assert waiting[0].pk in listed
    regrade = judge.post(assignment_url(waiting[0], "grade"), {"grade": 1}, format="json")
    assert regrade.status_code == 200 and regrade.json()["judgment"]["grade"] == 1
