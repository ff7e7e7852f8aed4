"""The dashboard pages: who may see them, that every number on them is the one
`manage.py evaluate` prints, the leaderboard's query count, the CSV download, and the two
actions (scoring runs with new options, sending unjudged documents to judging)."""

import contextlib
import csv
import io
import json
import re

import pytest
from django.core.management import call_command

from annotation import services as annotation
from annotation.models import Pair, Topic
from evaluation import dashboards, services
from evaluation.collection import synthetic
from evaluation.models import Evaluation, Run
from jobs.models import Job, JobStatus
from tests.evaluation.dashboard_data import demo_world, small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

MEASURES = list(services.DASHBOARD_MEASURES)


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def engineer(django_user_model):
    return user(django_user_model, "eng", "engineer")


@pytest.fixture
def as_engineer(client, engineer):
    client.force_login(engineer)
    return client


def pages(qrels, bm25, dense):
    q = f"?qrels={qrels.pk}"
    return [
        f"/evaluation/leaderboard/{q}",
        f"/evaluation/topics/1/{q}",
        f"/evaluation/compare/{q}&baseline={bm25.pk}&runs={dense.pk}",
        "/evaluation/documents/?docno=d1&qid=1",
    ]


def evaluate_json(qrels, run) -> dict:
    """What `manage.py evaluate QRELS SYSTEM/RUN -q --format json` prints, parsed."""
    out = io.StringIO()
    args = [f"{qrels.name}@{qrels.version}", str(run), "-q", "--format", "json"]
    for spec in MEASURES:
        args += ["-m", spec]
    with contextlib.redirect_stdout(out):  # the command writes trec_eval's bytes to sys.stdout
        call_command("evaluate", *args)
    return json.loads(out.getvalue())


# --- access --------------------------------------------------------------------------------


def test_dashboards_need_a_login(client, world):
    for url in pages(*world):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url


@pytest.mark.parametrize("roles", [(), ("judge",)])
def test_judges_and_people_without_a_role_may_not_see_dashboards(
    client, world, django_user_model, roles
):
    client.force_login(user(django_user_model, "someone", *roles))
    for url in pages(*world):
        assert client.get(url).status_code == 403, url


@pytest.mark.parametrize("role", ["lead", "engineer"])
def test_leads_and_engineers_see_every_dashboard(client, world, django_user_model, role):
    client.force_login(user(django_user_model, "someone", role))
    qrels, bm25, _ = world
    for url in [*pages(*world), f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}"]:
        # A document none of their campaigns holds is a 404 (the document tests below).
        expected = 404 if url.startswith("/evaluation/documents/") else 200
        assert client.get(url).status_code == expected, url


def test_the_navigation_links_the_leaderboard_for_leads_and_engineers_only(
    client, world, django_user_model
):
    client.force_login(user(django_user_model, "ann", "judge"))
    assert "/evaluation/leaderboard/" not in client.get("/").content.decode()
    client.force_login(user(django_user_model, "lea", "lead"))
    assert 'href="/evaluation/leaderboard/"' in client.get("/").content.decode()


def test_dashboard_pages_refuse_writes(as_engineer, world):
    for url in pages(*world):
        assert as_engineer.post(url).status_code == 405, url


def test_missing_runs_and_topics_are_404(as_engineer, world):
    qrels, _, _ = world
    assert as_engineer.get("/evaluation/runs/999/").status_code == 404
    assert as_engineer.get(f"/evaluation/topics/nope/?qrels={qrels.pk}").status_code == 404
    assert as_engineer.get("/evaluation/runs/999/topics.csv").status_code == 404


def test_bad_options_are_a_400_naming_the_problem(as_engineer, world):
    response = as_engineer.get("/evaluation/leaderboard/?measures=num_rel")

    assert response.status_code == 400
    assert "dashboards show means over topics" in response.content.decode()


def test_without_qrels_the_pages_say_what_to_do(as_engineer, media_root):
    response = as_engineer.get("/evaluation/leaderboard/")

    assert response.status_code == 200
    assert "No qrels version is stored yet" in response.content.decode()


