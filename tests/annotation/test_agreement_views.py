"""The agreement report, its downloads and the calibration page with its gold import
(annotation/views/agreement.py over annotation/services/agreement.py). The numbers on the
page and in the downloads must be annotation.agreement's for the same grades."""

import csv
import gzip
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import agreement, services
from annotation.models import Assignment, AssignmentStatus, Judgment, Pair, Topic
from annotation.scales import MAX_GRADES
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export
from annotation.services import gold as gold_service
from annotation.services.tallies import tally_pairs
from common.exports import csv_safe, write_csv
from tests.annotation.conftest import user_with

pytestmark = pytest.mark.django_db

# Three judges grade the same six pairs of two topics (qid, docno): {judge: grade}.
# Topic 1 is agreed on more than topic 2; bob grades high, cy low.
GRADES = {
    ("1", "d1"): {"ann": 3, "bob": 3, "cy": 2},
    ("1", "d2"): {"ann": 0, "bob": 1, "cy": 0},
    ("1", "d3"): {"ann": 2, "bob": 2, "cy": 2},
    ("2", "d4"): {"ann": 1, "bob": 3, "cy": 0},
    ("2", "d5"): {"ann": 1, "bob": 2, "cy": 0},
    ("2", "d6"): {"ann": 2, "bob": 3, "cy": 0},
}


@pytest.fixture
def judges(django_user_model):
    return [user_with(django_user_model, name, "judge") for name in ("ann", "bob", "cy")]


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


def make_campaign(lead, judges, grades, *, queries=None, threshold=2):
    """A campaign whose judges all hold every pair of ``grades`` and gave those grades (a
    grade of None is a skip); topics are created from the qids."""
    campaign = services.create_campaign(
        lead=lead,
        name="Robust",
        overlap=len(judges),
        judges=judges,
        relevance_threshold=threshold,
    )
    for qid in sorted({qid for qid, _ in grades}):
        query = (queries or {}).get(qid, f"query {qid}")
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    services.add_pairs(campaign=campaign, pairs=list(grades), source="imported")
    give(campaign, grades)
    return campaign


def give(campaign, grades):
    """Judgments straight into the tables (the judging views are tested elsewhere)."""
    assignments = Assignment.objects.filter(pair__campaign=campaign).select_related(
        "pair__topic", "pair__document", "judge"
    )
    new, done, skipped = [], [], []
    for a in assignments:
        by_judge = grades.get((a.pair.topic.qid, a.pair.document.docno), {})
        if a.judge.username not in by_judge:
            continue
        grade = by_judge[a.judge.username]
        new.append(
            Judgment(assignment=a, grade=grade, skip_reason="" if grade is not None else "x")
        )
        (done if grade is not None else skipped).append(a.pk)
    Judgment.objects.bulk_create(new)
    Assignment.objects.filter(pk__in=done).update(status=AssignmentStatus.DONE)
    Assignment.objects.filter(pk__in=skipped).update(status=AssignmentStatus.SKIPPED)
    tally_pairs(campaign=campaign)  # what the judging services do in their transaction


def expected_report(campaign, grades, weights="quadratic"):
    """annotation.agreement's report for ``grades``, built from the test's own table."""
    pair_ids = {
        (p.topic.qid, p.document.docno): p.pk
        for p in Pair.objects.filter(campaign=campaign).select_related("topic", "document")
    }
    triples = [
        (pair_ids[key], judge, grade)
        for key, by_judge in grades.items()
        for judge, grade in by_judge.items()
        if grade is not None
    ]
    ratings = agreement.build_ratings(
        triples, scale=campaign.grades, threshold=campaign.relevance_threshold
    )
    report = agreement.compute_agreement(
        ratings,
        weights=agreement_service.WEIGHTS[weights],
        resamples=agreement_service.RESAMPLES,
        seed=campaign.seed,
    )
    return ratings, report, pair_ids


@pytest.fixture
def campaign(lead, judges):
    return make_campaign(lead, judges, GRADES)


def url(campaign, name="agreement", *args):
    from django.urls import reverse

    return reverse(f"annotation:{name}", args=[campaign.pk, *args])


