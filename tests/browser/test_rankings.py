"""Would a qrels version change the leaderboard? An engineer opens the rankings page from the
qrels list, picks the humans' and a machine's qrels and a measure with k, and reads the
coefficients with their intervals and @k values, the pairs of runs that swap, the runs and
the per-topic rows (sorting them by one column); then checks a leaderboard computed
elsewhere and reads its meta-evaluation. Screenshots go to test-artifacts/."""

import io
import json
import re

import numpy as np
import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from evaluation import services
from evaluation.analysis import ranking_agreement
from evaluation.collection import synthetic
from evaluation.dashboards import rankings
from tests.evaluation.dashboard_data import user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
TOPICS = 14
SYSTEMS = {f"sys{i}": (0.5 + 0.04 * i, 1.0) for i in range(1, 7)}


@pytest.fixture
def setup(django_user_model, media_root):
    user(django_user_model, "eng", "engineer", password=PASSWORD)
    humans = synthetic.make_qrels_text(topics=TOPICS, judged=25)
    # The machine regrades 60% of the pairs at random and finds nothing on one topic.
    rng = np.random.default_rng(5)
    lines = []
    for line in humans.splitlines():
        qid, zero, docno, grade = line.split()
        if qid == "1014":
            grade = "0"
        elif rng.random() < 0.6:
            grade = str(rng.integers(0, 4))
        lines.append(f"{qid} {zero} {docno} {grade}\n")
    old = services.import_qrels(source=humans.encode(), filename="h.qrels", name="humans")
    new = services.import_qrels(source="".join(lines).encode(), filename="m.qrels", name="machine")
    for tag, (strength, noise) in SYSTEMS.items():
        text = synthetic.make_run_text(humans, tag=tag, strength=strength, noise=noise, depth=30)
        services.import_run(source=text.encode(), filename=f"{tag}.run", system=tag)
    # Score every run with both versions, as an engineer would before opening the page.
    call_command("compare_qrels", "humans", "machine", "--samples", "10", stdout=io.StringIO())
    return old, new


def test_an_engineer_sees_whether_a_machines_qrels_would_change_the_leaderboard(
    page, live_server, login, screenshot, setup
):
    old, new = setup
    expected = rankings.compare_qrels(old, new, measure="ndcg_cut_10", k=4)
    violations = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    login("eng", PASSWORD)

    page.goto(f"{live_server.url}/evaluation/qrels/")
    page.get_by_test_id("rankings-link").click()
    page.get_by_label("Reference qrels").select_option(str(old.pk))
    page.get_by_label("Other qrels").select_option(str(new.pk))
    page.get_by_label("Measure").select_option("ndcg_cut_10")
    page.get_by_label("k", exact=True).fill("4")
    page.get_by_role("button", name="Compare").click()

    result = page.get_by_test_id("rankings-result")
    expect(result.get_by_role("heading", level=2)).to_have_text(
        "humans v1 against machine v1: 6 runs by nDCG@10"
    )
    coefficients = page.locator("#coefficients")
    expect(coefficients.locator("thead")).to_contain_text("Top 4")
    for c in expected.coefficients:
        cells = coefficients.locator(f'tr[data-coefficient="{c["name"]}"] td')
        expect(cells.nth(0)).to_have_text(f"{c['value']:.4f}")
        expect(cells.nth(1)).to_have_text(re.compile(r"^-?\d\.\d{4}–-?\d\.\d{4}$|^—$"))
        at_k = "—" if c["at_k"] != c["at_k"] else f"{c['at_k']:.4f}"
        expect(cells.nth(2)).to_have_text(at_k)
    swaps = expected.agreement.swaps
    assert swaps, "the machine's qrels should swap some runs"
    expect(result).to_contain_text(
        f"{len(swaps)} pair{'s' if len(swaps) != 1 else ''} of runs swap"
    )
    expect(page.locator("#swaps tbody tr").first).to_contain_text(swaps[0].first)
    expect(page.locator("#ranked-runs tbody tr")).to_have_count(6)

    # Per topic: worst first, the topic the machine found nothing on last, with dashes.
    topic_rows = page.get_by_test_id("per-topic").locator("tbody tr")
    expect(topic_rows).to_have_count(TOPICS)
    worst = expected.worst_topics[0]
    expect(topic_rows.first).to_have_attribute("data-qid", worst["qid"])
    expect(topic_rows.first.locator('td[data-coefficient="spearman"]')).to_have_text(
        f"{worst['spearman']:.4f}"
    )
    expect(topic_rows.last).to_have_attribute("data-qid", "1014")
    expect(topic_rows.last.locator("td")).to_have_text(["—", "—", "—", "—"])
    screenshot("rankings")

    # Sort the per-topic rows by Pearson, then the other way.
    page.get_by_test_id("per-topic").get_by_role("link", name="Pearson").click()
    expect(page.locator('#per-topic th[aria-sort="ascending"]')).to_have_text("Pearson")
    page.get_by_test_id("per-topic").get_by_role("link", name="Pearson").click()
    expect(page.locator('#per-topic th[aria-sort="descending"]')).to_have_text("Pearson")
    shown = page.locator('#per-topic td[data-coefficient="pearson"]').all_inner_texts()
    numbers = [float(v) for v in shown if v != "—"]
    assert numbers == sorted(numbers, reverse=True) and shown[-1] == "—"
    assert violations == []


def test_an_engineer_checks_a_leaderboard_computed_elsewhere(
    page, live_server, login, screenshot, setup, tmp_path
):
    old, _ = setup
    login("eng", PASSWORD)
    page.goto(f"{live_server.url}/evaluation/leaderboard/?qrels={old.pk}")
    download = page.request.get(
        f"{live_server.url}/evaluation/leaderboard/download/?qrels={old.pk}&layout=jsonl"
    )
    rows = [json.loads(line) for line in download.text().splitlines()]
    # Theirs: sys6's values a third lower, so it falls down their ranking.
    theirs = [
        {**r, "value": r["value"] * 0.66 if r["run_id"] == "sys6/sys6" else r["value"]}
        for r in rows
    ]
    path = tmp_path / "theirs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in theirs))
    means = {
        side: {
            r["run_id"]: r["value"]
            for r in data
            if r["topic_id"] == "all" and r["measure"] == "ndcg_cut_10"
        }
        for side, data in (("ours", rows), ("theirs", theirs))
    }

    page.get_by_role("link", name="Check a leaderboard computed elsewhere").click()
    form = page.get_by_test_id("check-form")
    form.get_by_label("File").set_input_files(str(path))
    form.get_by_label("Layout").select_option("jsonl")
    form.get_by_label("Rank the runs by").select_option("ndcg_cut_10")
    form.get_by_label("k", exact=True).fill("3")
    form.get_by_role("button", name="Check").click()

    ranking = page.get_by_test_id("check-ranking")
    kendall = ranking_agreement.coefficient("kendall", means["ours"], means["theirs"])
    expect(ranking.locator('tr[data-coefficient="kendall"] td').first).to_have_text(
        f"{kendall:.4f}"
    )
    expect(ranking.locator("#check-coefficients thead")).to_contain_text("Our top 3")
    expect(ranking).to_contain_text("sys6/sys6")
    expect(ranking.get_by_test_id("per-topic").locator("tbody tr")).to_have_count(14)
    screenshot("leaderboard-check")
