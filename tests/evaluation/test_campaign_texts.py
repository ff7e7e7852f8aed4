"""Documents and topics are read only through campaigns the user may read (issue 27, finding
10). The evaluation pages show a document's text and a qid's query from campaigns; they are
the reader's own campaigns (the ones they lead; admins: every one), the rule of the API's
documents and topics. Someone else's campaign is a 404 for a document, as from the API, and
never changes how a qid reads on a run, topic or diff page, their downloads or the API.

The world (tests/api/conftest.py): campaign "Robust", led by lea, has topic 1 "cheap flights"
and document d1 "First."; leo leads a campaign of his own; eng is an engineer.
"""

import csv
import io

import pytest

from annotation import services as annotation
from annotation.models import Topic
from evaluation import services as evaluation
from tests.api import conftest as shared
from tests.api.conftest import OTHER_RUN

# tests/api/conftest.py's fixtures (the world: a campaign, users by role, qrels, a run).
make_user, world = shared.make_user, shared.world

pytestmark = pytest.mark.django_db

SECRETS = ("cheap flights", "sourdough starter", "First.", "Robust")
MEASURES = "measures=ndcg_cut.10&measures=map"


@pytest.fixture
def scene(world):
    """The world plus: leo's own campaign with its own topic 1 and document d1, and a second
    scored run for the diff page."""
    leo = world.users["other_lead"]
    mine = annotation.create_campaign(lead=leo, name="By Leo")
    Topic.objects.create(campaign=mine, qid="1", query="leo words")
    mine.documents.create(docno="d2", text="Leo own d2.")
    dense = evaluation.import_run(
        source=OTHER_RUN, filename="dense.run", system="dense", user=world.users["engineer"]
    )
    evaluation.evaluate_run(run=dense, qrels=world.qrels, measure_specs=["ndcg_cut.10", "map"])
    world.dense = dense
    return world


def pages(w) -> dict[str, str]:
    """Every page and API answer that shows a campaign's topic or document text."""
    q, run, dense = f"qrels={w.qrels.pk}&{MEASURES}", w.run.pk, w.dense.pk
    return {
        "topic page": f"/evaluation/topics/1/?{q}",
        "run page": f"/evaluation/runs/{run}/?{q}",
        "run topics CSV": f"/evaluation/runs/{run}/topics.csv?{q}",
        "diff page": f"/evaluation/diff/?{q}&a={run}&b={dense}&qid=1",
        "API topic": f"/api/v1/leaderboard/topics/1/?{q}",
        "API run topics": f"/api/v1/runs/{run}/topics/?{q}",
    }


@pytest.mark.parametrize("who", ["other_lead", "engineer"])
def test_another_campaigns_document_is_a_404_as_from_the_api(client, scene, who):
    client.force_login(scene.users[who])
    campaign, document = scene.campaign.pk, scene.document.pk

    page = client.get("/evaluation/documents/?docno=d1&qid=1", headers={"HX-Request": "true"})
    api = client.get(f"/api/v1/campaigns/{campaign}/documents/{document}/")
    topics = client.get(f"/api/v1/campaigns/{campaign}/topics/")

    assert (page.status_code, api.status_code, topics.status_code) == (404, 404, 404)
    body = page.content.decode()
    assert not [secret for secret in SECRETS if secret in body]
    # The same answer as for a docno no campaign has: nothing tells the two apart.
    nowhere = client.get("/evaluation/documents/?docno=zz&qid=1")
    assert nowhere.status_code == 404
    assert body.replace("d1", "zz") == nowhere.content.decode()


def test_the_lead_reads_their_campaigns_document(client, scene):
    client.force_login(scene.users["lead"])

    page = client.get("/evaluation/documents/?docno=d1&qid=1", headers={"HX-Request": "true"})

    assert page.status_code == 200
    assert "First." in page.content.decode() and "Robust" in page.content.decode()


def test_a_lead_reads_their_own_document_of_a_docno_another_campaign_also_has(client, scene):
    scene.campaign.documents.filter(docno="d2").update(text="Robust secret d2.")
    client.force_login(scene.users["other_lead"])

    page = client.get("/evaluation/documents/?docno=d2&qid=1").content.decode()

    assert "Leo own d2." in page and "secret" not in page


@pytest.mark.parametrize("who", ["other_lead", "engineer"])
def test_another_campaigns_topics_never_show_on_run_topic_and_diff_pages(client, scene, who):
    client.force_login(scene.users[who])
    for what, url in pages(scene).items():
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == 200, (what, response.status_code, body[:300])
        assert not [secret for secret in SECRETS if secret in body], what


def test_a_qid_reads_as_the_users_own_campaigns_topic(client, scene):
    client.force_login(scene.users["other_lead"])
    urls = pages(scene)

    assert "leo words" in client.get(urls["topic page"]).content.decode()
    assert client.get(urls["API topic"]).json()["query"] == "leo words"
    rows = client.get(urls["API run topics"]).json()["topics"]
    assert {row["qid"]: row["query"] for row in rows} == {"1": "leo words", "2": ""}
    table = list(csv.reader(io.StringIO(client.get(urls["run topics CSV"]).content.decode())))
    assert {row[0]: row[1] for row in table[1:]} == {"1": "leo words", "2": ""}


def test_the_lead_sees_their_campaigns_queries_everywhere(client, scene):
    client.force_login(scene.users["lead"])
    for what, url in pages(scene).items():
        body = client.get(url).content.decode()
        assert "cheap flights" in body, what
