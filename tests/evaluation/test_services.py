import gzip

import pytest

from evaluation import measures, services, trec
from evaluation.analysis import topk
from evaluation.models import Evaluation, ImmutableError, QrelsEntry, QrelsVersion, Run, System

QRELS = b"1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d4 3\n"
RUN = b"1 Q0 d1 1 3.0 tagA\n1 Q0 d2 2 2.0 tagA\n1 Q0 d9 3 1.0 tagA\n2 Q0 d4 1 5.5 tagA\n"

pytestmark = pytest.mark.django_db


def counts():
    return {
        model.__name__: model.objects.count()
        for model in (QrelsVersion, QrelsEntry, System, Run, Evaluation)
    }


def test_import_qrels_publishes_numbered_versions():
    first = services.import_qrels(source=QRELS, filename="a.qrels", name="dl19")
    second = services.import_qrels(source=QRELS, filename="a.qrels", name="dl19")
    assert (first.version, second.version) == (1, 2)
    assert first.topic_count == 2
    assert first.judgment_count == 4
    assert first.checksum == second.checksum
    assert services.find_qrels("dl19") == second
    assert services.find_qrels("dl19@1") == first
    for odd in ("²", "x", "99999999999999999999999"):  # a 404 or a command's error, never a crash
        with pytest.raises(QrelsVersion.DoesNotExist, match="the version must be a number"):
            services.find_qrels(f"dl19@{odd}")


def test_stored_qrels_round_trip_to_the_same_rows():
    qrels = services.import_qrels(source=gzip.compress(QRELS), filename="a.qrels.gz", name="x")
    frame = services.load_qrels_frame(qrels)
    assert frame.select("qid", "docno", "grade").rows() == [
        ("1", "d1", 2),
        ("1", "d2", 0),
        ("1", "d3", 1),
        ("2", "d4", 3),
    ]


def test_a_published_qrels_version_cannot_be_changed():
    qrels = services.import_qrels(source=QRELS, filename="a.qrels", name="x")
    qrels.description = "edited"
    with pytest.raises(ImmutableError, match="x v1 is published"):
        qrels.save()


def test_a_bad_qrels_file_stores_nothing_and_names_the_lines():
    before = counts()
    with pytest.raises(trec.TrecFormatError) as error:
        services.import_qrels(source=b"1 0 d1 2\n1 0 d2 high\n", filename="bad.qrels", name="x")
    assert "bad.qrels:2:" in str(error.value)
    assert counts() == before


def test_import_run_keeps_the_upload_a_columnar_artifact_and_its_top_lists(media_root):
    run = services.import_run(source=RUN, filename="bm25.run", system="bm25")
    assert (run.name, run.tag, run.line_count, run.topic_count) == ("bm25", "tagA", 4, 2)
    assert run.system.name == "bm25"
    assert run.original_file.read() == RUN
    frame = services.load_run_frame(run)
    assert frame.columns == ["qid", "docno", "score"]
    assert frame.rows() == [("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d9", 1.0), ("2", "d4", 5.5)]
    names = sorted(name.rsplit("/", 1)[1] for name in media_root())
    assert names == ["bm25.run", "ranking.parquet", "top.parquet"]
    assert run.top_depth == topk.STORED_DEPTH
    assert services.load_run_top(run, 2).rows() == [
        ("1", 1, "d1", 3.0),
        ("1", 2, "d2", 2.0),
        ("2", 1, "d4", 5.5),
    ]


def test_a_run_stored_before_top_lists_gets_them_once_from_its_artifact(media_root):
    run = services.import_run(source=RUN, filename="bm25.run", system="bm25")
    run.top_lists.delete(save=False)
    Run.objects.filter(pk=run.pk).update(top_lists="", top_depth=0)
    run.refresh_from_db()
    assert services.load_run_top(run, 1).rows() == [("1", 1, "d1", 3.0), ("2", 1, "d4", 5.5)]

    services.store_top_lists(run)

    run.refresh_from_db()
    assert run.top_depth == topk.STORED_DEPTH and run.top_lists.name.endswith("top.parquet")
    assert services.load_run_top(run, 1).rows() == [("1", 1, "d1", 3.0), ("2", 1, "d4", 5.5)]


