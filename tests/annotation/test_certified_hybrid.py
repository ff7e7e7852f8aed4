"""Certified hybrid qrels and the gullibility gate, end to end against real scripted machines
on loopback (tests/llm_server.py: an honest one, a gullible one that calls a passage holding
every query word highly relevant): the machine grades the pool through the runner, the design
draws the human sample and sends it through assign_pending, the judges grade it, and the
certified leaderboard, the gate and the publication's filling follow."""

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from annotation.models import (
    Assignment,
    AuditKind,
    CertifiedDesign,
    DesignPair,
    MachineAudit,
    Pair,
    PooledRun,
)
from annotation.services import adjudication, certified, gates, machine_judges, machine_runs
from annotation.services import certified_board as boards
from annotation.services.campaigns import update_campaign
from evaluation import certified as stats
from tests.annotation.trust_data import grade_open, machine_says, trust_world, truth
from tests.llm_server import KEY, ChatServer, gullible_grade, honest_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01


@pytest.fixture
def world(django_user_model):
    return trust_world(django_user_model)


@pytest.fixture
def honest():
    with ChatServer(default=honest_grade) as server:
        yield server


@pytest.fixture
def gullible():
    with ChatServer(default=gullible_grade) as server:
        yield server


def machine_over_pool(campaign, server, name="honest"):
    machine = machine_judges.create_machine_judge(
        campaign=campaign, name=name, model_name="m", base_url=server.base_url, api_key=KEY
    )
    run = machine_runs.prepare_run(machine=machine, scope="pool")
    machine_runs.run_machine_judge(run=run)
    return machine


def test_a_lead_draws_a_sample_humans_grade_it_and_the_leaderboard_is_certified(world, honest):
    campaign, lead, _judges, runs = world
    pool = Pair.objects.filter(campaign=campaign).count()
    assert pool == 60
    before = Assignment.objects.filter(pair__campaign=campaign).count()
    assert before == pool  # pooling gave every pair to a judge (overlap 1)
    machine = machine_over_pool(campaign, honest)
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.NO_DESIGN
    assert [m for m in board.ready_machines] == [machine]

    drawn = certified.draw_sample(
        campaign=campaign, machine=machine, strategy="stratified", budget="25%", seed=7, user=lead
    )
    design = drawn.design
    assert (design.chosen, design.pool_size, design.seed) == (15, 60, 7)
    assert design.strata == "machine grade"  # 4 topics x 4 grades need more than 15 pairs
    assert DesignPair.objects.filter(design=design).count() == 60
    probabilities = DesignPair.objects.filter(design=design).values_list("probability", flat=True)
    assert sum(probabilities) == pytest.approx(15)
    # The sample went through the audits' path: a certified audit and assign_pending.
    audit = MachineAudit.objects.get(campaign=campaign, kind=AuditKind.CERTIFIED)
    assert audit.sent == 15 and design.audit == audit
    # Open assignments outside the sample were taken back; the sampled pairs keep theirs.
    held = set(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))
    chosen = set(
        DesignPair.objects.filter(design=design, chosen=True).values_list("pair_id", flat=True)
    )
    assert held == chosen and drawn.withdrawn == 45

    with pytest.raises(ValidationError, match="not drawn again"):
        certified.draw_sample(campaign=campaign, machine=machine, strategy="uniform", budget=5)

    assert grade_open(campaign, limit=10) == 10
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.HUMANS_PENDING
    assert (board.progress.graded, board.progress.chosen) == (10, 15)
    assert "10 of the 15 sampled pairs" in board.message

    grade_open(campaign)
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.CERTIFIED, board.message
    result = board.certified
    assert result.humans == 15 and result.pool_size == 60
    names = {board.label(r.run) for r in result.runs}
    assert names == {str(run) for run in runs}
    # The same numbers as the pure estimator fed by hand.
    assert board.label(result.runs[0].run) == str(runs[0])  # "best" ranks first
    for estimate in result.runs:
        # The interval is cut to [0, 1], where nDCG lies; the estimate is the estimator's.
        assert 0 <= estimate.low <= estimate.high <= 1
        assert estimate.low <= max(0, min(1, estimate.estimate)) <= estimate.high
    assert len(result.pairs) == 3
    assert all(0 <= p.p_holm <= 1 for p in result.pairs)


