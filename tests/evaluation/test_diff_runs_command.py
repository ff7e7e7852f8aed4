"""`manage.py diff_runs A B` through call_command."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import Evaluation
from tests.evaluation.dashboard_data import small_world
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


def made_world():
    return small_world(score=False)


world_made = made_once(made_world)


@pytest.fixture
def world(world_copy):
    """made_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def run(*args) -> str:
    out = io.StringIO()
    call_command("diff_runs", *args, stdout=out)
    return out.getvalue()


def test_the_command_scores_the_runs_and_prints_the_diff(world):
    text = run("bm25/bm25", "dense/dense", "--qrels", "dl@1", "--topic", "1")

    assert Evaluation.objects.count() == 2  # scored first, with the dashboard measures
    assert text.startswith("bm25/bm25 → dense/dense on dl v1: ndcg_cut_10 mean Δ")
    # only in A: u5 (topic 1), d4 u6 (2), u8 d7 (3); only in B: d9 (1), u10-u12 (3)
    assert "5 documents only in A, 4 only in B" in text
    lines = text.splitlines()
    assert any(line.startswith("topic 1: A ndcg_cut_10") for line in lines)
    ranks = lines[next(i for i, line in enumerate(lines) if line.strip().startswith("rank")) + 1 :]
    assert "[3] d1 @2" in ranks[0] and "[2] d9 only" in ranks[0]
    assert "[?] u5 only" in ranks[1]


def test_json_has_every_topic(world):
    body = json.loads(run("bm25/bm25", "dense/dense", "--json", "--order", "rbo", "-m", "P.5"))

    assert body["measure"] == "P_5" and body["order"] == "rbo"
    assert {t["qid"] for t in body["topics"]} == {"1", "2", "3"}


def test_unknown_runs_and_bad_choices_are_command_errors(world):
    with pytest.raises(CommandError, match="no run named 'nope'"):
        run("nope", "dense/dense")
    with pytest.raises(CommandError, match="different runs"):
        run("bm25/bm25", "bm25/bm25")
    with pytest.raises(CommandError, match="depth"):
        run("bm25/bm25", "dense/dense", "-k", "10", "--depth", "3")
    with pytest.raises(CommandError, match="Neither run has topic 9"):
        run("bm25/bm25", "dense/dense", "--topic", "9")
