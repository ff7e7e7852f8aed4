"""Would it change the leaderboard? (issue 12 part 6): ``manage.py compare_qrels`` and
GET /api/v1/rankings/ score the stored runs with two qrels versions and report the ranking
agreement (evaluation.analysis.ranking_agreement's numbers, checked there against scipy and
autojudge-evaluate) and which pairs swap."""

import io
import json
import re

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy import stats

from evaluation import services
from evaluation.models import Evaluation
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

TOPICS = [str(q) for q in range(1, 11)]
RNG = np.random.default_rng(12)
HUMANS = RNG.integers(0, 4, (10, 12))
# The "machine" regrades a third of the pairs at random.
MACHINE = np.where(RNG.random((10, 12)) < 0.35, RNG.integers(0, 4, (10, 12)), HUMANS)
SCORES = {
    name: RNG.random((10, 12)) + bias * HUMANS
    for name, bias in (("best", 0.6), ("good", 0.4), ("mid", 0.2), ("weak", 0.1), ("random", 0.0))
}


def qrels_text(grades) -> bytes:
    return "".join(
        f"{q} 0 d{d} {grades[t, d]}\n" for t, q in enumerate(TOPICS) for d in range(12)
    ).encode()


def run_text(scores, tag: str) -> bytes:
    return "".join(
        f"{q} Q0 d{d} 0 {scores[t, d]:.6f} {tag}\n" for t, q in enumerate(TOPICS) for d in range(12)
    ).encode()


def made_world():
    old = services.import_qrels(source=qrels_text(HUMANS), filename="h.qrels", name="humans")
    new = services.import_qrels(source=qrels_text(MACHINE), filename="m.qrels", name="machine")
    runs = [
        services.import_run(source=run_text(scores, name), filename=f"{name}.run", system=name)
        for name, scores in SCORES.items()
    ]
    return old, new, runs


world_made = made_once(made_world)


@pytest.fixture
def world(world_copy):
    """made_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def compare(*args) -> dict:
    out = io.StringIO()
    call_command("compare_qrels", *args, "--json", "--samples", "200", stdout=out)
    return json.loads(out.getvalue())


def test_the_command_scores_the_runs_with_both_versions_and_compares_their_rankings(world):
    old, new, runs = world

    data = compare("humans", "machine", "--measure", "nDCG@10", "-k", "3")

    assert Evaluation.objects.count() == 10, "each run scored with each version"
    assert (data["measure"], data["runs"], data["k"], data["samples"]) == ("ndcg_cut_10", 5, 3, 200)
    old_means = {
        str(r): Evaluation.objects.get(run=r, qrels=old).means["ndcg_cut_10"] for r in runs
    }
    new_means = {
        str(r): Evaluation.objects.get(run=r, qrels=new).means["ndcg_cut_10"] for r in runs
    }
    names = sorted(old_means)
    x, y = [old_means[n] for n in names], [new_means[n] for n in names]
    by_name = {row["name"]: row for row in data["coefficients"]}
    assert by_name["kendall"]["value"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert by_name["spearman"]["value"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert by_name["pearson"]["value"] == pytest.approx(stats.pearsonr(x, y).statistic)
    for row in data["coefficients"]:
        if row["value"] is not None and row["low"] is not None:
            assert row["low"] - 1e-9 <= row["high"]
    swaps = {(s["above"], s["below"]) for s in data["swaps"]}
    expected = {
        (a, b)
        for a in names
        for b in names
        if old_means[a] > old_means[b] and new_means[a] < new_means[b]
    }
    assert swaps == expected
    assert [row["old_rank"] for row in data["rows"]] == [1, 2, 3, 4, 5]
    assert data["rows"][0]["run"] == "best/best"
    assert {t["qid"] for t in data["per_topic"]} == set(TOPICS)


def test_the_command_prints_a_table_and_refuses_what_it_cannot_do(world):
    out = io.StringIO()
    call_command("compare_qrels", "humans", "machine", "--samples", "50", stdout=out)
    text = out.getvalue()
    assert text.startswith("humans v1 -> machine v1: 5 runs ranked by ndcg_cut_10")
    assert "Kendall's tau-b" in text and "tau_GAP" in text and "pairs swap" in text

    with pytest.raises(CommandError, match="Choose two different qrels versions"):
        call_command("compare_qrels", "humans", "humans")
    with pytest.raises(CommandError, match="Compare at least 3 runs"):
        call_command("compare_qrels", "humans", "machine", "--runs", "best/best", "mid/mid")
    with pytest.raises(CommandError, match="P@7 is not among the measures compared"):
        call_command("compare_qrels", "humans", "machine", "--measure", "P@7")
    with pytest.raises(CommandError, match="no run named 'nope'"):
        call_command("compare_qrels", "humans", "machine", "--runs", "nope")


def test_the_api_compares_what_is_scored_and_names_what_is_not(world, client, django_user_model):
    from tests.evaluation.dashboard_data import user

    old, new, runs = world
    compare("humans", "machine", "--runs", *[str(r) for r in runs[:3]])  # scores three
    client.force_login(user(django_user_model, "eng", "engineer"))

    response = client.get("/api/v1/rankings/", {"old": old.pk, "new": new.pk, "k": 3})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["runs"] == 3 and body["left_out"] == ["random/random", "weak/weak"]
    assert body["old"] == {"id": old.pk, "label": "humans v1"}
    command = compare("humans", "machine", "--runs", *[str(r) for r in runs[:3]], "-k", "3")
    for ours, theirs in zip(body["coefficients"], command["coefficients"], strict=True):
        assert (ours["name"], ours["value"], ours["at_k"]) == (
            theirs["name"],
            theirs["value"],
            theirs["at_k"],
        )
    assert client.get("/api/v1/rankings/", {"old": old.pk}).status_code == 400
    assert client.get("/api/v1/rankings/", {"old": old.pk, "new": 999}).status_code == 404
    bad = client.get("/api/v1/rankings/", {"old": old.pk, "new": new.pk, "k": 9})
    assert bad.status_code == 400 and "k" in bad.json()
    assert np.isfinite(body["coefficients"][0]["value"])


def test_the_page_shows_the_agreement_the_swaps_and_the_runs(world, client, django_user_model):
    from tests.evaluation.dashboard_data import user

    old, new, _ = world
    compare("humans", "machine")  # scores every run with both
    client.force_login(user(django_user_model, "eng", "engineer"))

    empty = client.get("/evaluation/rankings/")
    page = client.get("/evaluation/rankings/", {"old": old.pk, "new": new.pk, "k": 3})
    same = client.get("/evaluation/rankings/", {"old": old.pk, "new": old.pk})

    assert empty.status_code == 200 and 'data-testid="rankings-form"' in empty.content.decode()
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="rankings-result"' in html
    assert "humans v1 against machine v1: 5 runs by nDCG@10" in html
    data = compare("humans", "machine", "-k", "3")
    kendall = next(c for c in data["coefficients"] if c["name"] == "kendall")
    row = re.search(
        r'data-coefficient="kendall"><th scope="row">([^<]+)</th><td class="num">([^<]+)<', html
    )
    assert row.groups() == ("Kendall&#x27;s tau-b", f"{kendall['value']:.4f}")
    assert f"{len(data['swaps'])} pair" in html
    assert (
        same.status_code == 400 and "Choose two different qrels versions." in same.content.decode()
    )