def test_the_certified_estimate_is_the_pure_one_and_exact_when_every_pair_is_sampled(world, honest):
    campaign, _lead, _judges, runs = world
    machine = machine_over_pool(campaign, honest)
    certified.draw_sample(campaign=campaign, machine=machine, strategy="uniform", budget=60, seed=1)
    grade_open(campaign)
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.CERTIFIED
    # All pairs sampled: the estimate is the all-human nDCG@10, with zero width.
    pairs = list(
        Pair.objects.filter(campaign=campaign).values_list("topic__qid", "document__docno")
    )
    rankings = certified.run_rankings([r.pk for r in runs], {q for q, _ in pairs})
    pool = stats.build_pool(pairs, rankings, k=10, top_grade=3)
    human = pool.grades({pair: truth(pair[1]) for pair in pairs})
    exact = stats.ndcg_means(pool, human)
    for estimate in board.certified.runs:
        assert estimate.estimate == pytest.approx(exact[estimate.run])
        assert estimate.high - estimate.low == pytest.approx(0, abs=1e-12)
    machine_only = stats.ndcg_means(pool, pool.grades({p: machine_says(p[1]) for p in pairs}))
    assert board.certified.runs[0].machine_only == pytest.approx(
        machine_only[board.certified.runs[0].run]
    )


def test_the_board_says_why_it_cannot_certify_yet(world, honest):
    campaign, _lead, _judges, _runs = world
    assert grade_open(campaign, limit=5) == 5
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.NO_DESIGN
    assert "5 pairs humans have graded so far were not chosen by a design" in board.message
    machine = machine_judges.create_machine_judge(
        campaign=campaign, name="half", model_name="m", base_url=honest.base_url, api_key=KEY
    )
    topic = campaign.topics.get(qid="1")
    machine_runs.run_machine_judge(
        run=machine_runs.prepare_run(machine=machine, scope="topic", topic=topic)
    )
    with pytest.raises(ValidationError, match="has graded 15 of the 60 pool pairs"):
        certified.draw_sample(campaign=campaign, machine=machine, strategy="uniform", budget=10)
    for bad, words in (("ten", "A budget is"), ("150%", "A budget is"), (0, "A budget is")):
        with pytest.raises(ValidationError, match=words):
            certified.draw_sample(
                campaign=campaign, machine=machine, strategy="uniform", budget=bad
            )
    with pytest.raises(ValidationError, match="Unknown strategy"):
        certified.draw_sample(campaign=campaign, machine=machine, strategy="lucky", budget=10)
    assert not CertifiedDesign.objects.exists()


def test_active_design_and_no_pooled_run(world, honest):
    campaign, _lead, _judges, _runs = world
    machine = machine_over_pool(campaign, honest)
    certified.draw_sample(campaign=campaign, machine=machine, strategy="active", budget=0.3, seed=3)
    design = CertifiedDesign.objects.get(campaign=campaign)
    rows = DesignPair.objects.filter(design=design)
    assert all(r.stratum is None for r in rows)
    assert sum(r.probability for r in rows) == pytest.approx(18)
    grade_open(campaign)
    assert boards.certified_board(campaign=campaign).state == boards.State.CERTIFIED
    PooledRun.objects.filter(campaign=campaign).delete()
    board = boards.certified_board(campaign=campaign)
    assert board.state == boards.State.NO_RUNS and "No stored run" in board.message


def test_a_judge_added_later_gets_only_the_sampled_pairs(world, honest, django_user_model):
    from annotation.services.assignments import add_judge
    from tests.annotation.trust_data import person

    campaign, _lead, _judges, _runs = world
    machine = machine_over_pool(campaign, honest)
    certified.draw_sample(campaign=campaign, machine=machine, strategy="uniform", budget=12, seed=2)
    Assignment.objects.filter(pair__campaign=campaign).delete()
    newcomer = person(django_user_model, "late", "judge")
    add_judge(campaign=campaign, judge=newcomer)
    assert Assignment.objects.filter(pair__campaign=campaign).count() == 12


# --- the gullibility gate ---------------------------------------------------------------------


@pytest.fixture
def gate_of(django_capture_on_commit_callbacks):
    """Start a gate; its job runs when the transaction commits (inline in tests)."""

    def start(machine, **options):
        with django_capture_on_commit_callbacks(execute=True):
            job = gates.start_gate(machine=machine, **options)
        job.refresh_from_db()
        return machine.gates.get(job=job), job

    return start


