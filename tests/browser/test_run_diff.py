"""An engineer who also leads a campaign goes from the leaderboard to the diff of two runs,
lands on the topic they rank most differently, reads a document, moves to the next topic and
back with the keyboard, and sends the topic's unjudged documents (both runs' top k) to
judging. Screenshots of the diff page go to test-artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from annotation import services as annotation
from annotation.models import Pair, PairSource, Topic
from evaluation import measures, services
from evaluation.collection import synthetic
from evaluation.models import Evaluation
from tests.evaluation.dashboard_data import user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
TOPICS = 12
DEPTH = 30


@pytest.fixture
def setup(django_user_model, media_root):
    engineer = user(django_user_model, "eng", "engineer", "lead", password=PASSWORD)
    qrels_text = synthetic.make_qrels_text(topics=TOPICS, judged=30)
    qrels = services.import_qrels(source=qrels_text.encode(), filename="pets.qrels", name="pets")
    campaign = annotation.create_campaign(lead=engineer, name="Pets 2026")
    for t in range(TOPICS):
        qid = str(1001 + t)
        Topic.objects.create(campaign=campaign, qid=qid, query=f"pet care question {qid}")
    campaign.documents.bulk_create(
        campaign.documents.model(
            campaign=campaign, docno=f"U{1001 + t}-{i:04d}", title=f"Page {i}", text="Cats nap."
        )
        for t in range(TOPICS)
        for i in range(DEPTH)
    )
    runs = {}
    for name, strength in (("bm25", 0.35), ("dense", 0.9)):
        text = synthetic.make_run_text(
            qrels_text, tag=name, strength=strength, noise=1.0, depth=DEPTH
        )
        run = services.import_run(source=text.encode(), filename=f"{name}.run", system=name)
        services.score_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
        runs[name] = run
    return qrels, campaign, runs


def most_changed(runs) -> list[str]:
    """Topics by |Δ nDCG@10| (dense − bm25), largest first, as the diff orders them."""
    values = {e.run_id: e.per_topic for e in Evaluation.objects.all()}
    a, b = values[runs["bm25"].pk], values[runs["dense"].pk]
    deltas = {q: b[q]["ndcg_cut_10"] - a[q]["ndcg_cut_10"] for q in a.keys() & b.keys()}
    return sorted(deltas, key=lambda q: (-abs(deltas[q]), q.encode()))


def test_an_engineer_walks_from_the_leaderboard_to_the_diff_and_sends_unjudged(
    page, live_server, login, screenshot, setup
):
    qrels, campaign, runs = setup
    violations = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    login("eng", PASSWORD)
    order = most_changed(runs)

    # The leaderboard: bm25 as the baseline, dense ticked, "Diff".
    page.get_by_role("link", name="Leaderboard", exact=True).click()
    # What unjudged documents could change, on demand: a worst – best column.
    page.get_by_test_id("toggle-bounds").click()
    expect(page.get_by_test_id("leaderboard-bounds")).to_have_count(2)
    screenshot("leaderboard-bounds")
    page.get_by_label("Baseline").select_option(str(runs["bm25"].pk))
    page.get_by_label("Compare dense/dense").check()
    page.get_by_test_id("diff-runs").click()

    # The diff opens on the topic the runs' nDCG@10 differs most.
    expect(page.get_by_role("heading", level=1)).to_have_text("bm25/bm25 → dense/dense")
    topic = page.get_by_test_id("diff-topic")
    expect(topic.get_by_role("heading", level=2)).to_contain_text(f"Topic {order[0]}")
    expect(page.locator("#diff-topics tr.current")).to_contain_text(order[0])
    expect(page.get_by_test_id("topic-query")).to_have_text(f"pet care question {order[0]}")
    rows = page.get_by_test_id("side-by-side").locator("tbody tr")
    expect(rows).to_have_count(20)
    screenshot("run-diff")

    # A document's text on a click (the topic page's fragment).
    unjudged = topic.locator("td.is-unjudged .docno").first
    unjudged.click()
    expect(page.locator("#document-panel")).to_contain_text("Cats nap.")

    # j: the next topic in the order; k: back.
    page.locator("body").press("j")
    expect(page).to_have_url(re.compile(rf"qid={order[1]}(&|$)"))
    expect(topic.get_by_role("heading", level=2)).to_contain_text(f"Topic {order[1]}")
    page.locator("body").press("k")
    expect(page).to_have_url(re.compile(rf"qid={order[0]}(&|$)"))

    # Send this topic's unjudged top 10 of both runs to the campaign.
    expected = services.unjudged_top_k(
        runs=list(runs.values()),
        qrels=qrels,
        k=10,
        options=measures.Options(),
        qids=[order[0]],
    )
    assert expected, "the most changed topic has unjudged documents in a top 10"
    page.get_by_test_id("diff-send").get_by_label("Campaign").select_option(str(campaign.pk))
    page.get_by_role("button", name="Send this topic's unjudged to judging").click()
    expect(page.locator(".flash-success")).to_contain_text(f"Sent {len(expected)} unjudged pair")
    sent = set(
        Pair.objects.filter(campaign=campaign, source=PairSource.UNJUDGED).values_list(
            "topic__qid", "document__docno"
        )
    )
    assert sent == set(expected)
    expect(topic.get_by_role("heading", level=2)).to_contain_text(f"Topic {order[0]}")
    screenshot("run-diff-sent")
    assert violations == []