# --- the numbers are evaluate's ------------------------------------------------------------


def test_leaderboard_numbers_are_evaluates(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}").content.decode()

    for run in (bm25, dense):
        printed = evaluate_json(qrels, run)["all"]
        for name in dashboards.output_names(MEASURES):
            assert f'data-measure="{name}"' in html
            assert f'<span class="mean">{printed[name]:.4f}</span>' in html, (run, name)
    assert "dl v1" in html


def test_run_page_numbers_are_evaluates(as_engineer, world):
    qrels, bm25, _ = world

    html = as_engineer.get(
        f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}&measure=P_5"
    ).content.decode()

    printed = evaluate_json(qrels, bm25)
    assert f'data-testid="run-mean">{printed["all"]["P_5"]:.4f}<' in html
    for qid, values in printed["per_topic"].items():
        assert f'<td class="num">{values["P_5"]:.4f}</td>' in html, qid
    assert "Qrels <a" in html and "dl v1" in html, "the page names the qrels version"


def test_topic_page_numbers_are_evaluates(as_engineer, world):
    qrels, bm25, _ = world

    html = as_engineer.get(f"/evaluation/topics/1/?qrels={qrels.pk}&k=3").content.decode()

    for name, value in evaluate_json(qrels, bm25)["per_topic"]["1"].items():
        if name in dashboards.output_names(MEASURES):
            assert f'<td class="num">{value:.4f}</td>' in html, name
    assert html.count('class="chip unjudged"') >= 1
    assert "u5" in html and "Ideal ranking" in html


def test_numbers_are_printed_like_trec_eval_not_rounded_half_up(as_engineer, world):
    qrels, bm25, _ = world
    Evaluation.objects.filter(run=bm25).update(
        means={**Evaluation.objects.get(run=bm25).means, "map": 0.56785}
    )

    html = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}").content.decode()

    assert f"{0.56785:.4f}" == "0.5678"
    assert '<span class="mean">0.5678</span>' in html


def test_the_csv_has_every_topic_and_measure_unrounded_and_is_formula_safe(
    client, world, django_user_model
):
    qrels, bm25, _ = world
    lead = user(django_user_model, "lea", "lead")  # the queries are their campaign's
    campaign = annotation.create_campaign(lead=lead, name="C")
    Topic.objects.create(campaign=campaign, qid="1", query='=HYPERLINK("http://x","y")')
    Topic.objects.create(campaign=campaign, qid="2", query="-2+3")
    client.force_login(lead)

    response = client.get(f"/evaluation/runs/{bm25.pk}/topics.csv?qrels={qrels.pk}")

    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="bm25-bm25-dl-v1-topics.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    names = dashboards.output_names(MEASURES)
    assert rows[0] == ["qid", "query", *names, "unjudged_in_top_10"]
    printed = evaluate_json(qrels, bm25)["per_topic"]
    by_qid = {row[0]: row for row in rows[1:]}
    assert set(by_qid) == set(printed)
    for qid, row in by_qid.items():
        assert [float(v) for v in row[2:-1]] == [printed[qid][n] for n in names]
    assert by_qid["1"][1] == '\'=HYPERLINK("http://x","y")'
    assert by_qid["2"][1] == "'-2+3"
    assert [row[0] for row in rows[1:]] == [
        q for q, _ in sorted(printed.items(), key=lambda t: (t[1]["ndcg_cut_10"], t[0]))
    ], "worst first"