def text_of(html: str) -> str:
    """The page's visible text, whitespace collapsed."""
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def upload(name, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


# --- access ------------------------------------------------------------------------------------


def lead_pages(campaign):
    return {
        "get": [
            url(campaign),
            url(campaign, "agreement-download", "json"),
            url(campaign, "agreement-download", "csv"),
            url(campaign, "calibration"),
        ],
        "post": [url(campaign, "calibration"), url(campaign, "gold-import")],
    }


def test_every_page_needs_a_login(client, campaign):
    pages = lead_pages(campaign)
    for page in pages["get"]:
        response = client.get(page)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], page
    for page in pages["post"]:
        assert client.post(page).status_code == 302, page


@pytest.mark.parametrize("who", ["judge", "engineer", "other lead", "nobody"])
def test_only_the_campaigns_lead_sees_the_pages(client, campaign, judges, django_user_model, who):
    users = {
        "judge": judges[0],
        "engineer": lambda: user_with(django_user_model, "eng", "engineer"),
        "other lead": lambda: user_with(django_user_model, "leo", "lead"),
        "nobody": lambda: user_with(django_user_model, "nob"),
    }
    user = users[who] if who == "judge" else users[who]()
    client.force_login(user)
    pages = lead_pages(campaign)
    for page in pages["get"]:
        assert client.get(page).status_code == 404, page
    for page in pages["post"]:
        assert client.post(page).status_code == 404, page
    assert Pair.objects.filter(gold_grade__isnull=False).count() == 0


def test_a_superuser_sees_every_campaigns_report(client, campaign, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="x"))
    assert client.get(url(campaign)).status_code == 200
    assert client.get(url(campaign, "calibration")).status_code == 200


def test_wrong_methods_are_refused(lead_client, campaign):
    assert lead_client.post(url(campaign)).status_code == 405
    assert lead_client.post(url(campaign, "agreement-download", "json")).status_code == 405
    assert lead_client.get(url(campaign, "gold-import")).status_code == 405


def test_the_campaign_page_links_to_the_report_and_calibration(lead_client, campaign):
    page = lead_client.get(campaign.get_absolute_url()).text
    assert f'href="{url(campaign)}"' in page
    assert f'href="{url(campaign, "calibration")}"' in page


# --- the report --------------------------------------------------------------------------------


def test_the_report_shows_annotation_agreements_numbers(lead_client, campaign):
    _, report, _ = expected_report(campaign, GRADES)

    response = lead_client.get(url(campaign))

    assert response.status_code == 200
    page = text_of(response.text)
    for stat in (
        report.fleiss,
        report.fleiss_at_threshold,
        report.alpha_ordinal,
        report.alpha_interval,
        report.observed,
        report.within_one,
    ):
        assert stat.value is not None
        assert f"{stat.value:.4f}" in page, stat
        assert f"[{stat.low:.4f}, {stat.high:.4f}]" in page, stat
    assert agreement.landis_koch(report.fleiss.value) in page
    assert agreement.krippendorff_band(report.alpha_ordinal.value) in page
    assert "18 grades of 6 pairs by 3 judges; 6 pairs graded by two or more judges" in page
    assert "nan" not in page.lower().split() and "None" not in page


def test_a_campaign_on_the_largest_scale_has_its_report_and_pages(lead_client, lead, judges):
    # Issue 27: grades past 127 overflowed the report (a 500). The largest scale a campaign
    # may have (annotation.scales) is reported with the oracle's numbers, and its pages answer.
    scale = [{"grade": g, "label": f"{g}%", "definition": ""} for g in range(MAX_GRADES)]
    grades = {
        ("1", "d1"): {"ann": 100, "bob": 95, "cy": 99},
        ("1", "d2"): {"ann": 0, "bob": 3, "cy": 1},
        ("2", "d3"): {"ann": 60, "bob": 70, "cy": 40},
        ("2", "d4"): {"ann": 20, "bob": 35, "cy": 10},
    }
    campaign = services.create_campaign(
        lead=lead, name="Percent", scale=scale, overlap=3, judges=judges, relevance_threshold=50
    )
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    services.add_pairs(campaign=campaign, pairs=list(grades), source="imported")
    give(campaign, grades)
    _, report, _ = expected_report(campaign, grades)

    response = lead_client.get(url(campaign))

    assert response.status_code == 200
    page = text_of(response.text)
    assert f"{report.alpha_interval.value:.4f}" in page
    assert f"{report.fleiss_at_threshold.value:.4f}" in page
    for name in ("campaign-detail", "campaign-edit", "progress", "adjudication"):
        assert lead_client.get(url(campaign, name)).status_code == 200, name


