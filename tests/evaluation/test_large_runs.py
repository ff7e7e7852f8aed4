"""Uploads of large runs are spooled to disk and converted, and long stored runs scored, in
chunks of whole topics (services.runs, services.scoring): the stored run and every number
must be those of the in-memory path. Thresholds are lowered so small files take that path."""

import gzip
import io

import polars as pl
import pytest
from django.core.files.base import File

from evaluation import measures, services, trec
from evaluation.models import Evaluation, Run
from evaluation.services import runs as run_services

from .trec_eval_data import generated_files

pytestmark = pytest.mark.django_db

OPTION_SETS = [
    (["all_trec"], measures.Options()),
    (["all_trec"], measures.Options(complete=True, trec_eval_version=10)),
    (["official", "nDCG@10"], measures.Options(complete=True, depth=7, relevance_level=2)),
]


class Upload(io.BytesIO):
    """An uploaded file as services see it: readable, with a size."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.size = len(data)


@pytest.fixture
def large(monkeypatch):
    """Make every upload and stored run "large", with chunks of a few lines."""
    calls = []

    def enable() -> None:
        monkeypatch.setattr(run_services, "LARGE_UPLOAD_BYTES", 0)
        monkeypatch.setattr(run_services, "LARGE_RUN_BYTES", 0)
        monkeypatch.setattr(run_services, "LARGE_RUN_LINES", 0)
        monkeypatch.setattr(run_services, "_BATCH_LINES", 3)
        read, regroup = trec.iter_run_topics, trec.regroup_topics

        def iterate(path, **options):
            calls.append("read")
            return read(path, **options, chunk_lines=5, piece_bytes=100)

        def regrouped(frames, **options):
            calls.append("score")
            return regroup(frames, chunk_lines=4)

        monkeypatch.setattr(trec, "iter_run_topics", iterate)
        monkeypatch.setattr(trec, "regroup_topics", regrouped)

    enable.calls = calls
    return enable


def stored(run: Run) -> tuple:
    with run.artifact.open("rb") as handle:
        frame = pl.read_parquet(handle)
    fields = (run.tag, run.line_count, run.topic_count, run.size_bytes, run.checksum)
    return fields, frame, run.original_file.read()


def import_and_score(seed: int, data: bytes, qrels) -> tuple:
    run = services.import_run(source=Upload(data), filename="r.run", system=f"s{seed}")
    result = stored(run)
    scores = []
    for specs, options in OPTION_SETS:
        evaluation = services.evaluate_run(
            run=run, qrels=qrels, measure_specs=specs, options=options
        )
        scores.append((evaluation.measures, evaluation.means, evaluation.per_topic))
    Evaluation.objects.filter(run=run).delete()
    run.delete()
    return result, scores


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("compress", [False, True])
def test_large_uploads_store_and_score_what_small_ones_do(media_root, large, seed, compress):
    qrels_text, run_text = generated_files(seed)
    qrels = services.import_qrels(source=qrels_text.encode(), filename="q", name=f"q{seed}")
    data = gzip.compress(run_text.encode()) if compress else run_text.encode()
    (fields, frame, original), scores = import_and_score(seed, data, qrels)
    large()
    (fields_, frame_, original_), scores_ = import_and_score(seed, data, qrels)
    assert "read" in large.calls and "score" in large.calls
    assert fields_ == fields
    assert frame_.equals(frame)
    assert original_ == original == data
    assert scores_ == scores


@pytest.mark.parametrize(
    "text",
    [
        b"1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n",  # an error
        b"1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n",  # a repeated pair
        b"1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n1 Q0 c 2 1.0 t\n" * 1,  # topic 1 comes back: fine
        b"\x1f\x8bnot gzip",
    ],
)
def test_large_uploads_are_refused_with_the_same_errors(media_root, large, text):
    def attempt():
        try:
            run = services.import_run(source=Upload(text), filename="r.run", system="s")
        except trec.TrecFormatError as error:
            return [str(e) for e in error.errors]
        result = stored(run)[:2]
        run.delete()
        return result

    small = attempt()
    large()
    assert attempt() == small if isinstance(small, list) else attempt()[0] == small[0]
    assert media_root() == [] or isinstance(small, tuple)


def test_a_large_upload_over_the_limit_is_refused_as_a_small_one_is(media_root, large):
    data = b"1 Q0 a 1 2.0 t\n" * 10
    with pytest.raises(trec.TrecFormatError) as small:
        services.import_run(source=Upload(data), filename="r.run", system="s", max_bytes=100)
    large()
    for source in (data, gzip.compress(data)):
        with pytest.raises(trec.TrecFormatError) as big:
            services.import_run(source=Upload(source), filename="r.run", system="s", max_bytes=100)
        assert [str(e) for e in big.value.errors] == [str(e) for e in small.value.errors]
    assert media_root() == []


def test_a_stored_run_read_in_batches_comes_back_in_whole_topics(media_root, large):
    large()
    text = b"".join(f"{q} Q0 d{i} {i} {9 - i} t\n".encode() for q in "5173" for i in range(3))
    run = services.import_run(source=Upload(text), filename="r.run", system="s")
    chunks = list(run_services.iter_run_chunks(run))
    topics = [c.get_column("qid").unique(maintain_order=True).to_list() for c in chunks]
    assert [qid for chunk in topics for qid in chunk] == ["5", "1", "7", "3"]
    assert pl.concat(chunks).equals(services.load_run_frame(run))


def test_a_django_file_is_spooled_a_piece_at_a_time(media_root, large, tmp_path):
    large()
    path = tmp_path / "r.run"
    path.write_bytes(b"1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n")
    with open(path, "rb") as handle:
        run = services.import_run(source=File(handle), filename="r.run", system="s")
    assert (run.line_count, run.topic_count, run.tag) == (2, 2, "t")
    assert run.original_file.read() == path.read_bytes()


def test_a_gzip_upload_of_any_size_is_spooled_to_disk_not_read_into_memory(media_root, monkeypatch):
    # A few megabytes of gzip can expand to hundreds: its text is read from a scratch file.
    spooled = []
    spool = run_services._spool

    def spy(*args, **kwargs):
        spooled.append(args[2])
        return spool(*args, **kwargs)

    monkeypatch.setattr(run_services, "_spool", spy)
    data = gzip.compress(b"1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n")
    run = services.import_run(source=Upload(data), filename="r.run.gz", system="s")
    assert spooled == ["r.run.gz"]
    assert (run.line_count, run.original_file.read()) == (2, data)
    services.import_run(source=Upload(b"1 Q0 a 1 3.0 t\n"), filename="plain.run", system="s")
    assert spooled == ["r.run.gz"], "a small plain upload is read in memory"