def test_a_bad_run_file_stores_nothing(media_root):
    before = counts()
    with pytest.raises(trec.TrecFormatError) as error:
        services.import_run(source=RUN + b"2 Q0 d5 2 abc tagA\n", filename="bad.run", system="s")
    assert "bad.run:5: score 'abc'" in str(error.value)
    assert counts() == before
    assert media_root() == []


def test_the_same_file_uploaded_twice_is_recognised_by_checksum(media_root):
    first = services.import_run(source=RUN, filename="a.run", system="s")
    stored = media_root()
    with pytest.raises(services.ImportRejected, match="already uploaded as run s/a") as error:
        services.import_run(source=RUN, filename="copy.run", system="other")
    assert error.value.existing == first
    assert media_root() == stored
    assert not System.objects.filter(name="other").exists()


def test_a_run_name_is_unique_within_its_system(media_root):
    services.import_run(source=RUN, filename="a.run", system="s")
    with pytest.raises(services.ImportRejected, match="system s already has a run named 'a'"):
        services.import_run(source=RUN.replace(b"3.0", b"4.0"), filename="a.run", system="s")


def test_a_failure_while_saving_a_run_leaves_no_files_and_no_rows(media_root, monkeypatch):
    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Run, "save", fail)
    before = counts()
    with pytest.raises(OSError, match="disk full"):
        services.import_run(source=RUN, filename="a.run", system="new-system")
    assert counts() == before
    assert media_root() == []


def test_evaluate_run_stores_once_per_option_set(media_root, django_assert_max_num_queries):
    qrels = services.import_qrels(source=QRELS, filename="a.qrels", name="x")
    run = services.import_run(source=RUN, filename="a.run", system="s")
    first = services.evaluate_run(run=run, qrels=qrels, measure_specs=["ndcg_cut.10", "P.5"])
    # topic 1: d1 (2) d2 (0) d9 (unjudged); ideal 2, 1. topic 2: d4 (3) alone, ideal.
    ndcg1 = (2 / 1) / (2 / 1 + 1 / __import__("math").log2(3))
    assert first.per_topic["1"]["ndcg_cut_10"] == pytest.approx(ndcg1, abs=1e-12)
    assert first.per_topic["2"]["ndcg_cut_10"] == 1.0
    assert first.means["P_5"] == pytest.approx((1 / 5 + 1 / 5) / 2, abs=1e-15)
    with django_assert_max_num_queries(1):
        again = services.evaluate_run(run=run, qrels=qrels, measure_specs=["ndcg_cut.10", "P.5"])
    assert again.pk == first.pk
    other = services.evaluate_run(
        run=run,
        qrels=qrels,
        measure_specs=["ndcg_cut.10", "P.5"],
        options=measures.Options(gain="exp"),
    )
    assert other.pk != first.pk


def test_options_added_later_keep_the_keys_of_evaluations_stored_before_them():
    # The key as it was computed before judged_only and num_docs_in_coll existed.
    import hashlib
    import json

    before = json.dumps(
        {
            "engine": services.ENGINE_VERSION,
            "measures": ["map"],
            "options": {
                "complete": False,
                "depth": None,
                "gain": "linear",
                "relevance_level": 1,
                "trec_eval_version": 9,
            },
        },
        sort_keys=True,
    )
    assert (
        services.options_key(["map"], measures.Options())
        == hashlib.sha256(before.encode()).hexdigest()
    )
    judged = measures.Options(judged_only=True)
    assert services.options_key(["map"], judged) != services.options_key(
        ["map"], measures.Options()
    )