def test_the_heatmap_has_each_judge_pairs_kappa_and_shared_pairs(lead_client, campaign):
    _, report, _ = expected_report(campaign, GRADES)
    html = lead_client.get(url(campaign)).text

    heatmap = html[
        html.index('<table class="heatmap">') : html.index(
            "</table>", html.index('<table class="heatmap">')
        )
    ]
    rows = re.findall(r"<tr>(.*?)</tr>", heatmap, flags=re.S)
    assert len(rows) == 1 + 3, "a header row and one row per judge"
    for pair in report.pairs:
        cell = (
            f"{pair.judge_a} / {pair.judge_b}: κ {pair.kappa.value:.4f} "
            f"[{pair.kappa.low:.4f}, {pair.kappa.high:.4f}], {pair.n} shared pairs"
        )
        assert cell in heatmap
        mirrored = f"{pair.judge_b} / {pair.judge_a}: κ {pair.kappa.value:.4f}"
        assert mirrored in heatmap, "the table is symmetric"
        assert f"{pair.kappa.value:.2f}<small>{pair.n}</small>" in heatmap


def test_each_judge_pair_has_its_confusion_matrix(lead_client, campaign):
    _, report, _ = expected_report(campaign, GRADES)
    html = lead_client.get(url(campaign)).text
    details = re.findall(r'<details class="pair-detail">(.*?)</details>', html, flags=re.S)
    assert len(details) == 3
    ann_bob = next(d for d in details if "<strong>ann</strong> / <strong>bob</strong>" in d)
    pair = next(p for p in report.pairs if (p.judge_a, p.judge_b) == ("ann", "bob"))
    counts = [int(c) for c in re.findall(r'<td class="num[^"]*">(\d+)</td>', ann_bob)]
    assert counts == [c for row in pair.confusion for c in row]
    assert f"{pair.kappa_unweighted.se:.4f}" in ann_bob


def test_weights_change_pairwise_kappa_and_unknown_weights_fall_back(lead_client, campaign):
    _, linear, _ = expected_report(campaign, GRADES, "linear")
    _, quadratic, _ = expected_report(campaign, GRADES, "quadratic")
    _, unweighted, _ = expected_report(campaign, GRADES, "none")

    def first_kappa(page):
        return re.search(r"ann / bob: κ (-?\d\.\d{4})", page).group(1)

    assert first_kappa(lead_client.get(url(campaign) + "?weights=linear").text) == (
        f"{linear.pairs[0].kappa.value:.4f}"
    )
    assert first_kappa(lead_client.get(url(campaign) + "?weights=none").text) == (
        f"{unweighted.pairs[0].kappa.value:.4f}"
    )
    fallback = lead_client.get(url(campaign) + "?weights=cubic")
    assert fallback.status_code == 200
    assert first_kappa(fallback.text) == f"{quadratic.pairs[0].kappa.value:.4f}"
    assert linear.pairs[0].kappa.value != quadratic.pairs[0].kappa.value