def test_comparison_page_shows_the_tests(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(
        f"/evaluation/compare/?qrels={qrels.pk}&baseline={bm25.pk}&runs={dense.pk}&measure=P_5"
    ).content.decode()

    view = dashboards.build_comparison(
        dashboards.make_scoring(qrels=qrels), bm25, [dense], measure="P_5"
    )
    c = view.contrasts[0].comparison
    assert f'data-testid="mean-delta">{c.mean_delta:+.4f}<' in html
    assert f"{c.wins} / {c.ties} / {c.losses}" in html
    assert dashboards.format_p(c.randomisation.p_value) in html
    assert "Paired t-test" in html and "Wilcoxon signed-rank" in html


# --- the leaderboard's cost ----------------------------------------------------------------


def test_leaderboard_query_count_is_pinned_and_does_not_grow_with_systems(
    client, media_root, django_user_model, django_assert_num_queries
):
    qrels, _, runs = demo_world(topics=10, depth=15)
    client.force_login(user(django_user_model, "eng", "engineer"))
    url = f"/evaluation/leaderboard/?qrels={qrels.pk}"
    client.get(url)  # intervals are stored by scoring: nothing left to fill
    # session, user, roles (groups), the qrels version, the evaluations with their runs and
    # systems, the count of runs, the qrels versions of the options panel, the depth of the
    # qrels' campaign pool, the stored leave-one-run-out report (issue 13) and the open alerts
    # of the reader's schedules on these qrels (issue 31)
    with django_assert_num_queries(10):
        assert client.get(url).status_code == 200
    more = {f"extra-{i}": (0.3 + i / 20, 1.0) for i in range(6)}
    demo_world_more(qrels, more)
    with django_assert_num_queries(10):
        html = client.get(url).content.decode()
    assert html.count('name="runs"') == len(runs) + len(more)


def demo_world_more(qrels, systems):
    text = services.qrels_to_trec_bytes(services.load_qrels_frame(qrels)).decode()
    for tag, (strength, noise) in systems.items():
        run_text = synthetic.make_run_text(text, tag=tag, strength=strength, noise=noise, depth=15)
        run = services.import_run(source=run_text.encode(), filename=f"{tag}.run", system=tag)
        services.score_run(run=run, qrels=qrels, measure_specs=MEASURES)


# --- scoring with new options --------------------------------------------------------------


def test_an_engineer_scores_the_runs_missing_from_a_new_option_set(
    as_engineer, world, django_capture_on_commit_callbacks
):
    qrels, bm25, dense = world
    html = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}&gain=exp").content.decode()
    assert "2 stored runs are not scored with these options yet" in html

    with django_capture_on_commit_callbacks(execute=True):
        response = as_engineer.post(
            "/evaluation/leaderboard/score/", {"qrels": qrels.pk, "gain": "exp"}
        )

    job = Job.objects.get(kind="evaluation.score_runs")
    assert response["Location"] == f"/jobs/{job.pk}/"
    assert job.status == JobStatus.SUCCEEDED, job.step
    assert job.result["url"] == f"/evaluation/leaderboard/?qrels={qrels.pk}&gain=exp"
    scoring = dashboards.make_scoring(qrels=qrels, gain="exp")
    stored = dashboards.scored(scoring)
    assert {e.run for e in stored} == {bm25, dense}
    assert all(e.intervals for e in stored)


def test_leads_may_not_score_runs(client, world, django_user_model):
    qrels, _, _ = world
    client.force_login(user(django_user_model, "lea", "lead"))

    response = client.post("/evaluation/leaderboard/score/", {"qrels": qrels.pk, "gain": "exp"})

    assert response.status_code == 403
    assert not Job.objects.exists()


# --- sending unjudged documents to judging -------------------------------------------------


@pytest.fixture
def campaign(world, django_user_model):
    lead = user(django_user_model, "lea", "lead", "engineer")
    judge = user(django_user_model, "ann", "judge")
    campaign = annotation.create_campaign(lead=lead, name="Pool them", judges=[judge])
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    return campaign


