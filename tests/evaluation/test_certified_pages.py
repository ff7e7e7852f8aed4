"""The certified intervals where the evaluation side shows runs (issue 33): the leaderboard of
a qrels version published by a certified campaign, a run's page and a comparison of runs show
each run's prediction-powered interval and which pairs of runs are settled, from the
campaign's one certified board (annotation/services/certified_board.py), to its lead only."""

import pytest

from annotation.services import adjudication, certified, machine_judges, machine_runs
from annotation.services import certified_board as boards
from evaluation import services as evaluation
from tests.annotation.trust_data import grade_open, person, trust_world, truth
from tests.llm_server import KEY, ChatServer, honest_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


@pytest.fixture
def certified_world(django_user_model):
    """A certified campaign (a uniform sample of 20 of its 60 pairs, graded by the humans),
    its qrels published, and the three runs scored on them and on an imported version."""
    campaign, lead, _judges, runs = trust_world(django_user_model)
    with ChatServer(default=honest_grade) as server:
        machine = machine_judges.create_machine_judge(
            campaign=campaign, name="honest", model_name="m", base_url=server.base_url, api_key=KEY
        )
        machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
    certified.draw_sample(campaign=campaign, machine=machine, strategy="uniform", budget=20, seed=9)
    grade_open(campaign)
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.CERTIFIED
    published = adjudication.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    imported = evaluation.import_qrels(
        source=b"".join(
            f"{q} 0 d{q}-{i} {truth(f'd{q}-{i}')}\n".encode() for q in "1234" for i in range(15)
        ),
        filename="truth.qrels",
        name="truth",
    )
    for qrels in (published.qrels, imported):
        for run in runs:
            evaluation.evaluate_run(run=run, qrels=qrels, measure_specs=["ndcg_cut.10"])
    engineer = person(django_user_model, "eng", "engineer")
    return campaign, lead, engineer, runs, board, published.qrels, imported


def shown(estimate) -> str:
    return f"{estimate.low:.4f} – {estimate.high:.4f}"


def test_the_leaderboard_of_the_campaigns_qrels_shows_intervals_and_settled_pairs(
    certified_world, client
):
    _campaign, lead, engineer, _runs, board, published, imported = certified_world
    client.force_login(lead)
    url = f"/evaluation/leaderboard/?qrels={published.pk}&measures=ndcg_cut.10"
    page = client.get(url).content.decode()
    assert 'data-testid="leaderboard-certified"' in page
    for estimate in board.certified.runs:
        assert shown(estimate) in page
        assert f"{estimate.estimate:.4f}" in page
    settled = [p for p in board.certified.pairs if p.settled_holm]
    assert page.count('data-settled="yes"') == len(settled)
    assert page.count('data-settled="no"') == len(board.certified.pairs) - len(settled)
    for p in board.certified.pairs:
        assert f"{board.label(p.a)} vs {board.label(p.b)}" in page
        assert f"{p.low:.4f} – {p.high:.4f}" in page
    # Qrels the campaign did not publish: the leaderboard is about them, so none shown.
    other = client.get(f"/evaluation/leaderboard/?qrels={imported.pk}&measures=ndcg_cut.10")
    assert 'data-testid="leaderboard-certified"' not in other.content.decode()
    # The API's leaderboard carries the same numbers.
    body = client.get(f"/api/v1/leaderboard/?qrels={published.pk}&measures=ndcg_cut.10").json()
    [given] = body["certified"]
    assert given["humans"] == board.certified.humans
    by_run = {str(r["run"]): r for r in given["runs"]}
    for estimate in board.certified.runs:
        assert (by_run[estimate.run]["low"], by_run[estimate.run]["high"]) == (
            estimate.low,
            estimate.high,
        )
    assert [p["settled"] for p in given["pairs"]] == [p.settled_holm for p in board.certified.pairs]
    # Not the engineer's campaign: not theirs to see.
    client.force_login(engineer)
    assert 'data-testid="leaderboard-certified"' not in client.get(url).content.decode()
    body = client.get(f"/api/v1/leaderboard/?qrels={published.pk}&measures=ndcg_cut.10").json()
    assert body["certified"] == []