def test_topics_come_worst_first_and_link_to_their_disputed_pairs(lead_client, campaign):
    ratings, _, pair_ids = expected_report(campaign, GRADES)
    topic_of = {pk: qid for (qid, _), pk in pair_ids.items()}
    expected = agreement.agreement_by_topic(ratings, topic_of)
    html = lead_client.get(url(campaign)).text
    body = html[html.index('id="topics"') :]

    order = re.findall(r"<td><code>(\w+)</code>", body)
    assert order[:2] == [t.topic for t in expected]
    for topic in expected:
        pk = Topic.objects.get(campaign=campaign, qid=topic.topic).pk
        link = f'{url(campaign, "adjudication")}?topic={pk}&amp;show=all"'
        assert link in body, topic
        assert f"{topic.alpha_ordinal.value:.4f}" in body
    assert expected[0].alpha_ordinal.value < expected[1].alpha_ordinal.value


def test_judges_show_their_grades_and_leniency(lead_client, campaign):
    ratings, _, _ = expected_report(campaign, GRADES)
    profiles = {p.judge: p for p in agreement.judge_profiles(ratings)}
    page = text_of(lead_client.get(url(campaign)).text)
    judges_part = page[page.index("How each judge uses the scale") :]
    for name, profile in profiles.items():
        assert f"{profile.leniency.value:+.4f}" in judges_part, name
    assert profiles["bob"].leniency.value > 0.1 and "lenient" in judges_part
    assert profiles["cy"].leniency.value < -0.1 and "strict" in judges_part
    # bob gave 3, 1, 2, 3, 2, 3: grade 3 three times out of six.
    assert "3 50%" in judges_part


def test_skipped_pairs_do_not_count(lead, judges):
    grades = {key: dict(by_judge) for key, by_judge in GRADES.items()}
    grades[("1", "d1")]["cy"] = None  # a skip
    campaign = make_campaign(lead, judges, grades)
    result = agreement_service.campaign_agreement(campaign=campaign)
    _, report, _ = expected_report(campaign, grades)
    assert result.report.judgments == 17
    assert result.report.fleiss == report.fleiss
    assert result.report.pairs == report.pairs


def test_a_new_judgment_shows_at_once(lead_client, lead, judges):
    grades = {key: {"ann": g["ann"], "bob": g["bob"]} for key, g in GRADES.items()}
    campaign = make_campaign(lead, judges[:2], grades)
    _, before, _ = expected_report(campaign, grades)
    assert f"{before.fleiss.value:.4f}" in text_of(lead_client.get(url(campaign)).text)

    assignment = Assignment.objects.get(
        pair__campaign=campaign, pair__document__docno="d1", judge=judges[0]
    )
    services.record_judgment(assignment_id=assignment.pk, judge=judges[0], grade=0)

    grades[("1", "d1")]["ann"] = 0
    _, after, _ = expected_report(campaign, grades)
    assert after.fleiss.value != before.fleiss.value
    page = text_of(lead_client.get(url(campaign)).text)
    assert f"{after.fleiss.value:.4f}" in page
    assert f"{before.fleiss.value:.4f}" not in page


def test_a_grade_taken_back_or_skipped_shows_at_once(lead_client, campaign, judges):
    lead_client.get(url(campaign))  # the numbers are cached now
    d1 = Assignment.objects.get(
        pair__campaign=campaign, pair__document__docno="d1", judge=judges[0]
    )
    services.undo_judgment(assignment_id=d1.pk, judge=judges[0])
    d2 = Assignment.objects.get(
        pair__campaign=campaign, pair__document__docno="d2", judge=judges[1]
    )
    services.skip_assignment(assignment_id=d2.pk, judge=judges[1], reason="can't judge")

    page = text_of(lead_client.get(url(campaign)).text)

    grades = {key: dict(by_judge) for key, by_judge in GRADES.items()}
    del grades[("1", "d1")]["ann"], grades[("1", "d2")]["bob"]
    _, report, _ = expected_report(campaign, grades)
    assert "16 grades of 6 pairs by 3 judges" in page
    assert f"{report.fleiss.value:.4f}" in page


