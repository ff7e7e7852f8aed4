"""The leaderboard's downloads in the ecosystem's layouts and the "check a leaderboard"
page (evaluation/views_leaderboards.py): a download checked against itself is all the same,
a changed value is found, a bad file is refused line by line, and judges see none of it."""

import io
import json
import zipfile

import pytest

from evaluation.models import Evaluation
from evaluation.trec import leaderboards as formats
from tests.evaluation.dashboard_data import BM25, small_world, user
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


def download(client, qrels, layout) -> str:
    response = client.get(f"/evaluation/leaderboard/download/?qrels={qrels.pk}&layout={layout}")
    assert response.status_code == 200, response.content
    assert "attachment" in response["Content-Disposition"]
    return response.content.decode()


def check(client, qrels, data: bytes, layout: str, name="theirs.txt"):
    upload = io.BytesIO(data)
    upload.name = name
    return client.post(
        "/evaluation/leaderboard/check/", {"qrels": qrels.pk, "layout": layout, "file": upload}
    )


@pytest.mark.parametrize("layout", formats.LAYOUTS)
def test_every_layout_holds_every_topic_and_all_and_checks_as_the_same(as_engineer, world, layout):
    qrels, bm25, _ = world
    text = download(as_engineer, qrels, layout)
    entries = formats.read_leaderboard(text.encode(), layout)
    bm25_eval = Evaluation.objects.get(run=bm25)
    mine = {(e.topic, e.measure): e.value for e in entries if e.run == "bm25/bm25"}
    assert mine[("all", "ndcg_cut_10")] == pytest.approx(bm25_eval.means["ndcg_cut_10"], abs=5e-5)
    assert mine[("3", "P_5")] == pytest.approx(bm25_eval.per_topic["3"]["P_5"], abs=5e-5)

    html = check(as_engineer, qrels, text.encode(), layout).content.decode()

    assert 'data-testid="check-result"' in html
    assert f"<strong>{len(entries)} / {len(entries)}</strong><span>values the same" in html


def test_the_trec_eval_zip_holds_one_file_per_run_each_read_as_one_run(as_engineer, world):
    """The layout trec_eval-based tools read (autojudge-evaluate refuses a file of several
    runs): each file checks as the same against ours."""
    qrels, _, _ = world
    response = as_engineer.get(
        f"/evaluation/leaderboard/download/?qrels={qrels.pk}&layout=trec_eval_zip"
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].endswith('-trec_eval_zip.zip"')
    whole = formats.read_leaderboard(
        download(as_engineer, qrels, "trec_eval").encode(), "trec_eval"
    )
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert sorted(archive.namelist()) == ["bm25_bm25.txt", "dense_dense.txt"]
        for name in archive.namelist():
            data = archive.read(name)
            entries = formats.read_leaderboard(data, "trec_eval", filename=name)
            assert {e.run for e in entries} == {name[:-4].replace("_", "/")}
            assert set(entries) <= set(whole)
            html = check(as_engineer, qrels, data, "trec_eval", name=name).content.decode()
            assert f"<strong>{len(entries)} / {len(entries)}</strong><span>values the same" in html


def test_a_changed_value_is_found_and_names_are_matched(as_engineer, world):
    qrels, _, _ = world
    rows = [
        json.loads(line)
        for line in download(as_engineer, qrels, "jsonl").splitlines()
        if json.loads(line)["run_id"] == "bm25/bm25"
    ]
    theirs = (
        "".join(
            f"bm25 {r['topic_id']} {'nDCG@10' if r['measure'] == 'ndcg_cut_10' else r['measure']} "
            f"{r['value'] + (0.01 if (r['topic_id'], r['measure']) == ('1', 'ndcg_cut_10') else 0)}\n"
            for r in rows
        )
        + "bm25 1 madeup 0.5\n"
    )

    html = check(as_engineer, qrels, theirs.encode(), "ir_measures").content.decode()

    assert f"<strong>{len(rows) - 1} / {len(rows)}</strong><span>values the same" in html
    assert "<td>bm25/bm25</td><td>1</td><td>ndcg_cut_10</td>" in html
    assert "+0.0100" in html
    assert "<code>madeup</code>" in html


