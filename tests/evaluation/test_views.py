import pytest

from evaluation import services
from tests.evaluation.dashboard_data import user

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
    """A lead: every page here is theirs to read (run pages are for leads and engineers)."""
    client.force_login(user(django_user_model, "eve", "lead"))
    return client


def open_pages(qrels):
    """Pages every logged-in user reads: home and the qrels list."""
    return ["/", "/evaluation/qrels/"]


def qrels_pages(qrels):
    """An imported version's pages: leads and engineers only (evaluation/access.py)."""
    return [f"/evaluation/qrels/{qrels.pk}/", f"/evaluation/qrels/{qrels.pk}/download/"]


def run_pages(qrels, run):
    """Pages that say which system retrieved what: leads and engineers only."""
    return [
        "/evaluation/runs/",
        f"/evaluation/runs/{run.pk}/",
        f"/evaluation/runs/{run.pk}/?qrels={qrels.pk}",
        f"/evaluation/runs/{run.pk}/topics.csv?qrels={qrels.pk}",
        f"/evaluation/runs/{run.pk}/download/",
    ]


def pages(qrels, run):
    return open_pages(qrels) + qrels_pages(qrels) + run_pages(qrels, run)


def test_every_page_needs_a_login(client, stored):
    for url in pages(*stored):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url


@pytest.mark.parametrize("role", ["lead", "engineer"])
def test_every_page_renders_for_leads_and_engineers(client, stored, django_user_model, role):
    client.force_login(user(django_user_model, "someone", role))
    for url in pages(*stored):
        assert client.get(url).status_code == 200, url


def test_every_page_renders_for_an_admin(client, stored, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root"))
    for url in pages(*stored):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("roles", [("judge",), ()], ids=["judge", "no-role"])
def test_judges_and_people_without_a_role_may_not_open_run_pages(
    client, stored, django_user_model, roles
):
    # Judging is blind to which system retrieved a document: the run list, a run's page,
    # its per-topic CSV and its file are 403, as from the API.
    client.force_login(user(django_user_model, "someone", *roles))
    for url in run_pages(*stored):
        response = client.get(url)
        assert response.status_code == 403, f"{url} must be refused, got {response.status_code}"


@pytest.mark.parametrize("roles", [("judge",), ()], ids=["judge", "no-role"])
def test_judges_and_people_without_a_role_read_the_qrels_pages(
    client, stored, django_user_model, roles
):
    client.force_login(user(django_user_model, "someone", *roles))
    for url in open_pages(stored[0]):
        assert client.get(url).status_code == 200, url
    # An imported file belongs to no campaign: judges never read it (a 404, and not listed).
    for url in qrels_pages(stored[0]):
        assert client.get(url).status_code == 404, url
    assert str(stored[0]) not in client.get("/evaluation/qrels/").content.decode()


@pytest.mark.parametrize("roles", [("judge",), ()], ids=["judge", "no-role"])
def test_home_names_no_system_or_run_to_judges_or_people_without_a_role(
    client, stored, django_user_model, roles
):
    _, run = stored
    client.force_login(user(django_user_model, "someone", *roles))
    html = client.get("/").content.decode()
    assert "bm25" not in html, "the home page leaked a system's name"
    assert "Recent runs" not in html and "Recent evaluations" not in html
    assert run.get_absolute_url() not in html, "the home page links a run a judge cannot open"


def test_home_shows_recent_runs_and_evaluations_to_readers(user_client, stored):
    _, run = stored
    html = user_client.get("/").content.decode()
    assert "Recent runs" in html and "Recent evaluations" in html
    assert f'href="{run.get_absolute_url()}"' in html


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
    # session, user, roles (groups), 3 counts, recent evaluations, recent runs, the lead's
    # campaigns (the judge's are not asked for: no judge role)
    with django_assert_num_queries(9):
        user_client.get("/")


def test_home_page_asks_a_judge_for_no_run(
    client, stored, django_user_model, django_assert_num_queries
):
    client.force_login(user(django_user_model, "ann", "judge"))
    # session, user, roles (groups), the qrels count, the judge's campaigns
    with django_assert_num_queries(5):
        client.get("/")