def test_the_calibration_page_costs_the_same_queries_for_any_number_of_judges(
    client, lead, django_user_model, django_assert_num_queries
):
    campaigns = []
    for n in (2, 5):
        judges = [user_with(django_user_model, f"g{n}-{i}", "judge") for i in range(n)]
        grades = {("1", f"d{d}"): {j.username: d % 4 for j in judges} for d in range(n * 3)}
        campaign = make_campaign(lead, judges, grades)
        services.set_gold(campaign=campaign, entries=[("1", f"d{d}", d % 4) for d in range(n)])
        campaigns.append(campaign)
    client.force_login(lead)
    # The session, the user, the campaign, the user's roles, the gold pairs, the judgments
    # of gold pairs, outside people's grades of gold pairs, the campaign's judges.
    for campaign in campaigns:
        with django_assert_num_queries(8):
            assert client.get(url(campaign, "calibration")).status_code == 200


@pytest.mark.parametrize(
    ("grades", "reason"),
    [
        ({}, "there are no judgments yet"),
        ({("1", "d1"): {"ann": 2}, ("1", "d2"): {"ann": 3}}, "only one judge has graded pairs"),
        (
            {("1", "d1"): {"ann": 2, "bob": 2}, ("1", "d2"): {"ann": 2, "bob": 2}},
            "every judge gave every pair the same grade (2)",
        ),
    ],
)
def test_undefined_statistics_show_their_reason(lead_client, lead, judges, grades, reason):
    campaign = make_campaign(lead, judges[:2], grades or {("1", "d1"): {}})
    response = lead_client.get(url(campaign))
    assert response.status_code == 200
    page = text_of(response.text)
    assert reason in page
    assert "undefined" in page
    assert "None" not in page and " nan " not in page.lower()


def test_a_threshold_at_the_bottom_of_the_scale_makes_agreement_at_it_undefined(
    lead_client, lead, judges
):
    campaign = make_campaign(lead, judges, GRADES, threshold=0)
    page = text_of(lead_client.get(url(campaign)).text)
    assert "the relevance threshold 0 leaves no grade of the scale below it" in page
    campaign.relevance_threshold = 1  # the package refuses 0; Fleiss' kappa ignores it
    _, report, _ = expected_report(campaign, GRADES)
    data = json.loads(lead_client.get(url(campaign, "agreement-download", "json")).content)
    assert data["overall"]["fleiss_kappa_at_threshold"]["value"] is None
    assert data["overall"]["fleiss_kappa"]["value"] == report.fleiss.value
    assert all(p["kappa_at_threshold"]["value"] is None for p in data["pairwise"])


def test_the_report_costs_the_same_queries_for_any_number_of_judges_and_pairs(
    client, lead, django_user_model, django_assert_num_queries
):
    small_judges = [user_with(django_user_model, f"j{i}", "judge") for i in range(2)]
    small = make_campaign(lead, small_judges, {("1", "d1"): {"j0": 1, "j1": 2}})
    many_judges = [user_with(django_user_model, f"k{i}", "judge") for i in range(6)]
    grades = {
        (str(q), f"e{q}-{d}"): {f"k{i}": (q + d + i) % 4 for i in range(6)}
        for q in range(1, 9)
        for d in range(12)
    }
    large = make_campaign(lead, many_judges, grades)
    client.force_login(lead)
    # The session, the user, the campaign, the user's roles (for access and the menu), the
    # state of the judgments and of outside people's grades (the fingerprint), the stored
    # snapshot, the campaign's topics, the machine judges' grades (the "Machines" section).
    # The first time there is no snapshot, so the numbers are computed and stored: the
    # fingerprint again (taken before the judgments are read), the graded judgments with
    # their pairs and judges, outside people's grades, the snapshot's update (no row), then
    # its insert inside a savepoint (three). Seen again, the numbers come from the snapshot.
    for campaign in (small, large):
        with django_assert_num_queries(17):
            assert client.get(url(campaign)).status_code == 200
        with django_assert_num_queries(9):
            assert client.get(url(campaign)).status_code == 200


# --- downloads ---------------------------------------------------------------------------------


