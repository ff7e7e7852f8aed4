"""Per-topic agreement (issue 17 part 4) wherever two qrels versions are compared: each
topic's tau-b, Spearman, Pearson and tauap_b of the runs' values under both, in
``compare_qrels`` (text and --json), GET /api/v1/rankings/ and /evaluation/rankings/ (a
sortable, paginated table); scipy is the oracle, and a topic the new version cannot rank
(no relevant document: every run 0) is null in JSON and an em dash on the page."""

import io
import json
import math
import re
import warnings

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats

from evaluation import services
from evaluation.models import Evaluation
from evaluation.views import rankings as rankings_view
from tests.evaluation.dashboard_data import user
from tests.evaluation.test_compare_qrels import HUMANS, MACHINE, SCORES, qrels_text, run_text
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

EMPTY = "10"  # the machine judges nothing relevant on this topic: every run scores 0 there


def made_world():
    machine = MACHINE.copy()
    machine[9, :] = 0
    old = services.import_qrels(source=qrels_text(HUMANS), filename="h.qrels", name="humans")
    new = services.import_qrels(source=qrels_text(machine), filename="m.qrels", name="machine")
    for name, scores in SCORES.items():
        services.import_run(source=run_text(scores, name), filename=f"{name}.run", system=name)
    return old, new


world_made = made_once(made_world)


@pytest.fixture
def world(world_copy):
    """made_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def compare_json(*args) -> dict:
    out = io.StringIO()
    call_command(
        "compare_qrels", "humans", "machine", *args, "--json", "--samples", "50", stdout=out
    )
    return json.loads(out.getvalue())


def scipy_value(name, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and returns NaN
        return {
            "kendall": stats.kendalltau,
            "spearman": stats.spearmanr,
            "pearson": stats.pearsonr,
        }[name](x, y).statistic


def test_the_command_reports_every_topics_correlations_as_scipy_does(world):
    old, new = world

    data = compare_json()

    rows = {row["qid"]: row for row in data["per_topic"]}
    assert set(rows) == {str(q) for q in range(1, 11)}
    assert data["per_topic"][-1] == {
        "qid": EMPTY,
        "kendall": None,
        "spearman": None,
        "pearson": None,
        "tauap_b": None,
    }
    defined = [row["kendall"] for row in data["per_topic"] if row["kendall"] is not None]
    assert defined == sorted(defined), "lowest tau-b first"
    evaluations = {
        (e.run.system.name, e.qrels_id): e for e in Evaluation.objects.select_related("run__system")
    }
    names = sorted(SCORES)
    checked = 0
    for qid, row in rows.items():
        x = [evaluations[n, old.pk].per_topic[qid]["ndcg_cut_10"] for n in names]
        y = [evaluations[n, new.pk].per_topic[qid]["ndcg_cut_10"] for n in names]
        for name in ("kendall", "spearman", "pearson"):
            expected = scipy_value(name, x, y)
            if math.isnan(expected):
                assert row[name] is None, (qid, name)
            else:
                assert row[name] == pytest.approx(expected, abs=1e-12), (qid, name)
                checked += 1
        assert (row["tauap_b"] is None) == (row["kendall"] is None)
    assert checked >= 24


def test_the_command_prints_the_per_topic_table_with_dashes_for_undefined(world):
    out = io.StringIO()
    call_command(
        "compare_qrels", "humans", "machine", "--samples", "20", "--topics", "0", stdout=out
    )
    text = out.getvalue()

    assert "per topic (10 topics, lowest tau-b first):" in text
    assert re.search(r"topic\s+tau-b\s+Spearman\s+Pearson\s+tauap_b", text)
    assert re.search(rf"\n  {EMPTY}\s+n/a\s+n/a\s+n/a\s+n/a\n", text)

    short = io.StringIO()
    call_command(
        "compare_qrels", "humans", "machine", "--samples", "20", "--topics", "3", stdout=short
    )
    assert "the first 3; --topics 0 for all" in short.getvalue()


def test_the_api_gives_the_commands_per_topic_rows(world, client, django_user_model):
    old, new = world
    command = compare_json()
    client.force_login(user(django_user_model, "eng", "engineer"))

    body = client.get("/api/v1/rankings/", {"old": old.pk, "new": new.pk}).json()

    assert body["per_topic"] == command["per_topic"]


def test_the_page_shows_a_sortable_paginated_per_topic_table(
    world, client, django_user_model, monkeypatch
):
    old, new = world
    data = compare_json()  # scores every run with both
    client.force_login(user(django_user_model, "eng", "engineer"))
    base = {"old": old.pk, "new": new.pk}

    html = client.get("/evaluation/rankings/", base).content.decode()

    qids = re.findall(r'<tr data-qid="([^"]+)">', html)
    assert qids == [row["qid"] for row in data["per_topic"]]
    empty = re.search(rf'<tr data-qid="{EMPTY}">(.*?)</tr>', html).group(1)
    assert empty.count(">—</td>") == 4
    first = data["per_topic"][0]
    assert f'data-coefficient="pearson">{first["pearson"]:.4f}</td>' in html
    assert 'aria-sort="ascending"><a href="?old=' in html

    by_qid = client.get("/evaluation/rankings/", {**base, "tsort": "-qid"}).content.decode()
    assert re.findall(r'<tr data-qid="([^"]+)">', by_qid) == sorted(
        (str(q) for q in range(1, 11)), key=str.encode, reverse=True
    )
    by_spearman = client.get(
        "/evaluation/rankings/", {**base, "tsort": "-spearman"}
    ).content.decode()
    shown = re.findall(r'data-coefficient="spearman">([^<]+)</td>', by_spearman)
    numbers = [float(v) for v in shown if v != "—"]
    assert numbers == sorted(numbers, reverse=True) and shown[-1] == "—"

    monkeypatch.setattr(rankings_view, "TOPICS_PER_PAGE", 4)
    page3 = client.get("/evaluation/rankings/", {**base, "tpage": 3}).content.decode()
    assert re.findall(r'<tr data-qid="([^"]+)">', page3) == [
        r["qid"] for r in data["per_topic"][8:]
    ]
    assert "Topics 9–10 of 10" in page3 and 'rel="prev"' in page3
    nonsense = client.get("/evaluation/rankings/", {**base, "tsort": "nope", "tpage": "x"})
    assert nonsense.status_code == 200


def test_per_topic_rows_sort_undefined_last_both_ways():
    from evaluation.dashboards.rankings import sort_topics

    rows = [
        {"qid": "a", "kendall": 0.5},
        {"qid": "b", "kendall": np.nan},
        {"qid": "c", "kendall": -0.2},
        {"qid": "d", "kendall": 0.5},
    ]
    assert [r["qid"] for r in sort_topics(rows)] == ["c", "a", "d", "b"]
    assert [r["qid"] for r in sort_topics(rows, descending=True)] == ["a", "d", "c", "b"]
    with pytest.raises(ValueError, match="sort by one of"):
        sort_topics(rows, "rbo")
