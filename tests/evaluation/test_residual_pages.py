"""Residuals on the pages (issue 17, part 2): the run page and the leaderboard show the
best and worst value a measure could take if the unjudged documents of each top k were
judged. The numbers are evaluation.analysis.residuals' (tested against trec_eval in
test_residuals.py); here: that the pages show them, with the small world's values
worked out by hand."""

import re

import pytest

from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def as_engineer(client, django_user_model):
    client.force_login(user(django_user_model, "eng", "engineer"))
    return client


def test_the_run_page_shows_each_topics_worst_and_best(as_engineer, world):
    qrels, bm25, _ = world

    html = as_engineer.get(
        f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}&measure=P_5"
    ).content.decode()

    # bm25, P@5: topic 1 d1 u5 d3 -> 2/5 or 3/5; topic 2 d4 u6 -> 1/5 or 2/5; topic 3 u8 d7
    # -> 1/5 or 2/5. Means 0.2667 and 0.4667.
    overall = re.search(r'data-testid="run-bounds"><strong>([^<]+)<', html).group(1)
    assert overall == "0.2667 – 0.4667"
    cells = re.findall(r'<td class="num bounds">([^<]+)<', html)
    assert sorted(cells) == ["0.2000 – 0.4000", "0.2000 – 0.4000", "0.4000 – 0.6000"]


def test_the_leaderboard_shows_the_bounds_of_its_measure_on_demand(as_engineer, world):
    qrels, _, _ = world
    board = f"/evaluation/leaderboard/?qrels={qrels.pk}&sort=-P_5"
    plain = as_engineer.get(board).content.decode()
    assert 'data-testid="leaderboard-bounds"' not in plain
    assert 'data-testid="toggle-bounds"' in plain

    html = as_engineer.get(board + "&bounds=1").content.decode()

    cells = re.findall(r'data-testid="leaderboard-bounds"[^>]*>if judged ([^<]+)<', html)
    # dense, P@5: topic 1 d9 d1 d3 -> 3/5 (all judged); topic 3 u10 u11 u12 -> 0 or 3/5.
    assert sorted(cells) == ["0.2667–0.4667", "0.3000–0.6000"]
    assert "Hide what unjudged documents could change" in html


def test_judged_at_k_has_no_bounds(as_engineer, world):
    qrels, bm25, _ = world

    html = as_engineer.get(
        f"/evaluation/runs/{bm25.pk}/?qrels={qrels.pk}&measure=judged_10"
    ).content.decode()

    assert 'data-testid="run-bounds"' not in html
