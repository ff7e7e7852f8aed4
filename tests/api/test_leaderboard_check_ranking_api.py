"""POST /api/v1/leaderboard/check/ returns the check page's meta-evaluation (issue 17 part 4):
their ranking of the runs against ours by one measure, every coefficient (scipy's tau-b,
Spearman and Pearson), @k, the swapped pairs, bootstrap intervals and per-topic
coefficients, the same numbers the page shows; bad uploads and options are 400s that say
what is wrong (file:line for the file), never 500s."""

import io
import json
import math
import re
import warnings

import pytest
from rest_framework.test import APIClient
from scipy import stats

from evaluation.analysis import ranking_agreement as ra
from tests.evaluation.dashboard_data import demo_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

SYSTEMS = {  # name: (how strongly the score follows the grade, noise), as evaluation.collection.synthetic's
    "s1": (0.2, 1.0),
    "s2": (0.4, 1.0),
    "s3": (0.6, 1.0),
    "s4": (0.8, 1.0),
    "s5": (1.0, 1.0),
}
FLAT = "1003"  # the topic where every run gets the same value in theirs


def made_world():
    qrels, _, runs = demo_world(topics=8, systems=SYSTEMS, depth=20)
    return qrels, runs


world_made = made_once(made_world)


@pytest.fixture
def world(world_copy):
    """made_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def api(django_user_model):
    client = APIClient()
    client.force_login(user(django_user_model, "eng", "engineer"))
    return client


def upload(data: bytes, name="theirs.jsonl"):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def ours_and_theirs(api, qrels):
    """Our jsonl download, and theirs: s5's values halved (it drops down the ranking) and
    every run 0.5 on topic FLAT (a topic that cannot rank the runs)."""
    text = api.get("/api/v1/leaderboard/download/", {"qrels": qrels.pk, "layout": "jsonl"})
    assert text.status_code == 200
    ours = [json.loads(line) for line in text.content.decode().splitlines()]
    theirs = []
    for row in ours:
        value = row["value"] / 2 if row["run_id"] == "s5/s5" else row["value"]
        if row["topic_id"] == FLAT:
            value = 0.5
        theirs.append({**row, "value": value})
    return ours, "".join(json.dumps(r) + "\n" for r in theirs).encode(), theirs


def table(rows, measure="ndcg_cut_10"):
    means = {
        r["run_id"]: r["value"] for r in rows if r["measure"] == measure and r["topic_id"] == "all"
    }
    topics = {}
    for r in rows:
        if r["measure"] == measure and r["topic_id"] != "all":
            topics.setdefault(r["run_id"], {})[r["topic_id"]] = r["value"]
    return means, topics


def scipy_value(name, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "kendall": stats.kendalltau,
            "spearman": stats.spearmanr,
            "pearson": stats.pearsonr,
        }[name](x, y).statistic


def check(api, qrels, data, **extra):
    return api.post(
        "/api/v1/leaderboard/check/",
        {"qrels": qrels.pk, "layout": "jsonl", "file": upload(data), **extra},
        format="multipart",
    )


def test_the_check_returns_their_ranking_meta_evaluated_against_ours(api, world):
    qrels, _ = world
    ours, data, theirs = ours_and_theirs(api, qrels)

    response = check(api, qrels, data, measure="nDCG@10", k=3)

    assert response.status_code == 200, response.content
    ranking = response.json()["ranking"]
    assert (ranking["measure"], ranking["runs"], ranking["k"], ranking["samples"]) == (
        "ndcg_cut_10",
        5,
        3,
        500,
    )
    (our_means, our_topics), (their_means, their_topics) = table(ours), table(theirs)
    names = sorted(our_means)
    x, y = [our_means[n] for n in names], [their_means[n] for n in names]
    by_name = {c["name"]: c for c in ranking["coefficients"]}
    assert list(by_name) == list(ra.COEFFICIENTS)
    for name in ("kendall", "spearman", "pearson"):
        assert by_name[name]["value"] == pytest.approx(scipy_value(name, x, y), abs=1e-12), name
    for name in ra.COEFFICIENTS:
        at_k = ra.coefficient(name, our_means, their_means, k=3)
        assert by_name[name]["at_k"] == (None if math.isnan(at_k) else pytest.approx(at_k)), name
        assert by_name[name]["low"] <= by_name[name]["high"], name
    assert (
        {(s["above"], s["below"]) for s in ranking["swaps"]}
        == {
            (a, b)
            for a in names
            for b in names
            if our_means[a] > our_means[b] and their_means[a] < their_means[b]
        }
        != set()
    )
    assert [r["old_rank"] for r in ranking["rows"]] == [1, 2, 3, 4, 5]
    per_topic = {row["qid"]: row for row in ranking["per_topic"]}
    assert set(per_topic) == set(our_topics["s1/s1"])
    assert per_topic[FLAT] == {
        "qid": FLAT,
        "kendall": None,
        "spearman": None,
        "pearson": None,
        "tauap_b": None,
    }, "a topic where every run ties is undefined: null, never a made-up number"
    assert ranking["per_topic"][-1]["qid"] == FLAT, "undefined topics come last"
    for qid, row in per_topic.items():
        if qid == FLAT:
            continue
        tx = [our_topics[n][qid] for n in names]
        ty = [their_topics[n][qid] for n in names]
        for name in ("kendall", "spearman", "pearson"):
            expected = scipy_value(name, tx, ty)
            if math.isnan(expected):
                assert row[name] is None, (qid, name)
            else:
                assert row[name] == pytest.approx(expected, abs=1e-12), (qid, name)


def test_the_api_and_the_page_show_the_same_meta_evaluation(api, client, world, django_user_model):
    qrels, _ = world
    _, data, _ = ours_and_theirs(api, qrels)
    client.force_login(user(django_user_model, "eng2", "engineer"))

    body = check(api, qrels, data, k=4).json()["ranking"]
    page = client.post(
        "/evaluation/leaderboard/check/",
        {"qrels": qrels.pk, "layout": "jsonl", "k": 4, "file": upload(data)},
    )

    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="check-ranking"' in html
    for c in body["coefficients"]:
        row = re.search(rf'<tr data-coefficient="{c["name"]}">(.*?)</tr>', html).group(1)
        cells = re.findall(r'<td class="num">([^<]*)</td>', row)
        assert cells == [
            f"{c['value']:.4f}",
            f"{c['low']:.4f}–{c['high']:.4f}",
            "—" if c["at_k"] is None else f"{c['at_k']:.4f}",
            "—" if c["low_k"] is None else f"{c['low_k']:.4f}–{c['high_k']:.4f}",
        ], c["name"]
    assert f"{len(body['swaps'])} pair" in html
    worst = body["per_topic"][0]
    assert re.search(
        rf'<tr data-qid="{worst["qid"]}">.*?<td class="num" data-coefficient="kendall">'
        rf"{worst['kendall']:.4f}</td>",
        html,
    )
    flat = re.search(rf'<tr data-qid="{FLAT}">(.*?)</tr>', html).group(1)
    assert flat.count(">—</td>") == 4, "undefined per-topic values show as an em dash"


def test_two_runs_in_both_give_no_ranking_but_the_check(api, world):
    qrels, _ = world
    _, _, theirs = ours_and_theirs(api, qrels)
    two = "".join(
        json.dumps(r) + "\n" for r in theirs if r["run_id"] in ("s1/s1", "s2/s2")
    ).encode()

    body = check(api, qrels, two).json()

    assert body["ranking"] is None and body["compared"] > 0


@pytest.mark.parametrize(
    ("extra", "data", "expected"),
    [
        ({"measure": "P@7"}, None, {"measure": ["P@7 is not a measure both leaderboards hold: "]}),
        ({"k": 9}, None, {"k": ["k is a whole number from 1 to the number of runs."]}),
        ({"k": 0}, None, {"k": ["Ensure this value is greater than or equal to 1."]}),
        ({"k": "three"}, None, {"k": ["A valid integer is required."]}),
        ({}, b"\xff\xfe\x00garbage", {"errors": ["theirs.jsonl:1: not UTF-8 text"], "total": 1}),
        ({}, b"", {"file": ["The submitted file is empty."]}),
        (
            {},
            b'{"run_id": "s1/s1", "topic_id": "1", "measure": "P_5", "value": "NaN"}\n',
            {"errors": ["theirs.jsonl:1: the value 'NaN' is not a finite number"], "total": 1},
        ),
        (
            {},
            b'{"run_id": "s1/s1", "topic_id": "1", "measure": "P_5", "value": 0.5}\n{',
            {"errors": ["theirs.jsonl:2: not JSON ("], "total": 1},
        ),
    ],
    ids=[
        "unknown-measure",
        "k-too-big",
        "k-zero",
        "k-not-a-number",
        "binary",
        "empty",
        "nan",
        "bad-json",
    ],
)
def test_bad_uploads_and_options_are_400s_saying_what_is_wrong(api, world, extra, data, expected):
    qrels, _ = world
    if data is None:
        _, data, _ = ours_and_theirs(api, qrels)

    response = check(api, qrels, data, **extra)

    assert response.status_code == 400, response.content
    body = response.json()
    assert body.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, list):
            assert len(body[key]) == len(value) and all(
                got.startswith(want) for got, want in zip(body[key], value, strict=True)
            ), body
        else:
            assert body[key] == value


def test_the_page_refuses_a_measure_not_in_both_and_a_k_above_the_runs(
    api, client, world, django_user_model
):
    qrels, _ = world
    _, data, _ = ours_and_theirs(api, qrels)
    client.force_login(user(django_user_model, "eng2", "engineer"))

    def post(**extra):
        return client.post(
            "/evaluation/leaderboard/check/",
            {"qrels": qrels.pk, "layout": "jsonl", "file": upload(data), **extra},
        )

    bad_measure, bad_k = post(measure="P@7"), post(k=9)

    assert bad_measure.status_code == 400
    assert "P@7 is not a measure both leaderboards hold: " in bad_measure.content.decode()
    assert bad_k.status_code == 400
    assert "k is a whole number from 1 to the number of runs." in bad_k.content.decode()
    assert 'data-testid="check-ranking"' not in bad_k.content.decode()