def test_the_json_download_is_the_report(lead_client, campaign):
    _, report, _ = expected_report(campaign, GRADES, "linear")
    response = lead_client.get(url(campaign, "agreement-download", "json") + "?weights=linear")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert 'attachment; filename="robust-' in response["Content-Disposition"]
    data = json.loads(response.content)
    assert data["weights"] == "linear"
    assert data["overall"]["fleiss_kappa"]["value"] == report.fleiss.value
    assert data["overall"]["alpha_ordinal"]["low"] == report.alpha_ordinal.low
    assert data["overall"]["alpha_ordinal"]["band"] == agreement.krippendorff_band(
        report.alpha_ordinal.value
    )
    assert [(p["judge_a"], p["judge_b"], p["kappa"]["value"]) for p in data["pairwise"]] == [
        (p.judge_a, p.judge_b, p.kappa.value) for p in report.pairs
    ]
    assert data["pairwise"][0]["confusion"] == [list(r) for r in report.pairs[0].confusion]
    assert [t["qid"] for t in data["topics"]] == ["2", "1"]
    assert data["counts"] == {"pairs": 6, "multiply_judged": 6, "judgments": 18, "judges": 3}
    assert {j["judge"]: j["grade_counts"] for j in data["judges"]}["bob"] == [0, 1, 2, 3]


@pytest.mark.parametrize("table", agreement_export.TABLES)
def test_each_csv_table_downloads(lead_client, campaign, table):
    response = lead_client.get(url(campaign, "agreement-download", "csv") + f"?table={table}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].endswith(f'-{table}.csv"')
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, body = rows[0], rows[1:]
    expected = {"overall": 6, "pairwise": 3, "topics": 2, "judges": 3}[table]
    assert len(body) == expected
    assert all(len(row) == len(header) for row in body)


def test_the_pairwise_csv_has_full_precision_values(lead_client, campaign):
    _, report, _ = expected_report(campaign, GRADES)
    response = lead_client.get(
        url(campaign, "agreement-download", "csv") + "?table=pairwise&weights=quadratic"
    )
    header, *rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert header[3] == "kappa_quadratic"
    first = dict(zip(header, rows[0], strict=True))
    assert float(first["kappa_quadratic"]) == report.pairs[0].kappa.value
    assert int(first["shared_pairs"]) == report.pairs[0].n


def test_unknown_downloads_are_404(lead_client, campaign):
    assert lead_client.get(url(campaign, "agreement-download", "xlsx")).status_code == 404
    bad_table = url(campaign, "agreement-download", "csv") + "?table=secrets"
    assert lead_client.get(bad_table).status_code == 404


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(lead, django_user_model):
    evil = [user_with(django_user_model, name, "judge") for name in ("=cmd", "+sum", "@at", "-x")]
    grades = {("=1+1", "d1"): {u.username: g for u, g in zip(evil, (0, 1, 2, 3), strict=True)}}
    grades[("=1+1", "d2")] = {u.username: g for u, g in zip(evil, (3, 0, 2, 0), strict=True)}
    campaign = make_campaign(lead, evil, grades, queries={"=1+1": '=HYPERLINK("http://x","y")'})
    result = agreement_service.campaign_agreement(campaign=campaign)
    cells = []
    for table in agreement_export.TABLES:
        out = io.StringIO()
        write_csv(out, *agreement_export.report_table(result, table))
        cells += [cell for row in csv.reader(io.StringIO(out.getvalue())) for cell in row]
    assert "'=cmd" in cells and "'+sum" in cells and "'@at" in cells and "'-x" in cells
    assert "'=1+1" in cells and '\'=HYPERLINK("http://x","y")' in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]
    negatives = [c for c in cells if c.startswith("-")]
    assert negatives, "a negative number stays a number"
    assert all(float(c) < 0 for c in negatives)


def test_csv_cell_protection_leaves_numbers_and_plain_text_alone():
    cell = csv_safe
    assert cell(-0.25) == -0.25 and cell(3) == 3
    assert cell("ann") == "ann"
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert cell(start + "1") == "'" + start + "1"
    out = io.StringIO()
    write_csv(out, ["a", "b"], [[None, -0.25]])
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [["a", "b"], ["", "-0.25"]]


# --- calibration -------------------------------------------------------------------------------