def test_a_bad_file_is_refused_with_every_bad_line(as_engineer, world):
    qrels, _, _ = world

    response = check(as_engineer, qrels, b"bm25 P_5 1 0.2\nbm25 P_5 1\nbm25 P_5 2 x\n", "tot")

    assert response.status_code == 400
    html = response.content.decode()
    assert "theirs.txt:2: expected 4 fields" in html and "theirs.txt:3: the value" in html
    assert "2 problems" in html


def test_missing_file_or_layout_is_a_400_saying_so(as_engineer, world):
    qrels, _, _ = world

    no_layout = check(as_engineer, qrels, b"x", "csv")
    no_file = as_engineer.post(
        "/evaluation/leaderboard/check/", {"qrels": qrels.pk, "layout": "tot"}
    )
    bad_download = as_engineer.get(f"/evaluation/leaderboard/download/?qrels={qrels.pk}&layout=csv")

    assert no_layout.status_code == 400 and "Choose a layout" in no_layout.content.decode()
    assert no_file.status_code == 400 and "Choose a file." in no_file.content.decode()
    assert bad_download.status_code == 400


def test_the_leaderboard_links_the_downloads_and_the_check(as_engineer, world):
    qrels, _, _ = world

    html = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}").content.decode()

    for layout in formats.LAYOUTS:
        assert f'data-testid="download-{layout}"' in html
    assert "/evaluation/leaderboard/check/" in html


def test_judges_get_403_and_methods_are_checked(client, django_user_model, world):
    qrels, _, _ = world
    client.force_login(user(django_user_model, "ann", "judge"))
    assert (
        client.get(f"/evaluation/leaderboard/download/?qrels={qrels.pk}&layout=tot").status_code
        == 403
    )
    assert client.get("/evaluation/leaderboard/check/").status_code == 403
    client.force_login(user(django_user_model, "eng", "engineer"))
    assert client.post("/evaluation/leaderboard/download/?layout=tot").status_code == 405
    assert client.put("/evaluation/leaderboard/check/").status_code == 405


def test_a_checked_leaderboards_ranking_is_meta_evaluated_against_ours(as_engineer, world):
    """Issue 17 part 4 on the check page: their ranking of the runs by nDCG@10 against ours,
    with evaluation.analysis.ranking_agreement's coefficients and the pairs that swap."""
    from evaluation import services
    from evaluation.analysis import ranking_agreement
    from evaluation.dashboards import make_scoring

    qrels, _, _ = world
    third = services.import_run(
        source=BM25.replace(b"bm25", b"third"), filename="third.run", system="third"
    )
    scoring = make_scoring(qrels=qrels)
    services.score_run(
        run=third, qrels=qrels, measure_specs=list(scoring.specs), options=scoring.options
    )
    ours = [json.loads(line) for line in download(as_engineer, qrels, "jsonl").splitlines()]
    # Theirs: the dense run's values halved, so it falls below the two others.
    theirs = [
        {**r, "value": r["value"] / 2 if r["run_id"] == "dense/dense" else r["value"]} for r in ours
    ]
    text = "".join(json.dumps(r) + "\n" for r in theirs)

    html = check(as_engineer, qrels, text.encode(), "jsonl", name="theirs.jsonl").content.decode()

    assert 'data-testid="check-ranking"' in html
    ours_all = {
        r["run_id"]: r["value"]
        for r in ours
        if r["topic_id"] == "all" and r["measure"] == "ndcg_cut_10"
    }
    theirs_all = {
        r["run_id"]: r["value"]
        for r in theirs
        if r["topic_id"] == "all" and r["measure"] == "ndcg_cut_10"
    }
    kendall = ranking_agreement.coefficient("kendall", ours_all, theirs_all)
    assert (
        f'<tr data-coefficient="kendall"><th scope="row">Kendall&#x27;s tau-b</th><td class="num">{kendall:.4f}</td>'
        in html
    )
    swaps = ranking_agreement.swapped_pairs(ours_all, theirs_all)
    assert f"{len(swaps)} pair" in html
