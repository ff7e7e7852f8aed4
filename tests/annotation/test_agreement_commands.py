"""manage.py agreement_report and import_gold."""

import csv
import io
import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation import agreement
from annotation.models import Pair
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export
from annotation.services import gold as gold_service
from tests.annotation.test_agreement_views import GRADES, expected_report, make_campaign, user_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(django_user_model):
    lead = user_with(django_user_model, "lea", "lead")
    judges = [user_with(django_user_model, name, "judge") for name in ("ann", "bob", "cy")]
    return make_campaign(lead, judges, GRADES)


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_json_report_is_the_downloads(campaign):
    _, report, _ = expected_report(campaign, GRADES, "linear")
    data = json.loads(
        run("agreement_report", campaign.pk, "--format", "json", "--weights", "linear")
    )
    result = agreement_service.campaign_agreement(campaign=campaign, weights="linear")
    assert data == json.loads(json.dumps(agreement_export.report_data(result)))
    assert data["overall"]["alpha_ordinal"]["value"] == report.alpha_ordinal.value
    assert data["pairwise"][0]["kappa"]["value"] == report.pairs[0].kappa.value


def test_the_csv_report_prints_the_chosen_table(campaign):
    _, report, _ = expected_report(campaign, GRADES)
    out = run("agreement_report", campaign.pk, "--format", "csv", "--table", "pairwise")
    header, *rows = list(csv.reader(io.StringIO(out)))
    assert header[:4] == ["judge_a", "judge_b", "shared_pairs", "kappa_quadratic"]
    assert [float(row[3]) for row in rows] == [p.kappa.value for p in report.pairs]
    overall = list(csv.reader(io.StringIO(run("agreement_report", campaign.pk, "--format", "csv"))))
    assert [row[0] for row in overall[1:]] == [key for key, *_ in agreement_export.OVERALL]


def test_the_text_report_reads_like_the_page(campaign):
    _, report, _ = expected_report(campaign, GRADES)
    out = run("agreement_report", campaign.pk)
    assert out.startswith("Robust: 18 graded judgments of 6 pairs by 3 judges")
    fleiss = f"{report.fleiss.value:.4f}  [{report.fleiss.low:.4f}, {report.fleiss.high:.4f}]"
    band = agreement.landis_koch(report.fleiss.value)
    assert re.search(rf"\nFleiss' kappa +{re.escape(fleiss)}  {band}\n", out), out
    assert "ann / bob" in out and "(worst first)" in out
    assert "nan" not in out.lower().split()


def test_undefined_statistics_print_their_reason(django_user_model):
    lead = user_with(django_user_model, "lea", "lead")
    judge = user_with(django_user_model, "ann", "judge")
    campaign = make_campaign(lead, [judge], {("1", "d1"): {"ann": 2}})
    out = run("agreement_report", campaign.pk)
    assert "(only one judge has graded pairs, so there is nothing to agree on)" in out


def test_an_unknown_campaign_is_an_error():
    with pytest.raises(CommandError, match="no campaign with id 999"):
        run("agreement_report", 999)


def test_import_gold_marks_pairs(campaign, tmp_path):
    path = tmp_path / "gold.qrels"
    path.write_bytes(b"1 0 d1 3\n2 0 new 0\n")
    out = run("import_gold", campaign.pk, str(path))
    assert out == "Robust: 2 gold pairs (1 new to the pool, 1 already in it); 3 new assignments\n"
    assert dict(
        Pair.objects.filter(gold_grade__isnull=False).values_list("document__docno", "gold_grade")
    ) == {"d1": 3, "new": 0}


def test_import_gold_refuses_a_bad_file_whole(campaign, tmp_path):
    path = tmp_path / "gold.txt"
    path.write_bytes(b"1 d1 3\n5 d2 1\n")
    with pytest.raises(CommandError) as caught:
        run("import_gold", campaign.pk, str(path))
    assert str(caught.value) == (
        f"nothing imported:\n{path}:2: topic '5' is not in this campaign (import it first)"
    )
    assert not Pair.objects.filter(gold_grade__isnull=False).exists()


def test_import_gold_needs_a_file(campaign, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run("import_gold", campaign.pk, str(tmp_path / "missing.txt"))


# --- manage.py calibration --------------------------------------------------------------------


@pytest.fixture
def gold_campaign(campaign):
    """GRADES's campaign with d1, d2, d4 as gold pairs: ann graded them 3, 0, 1 (the gold
    grades), bob 3, 1, 3."""
    from annotation import services

    services.set_gold(campaign=campaign, entries=[("1", "d1", 3), ("1", "d2", 0), ("2", "d4", 1)])
    return campaign


def test_calibration_json_is_the_apis(gold_campaign):
    from rest_framework.test import APIClient

    data = json.loads(run("calibration", gold_campaign.pk, "--format", "json"))
    api = APIClient()
    api.force_login(gold_campaign.lead)
    answer = api.get(f"/api/v1/campaigns/{gold_campaign.pk}/calibration/")
    assert data == answer.json()
    by_judge = {row["judge"]: row for row in data["judges"]}
    assert by_judge["ann"]["accuracy"]["value"] == 1.0 and by_judge["ann"]["status"] == "ok"
    assert by_judge["bob"]["status"] == "flagged" and "bob" in data["flagged"]


def test_calibration_text_and_csv_name_each_judge_and_why(gold_campaign):
    out = run("calibration", gold_campaign.pk, "--weights", "linear")
    assert out.startswith("Robust: 3 gold pairs; a judge is flagged below accuracy 0.70")
    bob = next(line for line in out.splitlines() if line.startswith("bob"))
    assert "flagged" in bob and "0.3333" in bob and "accuracy 33.3% on gold pairs" in bob
    ann = next(line for line in out.splitlines() if line.startswith("ann"))
    assert " ok " in ann and "1.0000" in ann

    header, *rows = list(
        csv.reader(io.StringIO(run("calibration", gold_campaign.pk, "--format", "csv")))
    )
    assert header == agreement_export.CALIBRATION_HEADER
    expected = gold_service.campaign_calibration(campaign=gold_campaign)
    assert [(r[0], r[1], int(r[2])) for r in rows] == [
        (j.judge, j.status, j.calibration.n) for j in expected.judges
    ]
    assert [float(r[3]) for r in rows] == [j.calibration.accuracy.value for j in expected.judges]


def test_calibration_without_gold_says_so(campaign):
    out = run("calibration", campaign.pk)
    assert out.startswith("Robust: 0 gold pairs")
    assert "has graded none of the gold pairs yet" in out
    with pytest.raises(CommandError, match="no campaign with id 999"):
        run("calibration", 999)