@pytest.fixture
def gold_campaign(campaign):
    """GRADES's campaign with d1, d2, d4 as gold pairs, graded as ann did (3, 0 and 1)."""
    services.set_gold(campaign=campaign, entries=[("1", "d1", 3), ("1", "d2", 0), ("2", "d4", 1)])
    return campaign


def test_the_calibration_page_shows_calibrate_judges_numbers(lead_client, gold_campaign):
    campaign = gold_campaign
    gold = {
        p.pk: p.gold_grade for p in Pair.objects.filter(campaign=campaign, gold_grade__isnull=False)
    }
    _, _, pair_ids = expected_report(campaign, GRADES)
    page = text_of(lead_client.get(url(campaign, "calibration")).text)

    for judge in ("ann", "bob", "cy"):
        mine = {pair_ids[key]: by_judge[judge] for key, by_judge in GRADES.items()}
        expected = agreement.calibrate_judge(
            mine,
            gold,
            scale=campaign.grades,
            weights="quadratic",
            resamples=1000,
            seed=campaign.seed,
        )
        assert expected.n == 3
        row = page[page.index(f" {judge} 3 ") :]
        assert row.startswith(f" {judge} 3 {expected.accuracy.value:.4f}"), row[:80]
        assert f"{expected.mean_absolute_error.value:.4f}" in row[:400]
    # ann agrees with gold on every pair; bob (3, 1, 3) misses two of three.
    assert "bob 3 0.3333" in page
    assert "accuracy 33.3% on gold pairs is below the campaign&#x27;s 70%" in page
    assert re.search(r" ann 3 1\.0000 [^a-z]* ok bob ", page)


def test_gold_pairs_are_listed_with_their_known_grade(lead_client, gold_campaign):
    page = text_of(lead_client.get(url(gold_campaign, "calibration")).text)
    assert "3 gold pairs with a known grade" in page
    assert "1 d1 3 3 judges" in page and "2 d4 1 3 judges" in page


def test_a_gold_file_marks_pairs_and_adds_new_ones(lead_client, campaign, judges):
    response = lead_client.post(
        url(campaign, "gold-import"), {"file": upload("gold.txt", b"1 d1 3\n2 new 1\n")}
    )
    assert response.status_code == 302
    assert response["Location"] == url(campaign, "calibration")
    gold = dict(
        Pair.objects.filter(campaign=campaign, gold_grade__isnull=False).values_list(
            "document__docno", "gold_grade"
        )
    )
    assert gold == {"d1": 3, "new": 1}
    new_pair = Pair.objects.get(campaign=campaign, document__docno="new")
    assert set(new_pair.assignments.values_list("judge__username", flat=True)) == {
        "ann",
        "bob",
        "cy",
    }
    messages = [str(m) for m in lead_client.get(response["Location"]).context["messages"]]
    assert messages == [
        "Marked 2 calibration pairs from gold.txt: 1 new to the pool, 1 already in it; "
        "3 new assignments."
    ]


def test_a_gzipped_trec_qrels_file_is_a_gold_file(lead_client, campaign):
    data = gzip.compress(b"1 0 d2 1\n2 0 d5 2\n")
    response = lead_client.post(url(campaign, "gold-import"), {"file": upload("g.qrels.gz", data)})
    assert response.status_code == 302
    assert dict(
        Pair.objects.filter(gold_grade__isnull=False).values_list("document__docno", "gold_grade")
    ) == {"d2": 1, "d5": 2}


def test_a_bad_gold_file_changes_nothing_and_lists_its_lines(lead_client, gold_campaign):
    before = list(Pair.objects.values_list("pk", "gold_grade").order_by("pk"))
    assignments = Assignment.objects.count()
    data = b"1 d2 3\n9 d1 2\n1 d3 7\n1 0 d4 1\n1 d5 x\n"

    response = lead_client.post(url(gold_campaign, "gold-import"), {"file": upload("g.txt", data)})

    assert response.status_code == 400
    page = text_of(response.text)
    # The file's grammar and the campaign's checks in one answer (issue 28, item 10).
    assert "Nothing imported: g.txt has 4 problems. Nothing was changed." in page
    assert "g.txt:2: topic &#x27;9&#x27; is not in this campaign (import it first)" in page
    assert "g.txt:3: grade 7 is not on this campaign&#x27;s scale (0, 1, 2, 3)" in page
    assert "g.txt:4: expected 3 fields (qid docno grade) as on line 1, found 4" in page
    assert "g.txt:5: grade &#x27;x&#x27; is not an integer" in page
    assert list(Pair.objects.values_list("pk", "gold_grade").order_by("pk")) == before
    assert Assignment.objects.count() == assignments