def test_a_lead_sends_a_runs_unjudged_top_k_and_hears_about_missing_topics(client, world, campaign):
    qrels, bm25, _ = world
    client.force_login(campaign.lead)
    page = f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}"
    assert 'data-testid="send-unjudged"' in client.get(page).content.decode()

    response = client.post(
        "/evaluation/unjudged/send/",
        {"campaign": campaign.pk, "qrels": qrels.pk, "run": bm25.pk, "k": 10, "next": page},
        follow=True,
    )

    assert response.redirect_chain[-1][0] == page
    html = response.content.decode()
    assert "Sent 2 unjudged pairs to Pool them: 2 new in its pool, 0 already there." in html
    assert "1 pair left out: Pool them has no topic 3." in html
    pairs = Pair.objects.filter(campaign=campaign)
    assert {(p.topic.qid, p.document.docno, p.source) for p in pairs} == {
        ("1", "u5", "unjudged"),
        ("2", "u6", "unjudged"),
    }


def test_a_lead_sends_a_topics_unjudged_documents_of_every_run(client, world, campaign):
    qrels, _, _ = world
    client.force_login(campaign.lead)

    client.post(
        "/evaluation/unjudged/send/",
        {"campaign": campaign.pk, "qrels": qrels.pk, "qid": "1", "k": 2},
    )

    assert {p.document.docno for p in Pair.objects.filter(campaign=campaign)} == {"u5"}


def test_engineers_who_lead_nothing_never_see_campaigns(as_engineer, world, campaign):
    qrels, bm25, _ = world

    html = as_engineer.get(f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}").content.decode()
    response = as_engineer.post(
        "/evaluation/unjudged/send/",
        {"campaign": campaign.pk, "qrels": qrels.pk, "run": bm25.pk, "k": 10},
    )

    assert 'data-testid="send-unjudged"' not in html and "Pool them" not in html
    assert response.status_code == 404
    assert not Pair.objects.filter(campaign=campaign).exists()


def test_another_leads_campaign_is_404(client, world, campaign, django_user_model):
    qrels, bm25, _ = world
    client.force_login(user(django_user_model, "leo", "lead"))

    response = client.post(
        "/evaluation/unjudged/send/",
        {"campaign": campaign.pk, "qrels": qrels.pk, "run": bm25.pk, "k": 10},
    )

    assert response.status_code == 404


def test_sending_redirects_only_to_this_site(client, world, campaign):
    qrels, bm25, _ = world
    client.force_login(campaign.lead)

    response = client.post(
        "/evaluation/unjudged/send/",
        {
            "campaign": campaign.pk,
            "qrels": qrels.pk,
            "run": bm25.pk,
            "k": 10,
            "next": "https://evil.example/",
        },
    )

    assert response["Location"] == "/evaluation/leaderboard/"


def test_document_text_is_shown_on_demand(client, world, campaign):
    campaign.documents.create(docno="d1", title="First", text="The first document.")
    client.force_login(campaign.lead)

    html = client.get(
        "/evaluation/documents/?docno=d1&qid=1", headers={"HX-Request": "true"}
    ).content.decode()
    missing = client.get("/evaluation/documents/?docno=zz")

    assert "The first document." in html and "First" in html
    assert "From the campaign Pool them." in html
    assert missing.status_code == 404
    assert "no campaign you lead holds this document" in missing.content.decode()


def test_the_run_list_offers_the_upload_to_engineers(as_engineer, world):
    assert (
        'href="/evaluation/runs/upload/"' in as_engineer.get("/evaluation/runs/").content.decode()
    )


def test_every_stored_run_is_reachable_from_the_leaderboard(as_engineer, world):
    qrels, _, _ = world
    html = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}").content.decode()

    for run in Run.objects.all():
        assert f"/evaluation/runs/{run.pk}/?qrels={qrels.pk}" in html


def test_pages_have_no_inline_script_or_style(as_engineer, world):
    """The Content Security Policy allows neither; charts get their data from json_script."""
    qrels, bm25, _ = world
    urls = [
        *pages(*world),
        f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}",
        "/evaluation/runs/upload/",
    ]
    for url in urls:
        html = as_engineer.get(url).content.decode()
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag or 'type="application/json"' in tag, (url, tag)
        assert not re.search(r"\sstyle=", html), url
        assert "<style" not in html, url
