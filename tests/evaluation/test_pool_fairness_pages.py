"""The leave-one-run-out test on the pages and the API (issue 13, part 3): a job computes
it (inline in tests), the leaderboard shows a panel, a run's page a badge, the API the
report. The numbers are evaluation.analysis.pool_fairness' (tested by hand in test_pool_fairness.py);
here the small world's, worked out by hand:

dense alone has d9 (topic 1, grade 2) in its top 100; bm25 alone has d4 (topic 2) and d7
(topic 3) among its judged documents. P@5 of dense: topic 1 (d9, d1, d3 relevant) 3/5,
topic 3 0 → 0.3; without d9: 2/5 → 0.2.
"""

import pytest

from evaluation import services
from evaluation.models import PoolFairnessReport
from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def post(client, django_capture_on_commit_callbacks):
    """A POST whose job (started once its row commits) runs inline before it returns."""

    def send(url, data, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(url, data, **kwargs)

    return send


@pytest.fixture
def engineer(django_user_model):
    return user(django_user_model, "eng", "engineer")


def test_the_leaderboard_offers_the_test_and_then_shows_each_runs_drop(
    client, post, engineer, world
):
    qrels, bm25, dense = world
    client.force_login(engineer)
    url = f"/evaluation/leaderboard/?qrels={qrels.pk}&sort=-P_5"
    html = client.get(url).content.decode()
    assert 'data-testid="run-fairness"' in html and "fairness-summary" not in html
    assert "no campaign pool is recorded" in html

    response = post("/evaluation/leaderboard/pool-fairness/", {"qrels": qrels.pk})
    assert response.status_code == 302 and "/jobs/" in response["Location"]
    row = PoolFairnessReport.objects.get()
    assert (row.depth, row.depth_source) == (100, "parameter")
    report = services.find_pool_fairness(qrels=qrels, key=row.options_key, depth=100)
    assert not report.stale
    assert report.of(dense).unique_judged == 1 and report.of(dense).unique_relevant == 1
    assert report.of(dense).full["P_5"] == pytest.approx(0.3)
    assert report.of(dense).reduced["P_5"] == pytest.approx(0.2)
    assert report.of(bm25).unique_judged == 2

    html = client.get(url).content.decode()
    assert 'data-testid="fairness-summary"' in html
    assert "0.1000" in html  # dense's drop of P@5


def test_a_runs_page_carries_the_badge(client, post, engineer, world):
    qrels, _, dense = world
    client.force_login(engineer)
    post("/evaluation/leaderboard/pool-fairness/", {"qrels": qrels.pk})
    html = client.get(f"/evaluation/runs/{dense.pk}/?qrels={qrels.pk}&measure=P_5").content
    html = html.decode()
    assert 'data-testid="fairness-badge"' in html
    assert "Pool bias" in html and "drop by 0.1000" in html


def test_a_run_scored_later_makes_the_report_out_of_date(client, post, engineer, world):
    qrels, _, _ = world
    client.force_login(engineer)
    post("/evaluation/leaderboard/pool-fairness/", {"qrels": qrels.pk})
    extra = services.import_run(
        source=b"1 Q0 d1 1 1.0 x\n", filename="x.run", system="extra", name="x"
    )
    services.score_run(run=extra, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
    html = client.get(f"/evaluation/leaderboard/?qrels={qrels.pk}").content.decode()
    assert "Out of date" in html and "scored after the test ran" in html


def test_the_api_reads_the_report_and_starts_the_job(client, post, engineer, world):
    qrels, _, dense = world
    client.force_login(engineer)
    missing = client.get(f"/api/v1/leaderboard/pool-fairness/?qrels={qrels.pk}")
    assert missing.status_code == 404 and "POST to this endpoint" in missing.json()["detail"]
    started = post(
        "/api/v1/leaderboard/pool-fairness/",
        {"qrels": qrels.pk, "depth": 2},
        content_type="application/json",
    )
    assert started.status_code == 202
    body = client.get(f"/api/v1/leaderboard/pool-fairness/?qrels={qrels.pk}&depth=2").json()
    assert body["depth"] == 2 and body["depth_source"] == "parameter" and not body["stale"]
    row = next(r for r in body["runs"] if r["run"] == dense.pk)
    # depth 2: dense's top 2 of topic 1 is d9, d1; bm25's is d1, u5: d9 still dense's alone.
    assert row["unique_judged"] == 1 and row["drop"]["P_5"] == pytest.approx(0.1)
    assert (
        client.get(f"/api/v1/leaderboard/pool-fairness/?qrels={qrels.pk}&depth=0").status_code
        == 400
    )


def test_judges_may_neither_read_nor_start_it(client, post, django_user_model, world):
    qrels, _, _ = world
    client.force_login(user(django_user_model, "judy", "judge"))
    assert post("/evaluation/leaderboard/pool-fairness/", {"qrels": qrels.pk}).status_code == 403
    assert client.get(f"/api/v1/leaderboard/pool-fairness/?qrels={qrels.pk}").status_code == 403
    assert not PoolFairnessReport.objects.exists()


def test_one_scored_run_is_refused_with_a_reason(client, post, engineer, media_root):
    qrels = services.import_qrels(source=b"1 0 d1 1\n", filename="q.qrels", name="q")
    run = services.import_run(source=b"1 Q0 d1 1 1.0 x\n", filename="x.run", system="x")
    services.score_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
    client.force_login(engineer)
    response = post("/evaluation/leaderboard/pool-fairness/", {"qrels": qrels.pk})
    job = client.get(response["Location"]).content.decode()
    assert "at least two scored runs" in job
