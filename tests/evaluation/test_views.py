import pytest

from evaluation import services

QRELS = b"1 0 d1 2\n1 0 d2 0\n2 0 d4 3\n"
RUN = b"1 Q0 d1 1 3.0 tagA\n1 Q0 d2 2 2.0 tagA\n2 Q0 d4 1 5.5 tagA\n"

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(media_root):
    qrels = services.import_qrels(source=QRELS, filename="a.qrels", name="dl")
    run = services.import_run(source=RUN, filename="bm25.run", system="bm25")
    services.evaluate_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
    return qrels, run


@pytest.fixture
def user_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("eve"))
    return client


def pages(qrels, run):
    return [
        "/",
        "/evaluation/qrels/",
        f"/evaluation/qrels/{qrels.pk}/",
        f"/evaluation/qrels/{qrels.pk}/download/",
        "/evaluation/runs/",
        f"/evaluation/runs/{run.pk}/",
        f"/evaluation/runs/{run.pk}/download/",
    ]


def test_every_page_needs_a_login(client, stored):
    for url in pages(*stored):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url


def test_every_page_renders_for_a_logged_in_user(user_client, stored):
    for url in pages(*stored):
        assert user_client.get(url).status_code == 200, url


def test_pages_refuse_writes(user_client, stored):
    for url in pages(*stored):
        assert user_client.post(url).status_code == 405, url


def test_missing_objects_are_404_not_500(user_client):
    for url in (
        "/evaluation/qrels/999/",
        "/evaluation/qrels/999/download/",
        "/evaluation/runs/999/",
        "/evaluation/runs/999/download/",
    ):
        assert user_client.get(url).status_code == 404, url


def test_qrels_download_is_a_trec_file(user_client, stored):
    qrels, _ = stored
    response = user_client.get(f"/evaluation/qrels/{qrels.pk}/download/")
    assert response["Content-Disposition"] == 'attachment; filename="dl-v1.qrels"'
    assert response.content == b"1 0 d1 2\n1 0 d2 0\n2 0 d4 3\n"


def test_run_download_returns_the_file_as_uploaded(user_client, stored):
    _, run = stored
    response = user_client.get(f"/evaluation/runs/{run.pk}/download/")
    assert b"".join(response.streaming_content) == RUN
    assert 'filename="bm25.run"' in response["Content-Disposition"]


def test_run_page_shows_means_with_four_decimals(user_client, stored):
    _, run = stored
    evaluation = run.evaluations.get()
    html = user_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert f"{evaluation.means['ndcg_cut_10']:.4f}" in html
    assert "dl v1" in html


def test_home_page_query_count_is_pinned(user_client, stored, django_assert_num_queries):
    # session, user, (roles: groups), 3 counts, recent evaluations, recent runs
    with django_assert_num_queries(8):
        user_client.get("/")