def test_a_run_page_says_where_the_run_stands_against_each_other_run(certified_world, client):
    _campaign, lead, _engineer, runs, board, _published, _imported = certified_world
    client.force_login(lead)
    best = runs[0]
    page = client.get(best.get_absolute_url()).content.decode()
    assert 'data-testid="run-standing"' in page
    mine = [p for p in board.certified.pairs if str(best.pk) in (p.a, p.b)]
    assert len(mine) == 2
    for p in mine:
        other = board.label(p.b if p.a == str(best.pk) else p.a)
        better = (p.difference > 0) == (p.a == str(best.pk))
        words = (
            ("Settled above" if better else "Settled below")
            if p.settled_holm
            else ("Not settled against")
        )
        assert f"{words} {other}" in page


def test_a_comparison_shows_the_pairs_among_its_runs(certified_world, client):
    _campaign, lead, _engineer, runs, board, published, _imported = certified_world
    client.force_login(lead)
    page = client.get(
        f"/evaluation/compare/?qrels={published.pk}&measures=ndcg_cut.10"
        f"&baseline={runs[0].pk}&runs={runs[1].pk}"
    ).content.decode()
    assert 'data-testid="compare-certified"' in page
    [pair] = [p for p in board.certified.pairs if {p.a, p.b} == {str(runs[0].pk), str(runs[1].pk)}]
    assert f"{pair.low:.4f} – {pair.high:.4f}" in page
    assert page.count('data-settled="') == 1  # only the pair of the two compared runs


def test_the_run_api_carries_the_run_pages_certified_numbers(certified_world, client):
    _campaign, lead, engineer, runs, board, _published, _imported = certified_world
    best = runs[0]
    client.force_login(lead)
    body = client.get(f"/api/v1/runs/{best.pk}/").json()
    [given] = body["certified"]
    assert (given["campaign"], given["humans"], given["pool_size"]) == (
        "Trust 2026",
        board.certified.humans,
        board.certified.pool_size,
    )
    [estimate] = [e for e in board.certified.runs if e.run == str(best.pk)]
    assert given["runs"] == [
        {
            "run": best.pk,
            "ndcg_cut_10": estimate.estimate,
            "low": estimate.low,
            "high": estimate.high,
        }
    ]
    # Every pair that holds the run, as the run page's standing lists them.
    mine = [p for p in board.certified.pairs if str(best.pk) in (p.a, p.b)]
    assert [(str(p["a"]), str(p["b"]), p["settled"], p["p_holm"]) for p in given["pairs"]] == [
        (p.a, p.b, p.settled_holm, p.p_holm) for p in mine
    ]
    # The list stays cheap: no certified board per row.
    assert "certified" not in client.get("/api/v1/runs/").json()["results"][0]
    # Not the engineer's campaign: not theirs to see.
    client.force_login(engineer)
    assert client.get(f"/api/v1/runs/{best.pk}/").json()["certified"] == []


def test_the_comparison_api_carries_the_pairs_among_its_runs(certified_world, client):
    _campaign, lead, engineer, runs, board, published, _imported = certified_world
    url = (
        f"/api/v1/comparison/?qrels={published.pk}&measures=ndcg_cut.10"
        f"&baseline={runs[0].pk}&runs={runs[1].pk}"
    )
    client.force_login(lead)
    [given] = client.get(url).json()["certified"]
    assert sorted(r["run"] for r in given["runs"]) == sorted([runs[0].pk, runs[1].pk])
    by_run = {r["run"]: r for r in given["runs"]}
    for estimate in board.certified.runs:
        if int(estimate.run) in by_run:
            assert (by_run[int(estimate.run)]["low"], by_run[int(estimate.run)]["high"]) == (
                estimate.low,
                estimate.high,
            )
    # Only the pair of the two compared runs, as the comparison page shows it.
    [pair] = [p for p in board.certified.pairs if {p.a, p.b} == {str(runs[0].pk), str(runs[1].pk)}]
    assert [(p["difference"], p["low"], p["high"], p["settled"]) for p in given["pairs"]] == [
        (pair.difference, pair.low, pair.high, pair.settled_holm)
    ]
    client.force_login(engineer)
    assert client.get(url).json()["certified"] == []
