"""The live leaderboard of a running campaign (issue 13, part 2): the lead's page, its
polled fragment, CSV and API; its numbers come from annotation.live_board (tested there).
Here: the pooled runs are recorded, grades narrow the bounds until the pair is settled,
a grade never computes the board, and with a task worker a stale board is served while a
refresh is queued."""

import csv
import io

import pytest
from django.core.cache import cache

from annotation.models import LiveBoardSnapshot, PooledRun
from annotation.services import campaign_files, live
from evaluation import measures
from tests.annotation.live_data import grade, live_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(django_user_model, media_root):
    cache.clear()
    return live_world(django_user_model)


def test_pooling_stored_runs_records_them_and_their_depth(world):
    campaign, _, _, runs = world
    assert sorted(PooledRun.objects.values_list("run_id", "depth")) == sorted(
        (run.pk, 3) for run in runs
    )
    campaign_files.pool_stored_runs(campaign=campaign, runs=runs[:1], depth=5)  # again, deeper
    assert PooledRun.objects.get(run=runs[0]).depth == 5


def test_grades_narrow_the_bounds_until_the_pair_is_settled(client, world):
    campaign, lead, _, runs = world
    client.force_login(lead)
    url = f"/campaigns/{campaign.pk}/live/?measure=P_5"
    html = client.get(url).content.decode()
    assert 'data-testid="open-badge"' in html and "still open" in html
    first = live.live_board(campaign=campaign, measure="P_5").board
    good = next(r for r in first.runs if r.name == str(runs[0].pk))
    assert (good.low, good.high) == (0.0, 0.6)  # 3 of its top 5 undecided, nothing known
    assert first.to_settle == 18 and not first.settled

    grade(campaign, limit=6)
    middle = live.live_board(campaign=campaign, measure="P_5").board
    assert sum(r.width for r in middle.runs) < sum(r.width for r in first.runs)

    grade(campaign)
    last = live.live_board(campaign=campaign, measure="P_5")
    assert last.board.settled and last.spent == 18 and last.board.to_settle == 0
    assert [r.name for r in last.board.runs] == [str(runs[0].pk), str(runs[1].pk)]
    html = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert html.lstrip().startswith('<section id="live-board"')  # the fragment only
    assert 'data-testid="settled-badge"' in html
    assert "good/good beats weak/weak whatever the unjudged documents are" in html


def test_a_grade_does_not_compute_the_board(world):
    campaign, _, _, _ = world
    grade(campaign, limit=3)
    assert not LiveBoardSnapshot.objects.exists()


def test_with_a_worker_a_stale_board_is_served_and_one_refresh_queued(
    world, settings, django_capture_on_commit_callbacks
):
    campaign, _, _, _ = world
    live.live_board(campaign=campaign, measure="P_5")  # inline: computed and stored
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    grade(campaign, limit=2)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        state = live.live_board(campaign=campaign, measure="P_5")
        again = live.live_board(campaign=campaign, measure="P_5")
    assert state.pending and again.pending and state.board is not None
    assert len(queued) == 1  # one refresh for the burst of polls
    assert state.board.known == 0  # the stored board, from before the grades


def test_the_csv_and_the_api_carry_the_same_numbers(client, world):
    campaign, lead, _, runs = world
    grade(campaign)
    client.force_login(lead)
    rows = list(
        csv.reader(io.StringIO(client.get(f"/campaigns/{campaign.pk}/live.csv").content.decode()))
    )
    assert rows[0] == ["run", "measure", "mean", "low", "high", "ci_low", "ci_high"]
    assert rows[1][:2] == ["good/good", "nDCG@10"] and rows[1][2] == rows[1][3] == rows[1][4]
    pairs = list(
        csv.reader(
            io.StringIO(
                client.get(f"/campaigns/{campaign.pk}/live.csv?what=pairs").content.decode()
            )
        )
    )
    assert pairs[1][:3] == ["good/good", "weak/weak", "settled"]
    body = client.get(f"/api/v1/campaigns/{campaign.pk}/live/").json()
    assert body["settled"] and body["judgments_spent"] == 18 and body["to_settle_pairs"] == 0
    assert body["runs"][0]["run"] == runs[0].pk and body["pairs"][0]["state"] == "settled"
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/live/?measure=nonsense").status_code == 400
    assert client.get(f"/campaigns/{campaign.pk}/live/?measure=nonsense").status_code == 400