def test_a_gold_file_over_the_limit_is_refused_before_reading(lead_client, campaign, monkeypatch):
    monkeypatch.setattr(gold_service, "MAX_GOLD_BYTES", 10)
    response = lead_client.post(
        url(campaign, "gold-import"), {"file": upload("big.txt", b"1 d1 3\n1 d2 0\n")}
    )
    assert response.status_code == 400
    assert "big.txt is larger than the limit of 0 KB for gold files." in response.text
    assert not Pair.objects.filter(gold_grade__isnull=False).exists()


def test_unmarking_gold_pairs_keeps_their_grades(lead_client, gold_campaign):
    d1 = Pair.objects.get(campaign=gold_campaign, document__docno="d1")
    judgments = Judgment.objects.count()
    response = lead_client.post(url(gold_campaign, "calibration"), {"pair": [d1.pk, "junk"]})
    assert response.status_code == 302
    d1.refresh_from_db()
    assert d1.gold_grade is None
    assert Pair.objects.filter(gold_grade__isnull=False).count() == 2
    assert Judgment.objects.count() == judgments
    messages = [str(m) for m in lead_client.get(response["Location"]).context["messages"]]
    assert messages == ["1 pair are ordinary pairs again; their judges' grades stay."]


def test_unmarking_nothing_says_so(lead_client, gold_campaign):
    response = lead_client.post(url(gold_campaign, "calibration"), {})
    messages = [str(m) for m in lead_client.get(response["Location"]).context["messages"]]
    assert messages == ["Choose the gold pairs to unmark."]


def test_another_campaigns_gold_pair_cannot_be_unmarked(lead_client, gold_campaign, lead, judges):
    other = make_campaign(lead, judges, {("7", "z1"): {}})
    services.set_gold(campaign=other, entries=[("7", "z1", 2)])
    z1 = Pair.objects.get(campaign=other)
    lead_client.post(url(gold_campaign, "calibration"), {"pair": [z1.pk]})
    z1.refresh_from_db()
    assert z1.gold_grade == 2


def test_a_judge_who_graded_no_gold_pair_is_not_checked(
    lead_client, gold_campaign, django_user_model
):
    newcomer = user_with(django_user_model, "dee", "judge")
    gold_campaign.judges.add(newcomer)
    page = text_of(lead_client.get(url(gold_campaign, "calibration")).text)
    assert "dee 0 — — — — not checked has graded none of the gold pairs yet" in page


def test_without_gold_pairs_the_page_says_how_to_add_them(lead_client, campaign):
    page = text_of(lead_client.get(url(campaign, "calibration")).text)
    assert "No gold pairs yet: import pairs with known grades below" in page
    assert "flagged" not in page


def test_calibration_kappa_follows_the_chosen_weights(lead_client, gold_campaign):
    gold = {
        p.pk: p.gold_grade
        for p in Pair.objects.filter(campaign=gold_campaign, gold_grade__isnull=False)
    }
    _, _, pair_ids = expected_report(gold_campaign, GRADES)
    bob = {pair_ids[key]: by_judge["bob"] for key, by_judge in GRADES.items()}
    linear = agreement.calibrate_judge(
        bob, gold, scale=gold_campaign.grades, weights="linear", seed=gold_campaign.seed
    )
    page = text_of(lead_client.get(url(gold_campaign, "calibration") + "?weights=linear").text)
    assert "κ, linear" in page
    assert f"{linear.weighted_kappa.value:.4f}" in page[page.index(" bob 3 ") :][:300]
