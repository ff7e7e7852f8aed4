"""Judgments from anywhere, end to end in the browser (issue 12): a lead imports a crowd
platform's CSV and an UMBRELA-style qrels file, runs an LLM judge against a real
chat-completions server on loopback (tests/llm_server.py, grading by its stated lexical
rule), reads the machines against the humans in the agreement report, sends the pairs the
machines disagree on to the human judges, publishes the humans' qrels and a version whose
unjudged pairs machines fill, and opens the ranking comparison of the two."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import (
    Assignment,
    AuditPair,
    Document,
    ExternalGrade,
    MachineAudit,
    MachineJudge,
    PairSource,
    Topic,
)
from evaluation import services as evaluation
from evaluation.models import QrelsVersion, Run
from tests.llm_server import ChatServer, lexical_grade

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbound_allows_loopback"),
]

PASSWORD = "a-long-demo-password"
QUERIES = {"1": "walking an old dog", "2": "parrot lifespan"}
TEXTS = {
    "d1": "How far to walk an old dog: short walks suit old dogs best.",
    "d2": "Parrots can live for decades; the lifespan of a macaw is 50 years.",
    "d3": "A recipe for sourdough bread.",
    "d4": "Walking shoes on sale.",
    "d5": "The parrot lifespan depends on the species.",
    "d6": "Dog walking services in the city.",
}
# The crowd graded pairs outside the pool (0-4, mapped onto 0-3), two workers a pair.
CROWD = (
    "qid,docno,judge,grade\n"
    "1,d4,worker17,1\n1,d4,worker22,0\n"
    "1,d6,worker17,3\n1,d6,worker22,3\n"
    "2,d5,worker31,4\n2,d5,worker22,4\n"
)
# An LLM assessor's qrels (UMBRELA's output as qrels): it grades every pair, pool or not.
UMBRELA = "".join(
    f"{qid} 0 {docno} {grade}\n"
    for qid, docno, grade in [
        ("1", "d1", 3),
        ("1", "d2", 0),
        ("1", "d3", 0),
        ("1", "d4", 2),
        ("1", "d6", 2),
        ("2", "d1", 0),
        ("2", "d2", 3),
        ("2", "d3", 0),
        ("2", "d5", 3),
        ("2", "d6", 1),
    ]
)


def run_text(order: dict[str, list[str]], tag: str) -> bytes:
    return "".join(
        f"{qid} Q0 {docno} {rank} {10 - rank} {tag}\n"
        for qid, docnos in order.items()
        for rank, docno in enumerate(docnos, 1)
    ).encode()


@pytest.fixture
def campaign(django_user_model, media_root):
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    judges = []
    for name in ("ann", "bob"):
        judge = django_user_model.objects.create_user(name)
        judge.groups.add(Group.objects.get_or_create(name="judge")[0])
        judges.append(judge)
    campaign = services.create_campaign(lead=lead, name="Pets 2026", judges=judges)
    for qid, query in QUERIES.items():
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    for docno, text in TEXTS.items():
        Document.objects.create(campaign=campaign, docno=docno, text=text)
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, d) for q in QUERIES for d in ("d1", "d2", "d3")],
        source=PairSource.IMPORTED,
    )
    # The judges here have graded the pool.
    truth = {("1", "d1"): 3, ("1", "d2"): 0, ("1", "d3"): 0}
    truth |= {("2", "d1"): 0, ("2", "d2"): 3, ("2", "d3"): 0}
    for assignment in Assignment.objects.select_related("pair__topic", "pair__document"):
        key = (assignment.pair.topic.qid, assignment.pair.document.docno)
        services.record_judgment(
            assignment_id=assignment.pk, judge=assignment.judge, grade=truth[key]
        )
    # Three systems' runs, to rank under the published versions.
    for tag, order in {
        "bm25": {"1": ["d6", "d1", "d4"], "2": ["d5", "d2", "d6"]},
        "dense": {"1": ["d1", "d6", "d3"], "2": ["d2", "d5", "d1"]},
        "random": {"1": ["d3", "d4", "d2"], "2": ["d3", "d1", "d6"]},
    }.items():
        evaluation.import_run(source=run_text(order, tag), filename=f"{tag}.run", system=tag)
    return campaign


@pytest.fixture
def llm():
    with ChatServer(key=None, default=lexical_grade) as server:
        yield server


def test_a_lead_takes_outside_and_machine_judgments_to_the_ranking_comparison(
    page, live_server, login, campaign, llm, tmp_path, screenshot
):
    base = f"{live_server.url}/campaigns/{campaign.pk}"
    crowd = tmp_path / "crowd.csv"
    crowd.write_text(CROWD)
    umbrela = tmp_path / "umbrela-gpt-4o.qrels"
    umbrela.write_text(UMBRELA)
    login("lea", PASSWORD)

    # 1. The crowd's CSV: 0-4 mapped onto 0-3, its pairs added to the pool.
    page.goto(f"{base}/judgments/")
    page.get_by_label("File", exact=True).set_input_files(str(crowd))
    page.get_by_label("Grade mapping").fill("0:0, 1:1, 2:1, 3:2, 4:3")
    page.get_by_label("Add pairs missing from the pool").check()
    page.get_by_role("button", name="Import judgments").click()
    expect(page.get_by_text("crowd.csv: 6 grades added")).to_be_visible()

    # 2. The UMBRELA-style qrels file, as one machine judge's grades.
    page.get_by_label("File", exact=True).set_input_files(str(umbrela))
    page.get_by_label("Format").select_option("qrels")
    page.get_by_label("The file's judges are").select_option("machine")
    page.get_by_label("Judge", exact=True).fill("umbrela gpt-4o")
    page.get_by_label("Add pairs missing from the pool").check()
    page.get_by_role("button", name="Import judgments").click()
    expect(page.get_by_text("umbrela-gpt-4o.qrels: 10 grades added")).to_be_visible()

    # 3. An LLM judge on loopback, over the whole pool, in a job.
    page.goto(f"{base}/machines/")
    form = page.locator("#new-machine-judge")
    form.locator("[name=model_name]").fill("lexical-7b")
    form.locator("[name=base_url]").fill(llm.base_url)
    page.get_by_role("button", name="Create the machine judge").click()
    expect(page.get_by_text("Created the machine judge machine:")).to_be_visible()
    page.get_by_label("The whole pool").check()
    page.get_by_test_id("machine-run").click()
    expect(page.get_by_text("10 pairs graded, 0 failed")).to_be_visible(timeout=30_000)
    machine_grades = ExternalGrade.objects.filter(judge__name__startswith="lexical-7b")
    assert machine_grades.count() == 10 and len(llm.requests) == 10

    # 4. The machines against the humans.
    page.goto(f"{base}/agreement/")
    machines = page.locator("#machines")
    expect(machines).to_be_visible()
    expect(page.locator("section.machine-agreement")).to_have_count(2)
    expect(page.get_by_text("the humans' consensus").first).to_be_visible()
    screenshot("machines-end-to-end-report")

    # 5. The pairs where the two machines disagree go to the human judges.
    page.get_by_text("Humans check the machines: send pairs for audit").click()
    page.get_by_label("Machine judges disagree with each other").check()
    page.get_by_role("button", name="Send for audit").click()
    expect(page.get_by_role("status")).to_contain_text("pairs to the human judges")
    audit = MachineAudit.objects.get()
    sent = set(AuditPair.objects.filter(audit=audit).values_list("pair_id", flat=True))
    assert sent and audit.sent == len(sent)
    assert Assignment.objects.filter(pair_id__in=sent).count() == len(sent)  # overlap 1
    expect(page.locator("tr.audit-row").first).to_contain_text("the audit: humans since")
    screenshot("machines-end-to-end-audit-sent")
    page.goto(f"{base}/machines/")
    expect(page.locator("#audits")).to_contain_text("Machine judges disagree with each other")
    screenshot("machines-end-to-end-machines-page")

    # 6. Publish the humans' grades, then a version machines fill.
    page.goto(f"{base}/publish/")
    page.get_by_label("Qrels name").fill("pets-humans")
    leave_out = page.get_by_label("Leave the", exact=False)
    if leave_out.count():
        leave_out.check()
    page.get_by_role("button", name="Publish").click()
    page.goto(f"{base}/judgments/")
    page.get_by_label("A publication may give pairs no human graded").check()
    page.get_by_role("button", name="Save machine settings").click()
    # A machine fills qrels only past its gullibility gate (or the lead's recorded override).
    machine = MachineJudge.objects.get(model_name="lexical-7b")
    page.goto(f"{base}/machines/{machine.pk}/gate/")
    page.get_by_role("button", name="Run the gullibility gate").click()
    page.get_by_role("button", name="See the gate").click(timeout=30_000)
    verdict = page.get_by_test_id("gate-verdict")
    if verdict.get_attribute("data-verdict") == "blocked":
        page.get_by_label("Why may this machine fill qrels anyway?").fill(
            "A lexical model on a pet-care pool; its stuffed-keyword rise is known and accepted."
        )
        page.get_by_role("button", name="Override the gate").click()
    expect(verdict).not_to_have_attribute("data-verdict", "blocked")
    page.goto(f"{base}/publish/")
    page.get_by_label("Qrels name").fill("pets-filled")
    leave_out = page.get_by_label("Leave the", exact=False)
    if leave_out.count():
        leave_out.check()
    page.get_by_role("button", name="Publish").click()
    humans = QrelsVersion.objects.get(name="pets-humans")
    filled = QrelsVersion.objects.get(name="pets-filled")
    assert filled.entries.count() > humans.entries.count()
    # An engineer scores the stored runs with both versions (the page ranks scored runs).
    for run in Run.objects.all():
        for qrels in (humans, filled):
            evaluation.evaluate_run(
                run=run, qrels=qrels, measure_specs=list(evaluation.DASHBOARD_MEASURES)
            )

    # 7. Would the machine-filled qrels change the leaderboard?
    page.goto(f"{live_server.url}/evaluation/rankings/")
    page.get_by_label("Reference qrels").select_option(str(humans.pk))
    page.get_by_label("Other qrels").select_option(str(filled.pk))
    page.get_by_role("button", name="Compare").click()
    result = page.get_by_test_id("rankings-result")
    expect(result).to_contain_text("3 runs by")
    expect(page.locator("#coefficients")).to_contain_text("Kendall")
    screenshot("machines-end-to-end-rankings")