def test_the_gate_blocks_a_gullible_machine_and_passes_an_honest_one(
    world, honest, gullible, gate_of
):
    campaign, lead, _judges, _runs = world
    grade_open(campaign)  # every pair graded by humans: 28 of them not relevant
    fooled = machine_over_pool(campaign, gullible, name="gullible")
    fair = machine_over_pool(campaign, honest, name="honest")
    gate, job = gate_of(fooled)
    assert job.status == "succeeded", job.step
    assert gates.verdict(gate) == "blocked" and gate.blocked
    rises = {r["probe"]: r for r in gate.rises}
    assert set(rises) == {"stuffed", "instruction", "shuffled"}
    assert rises["stuffed"]["pairs"] == 28
    # The machine called 4 of the 28 relevant as they were (d?-0 says "evidence" once), all
    # 28 once the query's words were stuffed in.
    assert rises["stuffed"]["original_rate"] == pytest.approx(4 / 28)
    assert rises["stuffed"]["rise"] == pytest.approx(24 / 28)
    assert rises["stuffed"]["low"] > 0.02 and rises["stuffed"]["exceeds"]
    assert rises["instruction"]["rise"] == 0 and not rises["instruction"]["exceeds"]
    # The probes went to the machine as chat completions: the stuffed one holds the words.
    assert any(
        "ocean tides moon." in m["content"] for r in gullible.requests for m in r["messages"]
    )

    fair_gate, _ = gate_of(fair)
    assert gates.verdict(fair_gate) == "passed"
    assert all(r["rise"] == 0 for r in fair_gate.rises)

    # Filling qrels: refused while the gullible machine's grades would fill, until overridden.
    Assignment.objects.filter(pair__campaign=campaign, pair__topic__qid="1").delete()
    campaign = update_campaign(campaign=campaign, machine_grades_fill=True).campaign
    with pytest.raises(ValidationError, match="machine:gullible failed the gullibility gate"):
        adjudication.publish(campaign=campaign, user=lead)
    with pytest.raises(ValidationError, match="Say why"):
        gates.override_gate(gate=gate, user=lead, reason="  ")
    with pytest.raises(ValidationError, match="nothing to override"):
        gates.override_gate(gate=fair_gate, user=lead, reason="because")
    gates.override_gate(gate=gate, user=lead, reason="The probes are not our documents.")
    publication = adjudication.publish(campaign=campaign, user=lead)
    record = publication.machine_gates["machine:gullible"]
    assert record["verdict"] == "overridden"
    assert record["override"]["by"] == "lead"
    assert record["override"]["reason"] == "The probes are not our documents."
    assert publication.machine_gates["machine:honest"]["verdict"] == "passed"
    assert "overrode it" in publication.qrels.description


def test_a_machine_never_gated_may_not_fill(world, honest):
    campaign, lead, _judges, _runs = world
    grade_open(campaign, limit=50)
    machine_over_pool(campaign, honest)
    campaign = update_campaign(campaign=campaign, machine_grades_fill=True).campaign
    with pytest.raises(ValidationError, match="has not been through the gullibility gate"):
        adjudication.publish(campaign=campaign, user=lead)


def test_the_gate_needs_pairs_humans_graded_not_relevant(world, honest, gate_of):
    campaign, _lead, _judges, _runs = world
    machine = machine_over_pool(campaign, honest)
    with pytest.raises(ValidationError, match="needs pairs the humans graded not relevant"):
        gates.start_gate(machine=machine)
    grade_open(campaign)
    for bad in (0, 5001):
        with pytest.raises(ValidationError, match="Probe between 1 and 5,000 pairs"):
            gates.start_gate(machine=machine, max_pairs=bad)
    gate, _job = gate_of(machine, max_pairs=8, seed=4)
    assert gate.pairs == 8 and all(r["pairs"] == 8 for r in gate.rises)
    assert not gate.conclusive  # 8 pairs cannot show a rise is below 2 points


def test_a_dead_endpoint_fails_the_gate_job_with_the_reason(world, honest, gate_of):
    campaign, _lead, _judges, _runs = world
    grade_open(campaign)
    machine = machine_over_pool(campaign, honest)
    with ChatServer(default=honest_grade) as gone:
        pass  # started and stopped: nothing listens on its port any more
    machine_judges.update_machine_judge(machine=machine, base_url=gone.base_url, api_key=KEY)
    machine.max_retries = 0
    machine.save(update_fields=["max_retries"])
    gate, job = gate_of(machine, max_pairs=3)
    assert job.status == "failed"
    assert "Every request of the gate failed" in job.step
    assert gates.verdict(gate) == "failed"


