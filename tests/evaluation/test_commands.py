import contextlib
import csv
import io
import json

import pytest
import pytrec_eval
from django.core.management import CommandError, call_command

from evaluation.models import Evaluation, QrelsVersion, Run

QRELS = "1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d4 3\n2 0 d5 1\n3 0 d6 1\n"
RUN = "1 Q0 d1 1 3.0 mytag\n1 Q0 d2 2 2.0 mytag\n1 Q0 d9 3 1.0 mytag\n2 Q0 d5 1 5.5 mytag\n2 Q0 d4 2 5.0 mytag\n"
QRELS_MAP = {"1": {"d1": 2, "d2": 0, "d3": 1}, "2": {"d4": 3, "d5": 1}, "3": {"d6": 1}}
RUN_MAP = {"1": {"d1": 3.0, "d2": 2.0, "d9": 1.0}, "2": {"d5": 5.5, "d4": 5.0}}


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "test.qrels"
    run = tmp_path / "test.run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


def evaluate(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        call_command("evaluate", *map(str, args))
    return out.getvalue()


def oracle(measure: str, key: str) -> dict[str, float]:
    return {
        qid: values[key]
        for qid, values in pytrec_eval.RelevanceEvaluator(QRELS_MAP, {measure})
        .evaluate(RUN_MAP)
        .items()
    }


def test_evaluate_files_prints_trec_eval_layout(files):
    qrels, run = files
    out = evaluate(qrels, run, "-q", "-m", "ndcg_cut.10")
    per_topic = oracle("ndcg_cut.10", "ndcg_cut_10")
    mean = sum(per_topic.values()) / len(per_topic)
    assert out == (
        f"ndcg_cut_10           \t1\t{per_topic['1']:6.4f}\n"
        f"ndcg_cut_10           \t2\t{per_topic['2']:6.4f}\n"
        f"ndcg_cut_10           \tall\t{mean:6.4f}\n"
    )


def test_evaluate_files_touches_no_database(files):
    # No django_db mark: pytest-django fails any database access in this test.
    qrels, run = files
    assert evaluate(qrels, run, "-m", "map").startswith("map ")


def test_evaluate_complete_counts_topics_missing_from_the_run(files):
    qrels, run = files
    per_topic = oracle("P.5", "P_5")
    out = evaluate(qrels, run, "-c", "-m", "P.5")
    assert out == f"P_5                   \tall\t{sum(per_topic.values()) / 3:6.4f}\n"


def test_evaluate_json_and_csv_carry_the_unrounded_values(files):
    qrels, run = files
    per_topic = oracle("map", "map")
    document = json.loads(evaluate(qrels, run, "-q", "-m", "map", "--format", "json"))
    assert document["runid"] == "mytag"
    assert document["per_topic"]["1"]["map"] == pytest.approx(per_topic["1"], abs=1e-12)
    assert document["all"]["map"] == pytest.approx(sum(per_topic.values()) / 2, abs=1e-12)
    rows = list(csv.reader(io.StringIO(evaluate(qrels, run, "-q", "-m", "map", "--format", "csv"))))
    assert rows[0] == ["qid", "map"]
    assert [row[0] for row in rows[1:]] == ["1", "2", "all"]
    assert float(rows[1][1]) == pytest.approx(per_topic["1"], abs=1e-12)


def test_evaluate_reports_the_bad_line_of_a_file(tmp_path, files):
    qrels, _ = files
    bad = tmp_path / "bad.run"
    bad.write_text(RUN + "2 Q0 d7 3 NaN mytag\n")
    with pytest.raises(CommandError, match=r"bad\.run:6: score 'NaN'"):
        evaluate(qrels, bad)


def test_evaluate_rejects_an_unknown_measure(files):
    qrels, run = files
    with pytest.raises(CommandError, match="ndgc"):
        evaluate(qrels, run, "-m", "ndgc_cut.10")


@pytest.mark.django_db
def test_evaluate_names_what_it_could_not_find(files):
    _, run = files
    with pytest.raises(CommandError, match="nosuch: not a file, and no qrels named 'nosuch'"):
        evaluate("nosuch", run)
    qrels, _ = files
    # A mistyped path reads as system/run: both readings are named, never Django's own words.
    with pytest.raises(
        CommandError,
        match=r"^runs/bm25\.txt: not a file, and no run 'bm25\.txt' in system 'runs'$",
    ):
        evaluate(qrels, "runs/bm25.txt")


@pytest.mark.django_db
def test_import_evaluate_and_export_stored_data(files, tmp_path, media_root):
    qrels, run = files
    call_command("import_qrels", str(qrels), "--name", "dl", stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_run", str(run), "--system", "bm25", stdout=out)
    assert "Imported bm25/test: 2 topics, 5 lines." in out.getvalue()

    from_files = evaluate(qrels, run, "-q", "-m", "ndcg_cut.5,10", "-m", "P.5")
    assert evaluate("dl", "bm25/test", "-q", "-m", "ndcg_cut.5,10", "-m", "P.5") == from_files

    evaluate("dl@1", "test", "-m", "map", "--save")
    assert Evaluation.objects.get().means["map"] == pytest.approx(
        sum(oracle("map", "map").values()) / 2, abs=1e-12
    )

    exported = tmp_path / "out.qrels"
    call_command("export_qrels", "dl", "-o", str(exported), stderr=io.StringIO())
    assert sorted(exported.read_text().split("\n")) == sorted(QRELS.split("\n"))


@pytest.mark.django_db
def test_import_run_lists_every_error_and_imports_nothing(tmp_path, media_root):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 1.0 t\n1 Q0 d1 2 0.5 t\n1 Q0 d2 3 x t\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 files were not imported"):
        call_command("import_run", str(bad), "--system", "s", stderr=err)
    assert "bad.run:2: docno 'd1' already appears for topic '1' on line 1" in err.getvalue()
    assert "bad.run:3: score 'x' is not a number" in err.getvalue()
    assert Run.objects.count() == 0
    assert media_root() == []


@pytest.mark.django_db
def test_import_run_accepts_what_trec_eval_accepts_and_says_so(tmp_path, media_root):
    run = tmp_path / "odd.run"
    run.write_text("1 Q0 d1 first 1.0 t reserved\n1 Q0 d2 2 0.5 t\n")
    out, err = io.StringIO(), io.StringIO()
    call_command("import_run", str(run), "--system", "s", stdout=out, stderr=err)
    assert Run.objects.get().line_count == 2
    assert "notice: odd.run: 1 line has more than 6 fields" in err.getvalue()
    assert "notice: odd.run: 1 line has a rank that is not an integer" in err.getvalue()


@pytest.mark.django_db
def test_import_qrels_refuses_a_missing_file():
    with pytest.raises(CommandError, match=r"nope\.qrels: no such file"):
        call_command("import_qrels", "nope.qrels", "--name", "x")
    assert QrelsVersion.objects.count() == 0