def test_judges_never_see_it(client, world):
    campaign, _, judges, _ = world
    client.force_login(judges[0])
    assert client.get(f"/campaigns/{campaign.pk}/live/").status_code == 404
    assert client.get(f"/campaigns/{campaign.pk}/live.csv").status_code == 404
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/live/").status_code == 404


def test_a_campaign_without_pooled_runs_says_how_to_get_them(client, django_user_model):
    from annotation import services
    from tests.annotation.live_data import person

    lead = person(django_user_model, "l2", "lead")
    campaign = services.create_campaign(lead=lead, name="empty")
    client.force_login(lead)
    html = client.get(f"/campaigns/{campaign.pk}/live/").content.decode()
    assert 'data-testid="live-no-runs"' in html


def test_the_qrels_a_campaign_publishes_are_tested_at_its_pool_depth(
    world, django_capture_on_commit_callbacks
):
    from annotation.services.adjudication import publish
    from evaluation import services as evaluation_services

    campaign, lead, _, runs = world
    grade(campaign)
    qrels = publish(campaign=campaign, user=lead).qrels
    assert evaluation_services.pool_depth(qrels, 50) == (3, "pool")
    other = evaluation_services.import_qrels(source=b"1 0 g11 1\n", filename="x", name="x")
    assert evaluation_services.pool_depth(other, 50) == (50, "parameter")
    assert evaluation_services.pool_depth(other) == (100, "parameter")
    for run in runs:
        evaluation_services.score_run(run=run, qrels=qrels, measure_specs=["P.5", "ndcg_cut.10"])
    key = evaluation_services.options_key(["P.5", "ndcg_cut.10"], measures.Options())
    row = evaluation_services.compute_pool_fairness(
        qrels=qrels, key=key, measure_specs=["P.5", "ndcg_cut.10"], options=measures.Options()
    )
    assert (row.depth, row.depth_source) == (3, "pool")
    # Each run alone pooled its documents: left out, good loses every relevant one.
    good = (
        row.report["runs"][0]
        if row.report["runs"][0]["run"] == str(runs[0].pk)
        else row.report["runs"][1]
    )
    assert good["unique_judged"] == 9 and good["reduced"]["P_5"] == 0.0


def test_open_pairs_carry_the_probability_in_the_page_the_api_and_the_csv(client, world):
    campaign, lead, judges, _ = world
    grade(campaign, judge=judges[0], limit=2)
    client.force_login(lead)
    body = client.get(f"/api/v1/campaigns/{campaign.pk}/live/").json()
    (pair,) = body["pairs"]
    assert pair["state"] == "open" and 0 <= pair["probability"] <= 1
    rows = list(
        csv.reader(
            io.StringIO(
                client.get(f"/campaigns/{campaign.pk}/live.csv?what=pairs").content.decode()
            )
        )
    )
    assert rows[0] == ["better", "worse", "state", "margin", "probability", "measure"]
    assert rows[1][2] == "open" and rows[1][4] == f"{pair['probability']:.4f}"
    page = client.get(f"/campaigns/{campaign.pk}/live/").text
    assert f'data-testid="probability">{pair["probability"]:.4f}<' in page
    # P@10 has no model: no probability, said as a dash.
    body = client.get(f"/api/v1/campaigns/{campaign.pk}/live/?measure=P_10").json()
    assert body["pairs"][0]["probability"] is None
    grade(campaign)
    body = client.get(f"/api/v1/campaigns/{campaign.pk}/live/").json()
    assert body["pairs"][0]["state"] == "settled" and body["pairs"][0]["probability"] is None