def test_probes_keep_their_addition_when_the_passage_is_cut():
    texts = gates.probe_texts("word " * 5000, "ocean tides", limit=1000, seed=1)
    assert texts["stuffed"].endswith("ocean tides.")
    assert len(texts["stuffed"]) <= 1000
    assert np.isclose(len(texts["original"]), len(texts["shuffled"]), atol=2)


def test_a_run_page_shows_its_certified_interval_to_the_campaigns_lead_only(
    world, honest, client, django_user_model
):
    from tests.annotation.trust_data import person

    campaign, lead, _judges, runs = world
    machine = machine_over_pool(campaign, honest)
    certified.draw_sample(campaign=campaign, machine=machine, strategy="uniform", budget=20, seed=9)
    client.force_login(lead)
    page = client.get(runs[0].get_absolute_url()).content.decode()
    assert 'data-testid="run-certified"' not in page  # not certified yet: nothing to show
    grade_open(campaign)
    estimate = next(
        r
        for r in boards.certified_board(campaign=campaign).certified.runs
        if r.run == str(runs[0].pk)
    )
    page = client.get(runs[0].get_absolute_url()).content.decode()
    assert 'data-testid="run-certified"' in page
    assert f"{estimate.low:.4f} – {estimate.high:.4f}" in page
    # A comparison of runs scored against some qrels shows them too, beside its own numbers.
    from evaluation import services as evaluation

    qrels = evaluation.import_qrels(
        source=b"".join(
            f"{q} 0 d{q}-{i} {truth(f'd{q}-{i}')}\n".encode() for q in "1234" for i in range(15)
        ),
        filename="truth.qrels",
        name="truth",
    )
    for run in runs:
        evaluation.evaluate_run(run=run, qrels=qrels, measure_specs=["ndcg_cut.10"])
    compare = client.get(
        f"/evaluation/compare/?qrels={qrels.pk}&measures=ndcg_cut.10"
        f"&baseline={runs[0].pk}&runs={runs[1].pk}"
    ).content.decode()
    assert 'data-testid="compare-certified"' in compare
    assert f"{estimate.low:.4f} – {estimate.high:.4f}" in compare
    engineer = person(django_user_model, "eng", "engineer")
    client.force_login(engineer)
    page = client.get(runs[0].get_absolute_url()).content.decode()
    assert 'data-testid="run-certified"' not in page  # another's campaign: not theirs to see


def test_the_draw_page_refuses_hostile_input_with_the_reason(world, honest, client):
    campaign, lead, _judges, _runs = world
    machine = machine_over_pool(campaign, honest)
    client.force_login(lead)
    url = f"/campaigns/{campaign.pk}/certified/draw/"
    for budget in ("1e309", "nan", "-5", "0", "2.5", "9" * 15, "ten%"):
        response = client.post(
            url, {"machine": machine.pk, "strategy": "uniform", "budget": budget}
        )
        assert response.status_code == 400, budget
        assert b"A budget is" in response.content or b"more than the pool" in response.content
    response = client.post(url, {"machine": 10**9, "strategy": "uniform", "budget": "5"})
    assert response.status_code == 400
    response = client.post(url, {"machine": machine.pk, "strategy": "uniform", "budget": "5"})
    assert response.status_code == 302
    again = client.post(url, {"machine": machine.pk, "strategy": "uniform", "budget": "5"})
    assert again.status_code == 400 and b"not drawn again" in again.content
    gate = f"/campaigns/{campaign.pk}/machines/{machine.pk}/gate/"
    assert client.post(gate + "run/", {"max_pairs": "lots"}).status_code == 400
    override = client.post(gate + "override/", {"reason": "x"})
    assert override.status_code == 400 and b"nothing to override yet" in override.content


def test_the_gate_threshold_is_a_campaign_setting_on_the_page_and_the_api(world, client):
    campaign, lead, _judges, _runs = world
    client.force_login(lead)
    url = f"/campaigns/{campaign.pk}/judgments/settings/"
    assert client.post(url, {"gate_points": "5"}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.gate_threshold == pytest.approx(0.05)
    for bad in ("abc", "150", "-1"):
        response = client.post(url, {"gate_points": bad}, follow=True)
        assert b"Nothing saved" in response.content, bad
    campaign.refresh_from_db()
    assert campaign.gate_threshold == pytest.approx(0.05)
    api = f"/api/v1/campaigns/{campaign.pk}/"
    assert (
        client.patch(api, {"gate_threshold": 1.5}, content_type="application/json").status_code
        == 400
    )
    answer = client.patch(api, {"gate_threshold": 0.03}, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["gate_threshold"] == 0.03
