"""Which qrels version the dashboards and the run upload show when the address names none
(issue 28, item 1): the one the user chose last, else the one most runs are scored against,
never merely the newest; and a newer version of the same name is announced with a link."""

import pytest
from rest_framework.test import APIClient

from evaluation import services
from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

LEADERBOARD = "/evaluation/leaderboard/"
UPLOAD = "/evaluation/runs/upload/"
# A campaign publishes a small version under the name the runs are scored on.
FIVE_TOPICS = b"".join(f"{qid} 0 d{qid} 1\n".encode() for qid in range(1, 6))


def made_world():
    qrels, bm25, dense = small_world()  # dl v1, both runs scored against it
    newer = services.import_qrels(source=FIVE_TOPICS, filename="panel.qrels", name=qrels.name)
    return qrels, newer, bm25, dense


world_made = made_once(made_world)


@pytest.fixture
def world(world_copy):
    """made_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def engineer(client, django_user_model):
    client.force_login(user(django_user_model, "eng", "engineer"))
    return client


def test_the_leaderboard_stays_on_the_scored_version_and_announces_the_newer_one(engineer, world):
    qrels, newer, _, _ = world

    html = engineer.get(LEADERBOARD).content.decode()

    assert html.count('name="runs"') == 2  # both runs, not "No run is scored against dl v2"
    assert "No run is scored" not in html
    assert "the version most runs are scored against" in html
    assert 'data-testid="newer-qrels"' in html
    assert (
        f'A newer version of these qrels exists: <a href="/evaluation/qrels/{newer.pk}/">' in html
    )
    assert (
        f'href="/evaluation/leaderboard/?qrels={newer.pk}" data-testid="newer-qrels-link"' in html
    )
    assert f'href="/evaluation/qrels/{newer.pk}/diff/{qrels.pk}/"' in html  # what changed


def test_the_newer_versions_leaderboard_says_where_the_runs_are_scored(engineer, world):
    qrels, newer, _, _ = world

    html = engineer.get(LEADERBOARD, {"qrels": newer.pk}).content.decode()

    assert "No run is scored against dl v2 with these options yet." in html
    assert "2 stored runs are not scored with these options yet" in html  # "Score them"
    assert f'href="?qrels={qrels.pk}" data-testid="scored-elsewhere"' in html
    assert 'data-testid="newer-qrels"' not in html  # nothing newer than v2


def test_a_chosen_version_is_remembered_until_another_is_chosen(engineer, world):
    qrels, newer, bm25, _ = world
    engineer.get(LEADERBOARD, {"qrels": newer.pk})

    html = engineer.get(LEADERBOARD).content.decode()  # the nav's plain link
    assert "No run is scored against dl v2" in html
    assert "(your last choice)" in html
    page = engineer.get(f"/evaluation/runs/{bm25.pk}/").content.decode()
    assert f'<a href="/evaluation/qrels/{newer.pk}/"><strong>dl v2</strong></a>' in page

    engineer.get(LEADERBOARD, {"qrels": qrels.pk})
    html = engineer.get(LEADERBOARD).content.decode()
    assert html.count('name="runs"') == 2 and "(your last choice)" in html


def test_the_upload_form_preselects_the_scored_version_and_names_the_newer_one(engineer, world):
    qrels, newer, _, _ = world

    html = engineer.get(UPLOAD).content.decode()

    assert f'<option value="{qrels.pk}" selected>dl v1 · 3 topics · 2 runs scored</option>' in html
    assert f'<option value="{newer.pk}" >dl v2 · 5 topics · 0 runs scored</option>' in html
    assert "Preselected: the version most runs are scored against." in html
    assert "Runs uploaded here are scored against dl v1" in html
    assert (
        f'href="/evaluation/runs/upload/?qrels={newer.pk}" data-testid="newer-qrels-link"' in html
    )


def test_the_api_leaderboard_without_qrels_answers_the_scored_version(world, django_user_model):
    qrels, _, _, _ = world
    api = APIClient()
    api.force_login(user(django_user_model, "api-eng", "engineer"))

    body = api.get("/api/v1/leaderboard/").json()

    assert body["scoring"]["qrels"] == qrels.pk
    assert len(body["rows"]) == 2
