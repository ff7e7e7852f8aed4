"""Named operations on qrels, runs and evaluations. Views, API endpoints, commands and tasks
translate their input and call these; the rules live here.

Imports are all-or-nothing: a file is parsed and validated completely before anything is
written, and if writing fails half-way the rows roll back and the stored files are deleted.
A process killed between writing a run's files and committing its row cannot delete them;
they sit in the run's own folder (runs/<sha256>/) with no row pointing at them, and
``sweep_orphan_run_files`` (run by ``manage.py recover_jobs``) deletes them.
"""

from __future__ import annotations

import functools
import hashlib
import io
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import IO

import numpy as np
import polars as pl
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone

from evaluation import measures, significance, topk, trec
from evaluation.measures import specs
from evaluation.models import Evaluation, QrelsEntry, QrelsSource, QrelsVersion, Run, System
from jobs.faults import pause_point
from jobs.services import walk_storage, written_before

# Bump when a change to evaluation/measures.py can change a number: cached evaluations are
# keyed on it and recomputed instead of served stale.
ENGINE_VERSION = "1"

# What dashboards score by default (issue "Evaluation dashboards", item 2).
DASHBOARD_MEASURES = ("ndcg_cut.1,3,5,10,20,100", "P.5,10", "map", "recip_rank", "judged.10")

MESSAGES = {
    "duplicate_run": "{filename}: this file was already uploaded as run {run} (same SHA-256).",
    "run_name_taken": "{filename}: system {system} already has a run named {name!r}.",
    "empty_name": "a name is required",
}


class ImportRejected(Exception):
    """An import refused for a reason that is not a line of the file (duplicate, name taken)."""

    def __init__(self, message: str, *, existing=None):
        super().__init__(message)
        self.existing = existing


def read_upload(source: IO[bytes] | bytes) -> bytes:
    if isinstance(source, bytes):
        return source
    if hasattr(source, "chunks"):  # Django UploadedFile: avoids one huge read() of a temp file
        return b"".join(source.chunks())
    return source.read()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- qrels -------------------------------------------------------------------------------


def qrels_to_trec_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    trec.write_qrels(frame, buffer)
    return buffer.getvalue()


def import_qrels(
    *,
    source: IO[bytes] | bytes,
    filename: str,
    name: str,
    description: str = "",
    user=None,
    max_bytes: int | None = None,
) -> QrelsVersion:
    """Validate a TREC qrels file and publish it as the next version of ``name``."""
    if not name:
        raise ImportRejected(MESSAGES["empty_name"])
    frame = trec.read_qrels(read_upload(source), name=filename, max_bytes=max_bytes)
    return store_qrels(
        frame=frame,
        name=name,
        description=description,
        source=QrelsSource.IMPORTED,
        filename=filename,
        user=user,
    )


def store_qrels(
    *,
    frame: pl.DataFrame,
    name: str,
    source: QrelsSource,
    description: str = "",
    filename: str = "",
    user=None,
) -> QrelsVersion:
    """Store valid (qid, docno, grade) rows as the next version of ``name``; the checksum
    is that of the canonical TREC export, so equal grades give equal checksums."""
    frame = frame.sort(["qid", "docno"])
    checksum = _sha256(qrels_to_trec_bytes(frame))
    with transaction.atomic():
        # Lock the name's versions so two imports of the same name get distinct numbers.
        latest = (
            QrelsVersion.objects.select_for_update()
            .filter(name=name)
            .order_by("-version")
            .values_list("version", flat=True)
            .first()
        )
        version = QrelsVersion.objects.create(
            name=name,
            version=(latest or 0) + 1,
            description=description,
            source=source,
            original_filename=filename,
            checksum=checksum,
            topic_count=frame["qid"].n_unique(),
            judgment_count=frame.height,
            created_by=user,
        )
        QrelsEntry.objects.bulk_create(
            (
                QrelsEntry(qrels=version, qid=qid, docno=docno, grade=grade)
                for qid, docno, grade in frame.select("qid", "docno", "grade").iter_rows()
            ),
            batch_size=5000,
        )
    return version


@dataclass(frozen=True)
class QrelsDiff:
    added: list[tuple[str, str, int]]
    removed: list[tuple[str, str, int]]
    changed: list[tuple[str, str, int, int]]  # qid, docno, old grade, new grade
    unchanged: int


def diff_qrels(old: QrelsVersion, new: QrelsVersion) -> QrelsDiff:
    """What changed from one qrels version to another, pair by pair."""
    before = {(q, d): g for q, d, g in old.entries.values_list("qid", "docno", "grade")}
    after = {(q, d): g for q, d, g in new.entries.values_list("qid", "docno", "grade")}
    changed = sorted(
        (q, d, before[q, d], g)
        for (q, d), g in after.items()
        if (q, d) in before and before[q, d] != g
    )
    return QrelsDiff(
        added=sorted((q, d, g) for (q, d), g in after.items() if (q, d) not in before),
        removed=sorted((q, d, g) for (q, d), g in before.items() if (q, d) not in after),
        changed=changed,
        unchanged=sum(1 for key, g in after.items() if before.get(key) == g),
    )


def load_qrels_frame(qrels: QrelsVersion) -> pl.DataFrame:
    rows = qrels.entries.order_by("qid", "docno").values_list("qid", "docno", "grade")
    return pl.DataFrame(
        list(rows),
        schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64},
        orient="row",
    )


def find_qrels(label: str) -> QrelsVersion:
    """``name`` (its latest version) or ``name@N``."""
    name, _, number = label.partition("@")
    versions = QrelsVersion.objects.filter(name=name)
    if number:
        if not number.isdigit():
            raise QrelsVersion.DoesNotExist(
                f"{label!r}: the version must be a number, e.g. {name}@2"
            )
        return versions.get(version=int(number))
    latest = versions.order_by("-version").first()
    if latest is None:
        raise QrelsVersion.DoesNotExist(f"no qrels named {name!r}")
    return latest


# --- runs --------------------------------------------------------------------------------


def import_run(
    *,
    source: IO[bytes] | bytes,
    filename: str,
    system: System | str,
    name: str = "",
    description: str = "",
    user=None,
    max_bytes: int | None = None,
    new_system: dict | None = None,
    notices: list | None = None,
) -> Run:
    """Validate a TREC run file and store it: the upload as given, plus a Parquet artifact.
    What the file holds that trec_eval accepts but its author may not mean (fields after the
    sixth, a rank that is not an integer) is appended to ``notices`` (trec.Notice), if given.
    A ``system`` given by name is created if new, with ``new_system``'s fields (description,
    tags), in the same transaction as the run, so a refused file leaves no system behind."""
    data = read_upload(source)
    checksum = _sha256(data)
    existing = Run.objects.filter(checksum=checksum).select_related("system").first()
    if existing is not None:
        raise ImportRejected(
            MESSAGES["duplicate_run"].format(filename=filename, run=existing), existing=existing
        )
    frame = trec.read_run(data, name=filename, max_bytes=max_bytes, notices=notices)
    name = name or _default_run_name(filename)
    artifact = io.BytesIO()
    frame.write_parquet(artifact, compression="zstd", statistics=False)

    stored: list[str] = []
    try:
        with transaction.atomic():
            if isinstance(system, str):
                system, _ = System.objects.get_or_create(
                    name=system, defaults={"created_by": user, **(new_system or {})}
                )
            if Run.objects.filter(system=system, name=name).exists():
                raise ImportRejected(
                    MESSAGES["run_name_taken"].format(filename=filename, system=system, name=name)
                )
            run = Run(
                system=system,
                name=name,
                description=description,
                tag=frame["tag"][-1],  # what trec_eval prints as the runid
                original_filename=filename,
                checksum=checksum,
                size_bytes=len(data),
                line_count=frame.height,
                topic_count=frame["qid"].n_unique(),
                uploaded_by=user,
            )
            run.original_file.save(_safe_filename(filename), ContentFile(data), save=False)
            stored.append(run.original_file.name)
            run.artifact.save("ranking.parquet", ContentFile(artifact.getvalue()), save=False)
            stored.append(run.artifact.name)
            run.save()
            pause_point("import_run.before_commit")
    except IntegrityError:
        _delete_files(stored)
        # Lost a race with an identical upload: report it like the check above would have.
        existing = Run.objects.filter(checksum=checksum).first()
        if existing is None:
            raise
        raise ImportRejected(
            MESSAGES["duplicate_run"].format(filename=filename, run=existing), existing=existing
        ) from None
    except BaseException:
        _delete_files(stored)
        raise
    return run


def _default_run_name(filename: str) -> str:
    base = filename.rsplit("/", 1)[-1]
    for suffix in (".gz", ".trec", ".run", ".txt", ".tsv"):
        base = base.removesuffix(suffix)
    return base or "run"


def _safe_filename(filename: str) -> str:
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:100] or "run.txt"


def _delete_files(names: list[str]) -> None:
    for name in names:
        default_storage.delete(name)


RUN_FILES = "runs"


def sweep_orphan_run_files(*, older_than: timedelta) -> list[str]:
    """Delete stored run files that no run points at, written more than ``older_than`` ago:
    what an import killed before its commit left (an import in progress writes its files
    moments before committing, so a few minutes' margin never touches one). Returns the
    names deleted."""
    cutoff = timezone.now() - older_than
    by_checksum: dict[str, list[str]] = {}
    for name in walk_storage(RUN_FILES):
        parts = name.split("/")  # runs/<first two hex digits>/<sha256>/<file>
        by_checksum.setdefault(parts[2] if len(parts) == 4 else "", []).append(name)
    kept = set()
    checksums = list(by_checksum)
    for at in range(0, len(checksums), 500):  # SQLite caps the parameters of one query
        for original, artifact in Run.objects.filter(
            checksum__in=checksums[at : at + 500]
        ).values_list("original_file", "artifact"):
            kept.update((original, artifact))
    deleted = []
    for names in by_checksum.values():
        for name in names:
            if name not in kept and written_before(name, cutoff):
                default_storage.delete(name)
                deleted.append(name)
    return sorted(deleted)


def load_run_frame(run: Run) -> pl.DataFrame:
    with run.artifact.open("rb") as handle:
        return pl.read_parquet(handle, columns=["qid", "docno", "score"])


def find_run(label: str) -> Run:
    """``system/run`` or a run name that is unique across systems."""
    runs = Run.objects.select_related("system")
    if "/" in label:
        system, _, name = label.partition("/")
        return runs.get(system__name=system, name=name)
    matches = list(runs.filter(name=label)[:2])
    if len(matches) != 1:
        raise Run.DoesNotExist(
            f"no run named {label!r}" if not matches else f"{label!r} is ambiguous: use system/run"
        )
    return matches[0]


# --- evaluations -------------------------------------------------------------------------


def options_key(measure_specs: list[str], options: measures.Options) -> str:
    return specs.options_key(measure_specs, options, ENGINE_VERSION)


def evaluate_run(
    *,
    run: Run,
    qrels: QrelsVersion,
    measure_specs: list[str],
    options: measures.Options | None = None,
) -> Evaluation:
    """Score ``run`` against ``qrels``, or return the stored evaluation for the same inputs."""
    options = options or measures.Options()
    key = options_key(measure_specs, options)
    stored = Evaluation.objects.filter(run=run, qrels=qrels, options_key=key).first()
    if stored is not None:
        return stored
    started = time.perf_counter()
    result = measures.evaluate(load_qrels_frame(qrels), load_run_frame(run), measure_specs, options)
    per_topic = {
        row["qid"]: {name: row[name] for name in result.measures}
        for row in result.per_topic.iter_rows(named=True)
    }
    try:
        with transaction.atomic():
            return Evaluation.objects.create(
                run=run,
                qrels=qrels,
                options_key=key,
                options={"measures": measure_specs, **asdict(options)},
                measures=result.measures,
                means=result.means,
                per_topic=per_topic,
                topic_count=result.per_topic.height,
                seconds=time.perf_counter() - started,
            )
    except IntegrityError:
        # Someone scored the same inputs meanwhile; theirs is the same numbers.
        return Evaluation.objects.get(run=run, qrels=qrels, options_key=key)


# --- dashboards (issue "Evaluation dashboards") -------------------------------------------
# Leaderboards show each measure's mean with a 95% percentile bootstrap interval over topics.
# Intervals are computed once per evaluation and kept on its row; every row uses the same
# settings and seed, and topics in byte order, so the same evaluation always gets the same
# interval on SQLite and PostgreSQL (jsonb does not keep key order), on every page and in
# the API.

INTERVAL_LEVEL = 0.95
INTERVAL_RESAMPLES = 1000
INTERVAL_SEED = 0


def mean_measures(evaluation: Evaluation) -> list[str]:
    """The evaluation's measures whose mean is the mean over topics (what intervals and
    comparisons are computed for), in its order."""
    return [name for name in evaluation.measures if measures.is_mean(name)]


def topic_matrix(per_topic: dict, names: list[str]) -> tuple[list[str], np.ndarray]:
    """From an evaluation's ``per_topic``: its qids in byte order and a names × topics array."""
    qids = sorted(per_topic)
    matrix = np.array([[per_topic[qid][name] for qid in qids] for name in names], dtype=float)
    return qids, matrix.reshape(len(names), len(qids))


def ensure_intervals(evaluations: list[Evaluation]) -> None:
    """Fill ``intervals`` on the evaluations that lack them, with one vectorised bootstrap
    per topic count (significance.bootstrap_mean_interval on measures × topics), and save
    them. Reads the per-topic values of those evaluations only (one query)."""
    missing = [e for e in evaluations if not e.intervals and e.topic_count and mean_measures(e)]
    if not missing:
        return
    deferred = [e.pk for e in missing if "per_topic" in e.get_deferred_fields()]
    loaded = dict(Evaluation.objects.filter(pk__in=deferred).values_list("pk", "per_topic"))
    groups: dict[int, list[tuple[Evaluation, list[str], np.ndarray]]] = {}
    for evaluation in missing:
        per_topic = loaded.get(evaluation.pk)
        if per_topic is None:
            per_topic = evaluation.per_topic
        names = mean_measures(evaluation)
        qids, matrix = topic_matrix(per_topic, names)
        groups.setdefault(len(qids), []).append((evaluation, names, matrix))
    for rows in groups.values():
        # Rows of equal topic count draw the same resamples, so one call for all of them
        # gives each row the interval it would get alone.
        lows, highs = significance.bootstrap_mean_interval(
            np.vstack([matrix for _, _, matrix in rows]),
            resamples=INTERVAL_RESAMPLES,
            level=INTERVAL_LEVEL,
            seed=INTERVAL_SEED,
        )
        at = 0
        for evaluation, names, _ in rows:
            evaluation.intervals = {
                name: [float(lows[at + i]), float(highs[at + i])] for i, name in enumerate(names)
            }
            at += len(names)
    Evaluation.objects.bulk_update(missing, ["intervals"])


def score_run(
    *,
    run: Run,
    qrels: QrelsVersion,
    measure_specs: list[str],
    options: measures.Options | None = None,
) -> Evaluation:
    """``evaluate_run`` plus the evaluation's bootstrap intervals: what dashboards show."""
    evaluation = evaluate_run(run=run, qrels=qrels, measure_specs=measure_specs, options=options)
    ensure_intervals([evaluation])
    return evaluation


@functools.lru_cache(maxsize=4)
def _qrels_frame(pk: int, checksum: str) -> pl.DataFrame:
    return load_qrels_frame(QrelsVersion(pk=pk))


def cached_qrels_frame(qrels: QrelsVersion) -> pl.DataFrame:
    """``load_qrels_frame``, kept for the last few versions: qrels never change once
    published, and the dashboards read the same version on every page."""
    return _qrels_frame(qrels.pk, qrels.checksum)


def load_run_topics(run: Run, qids: list[str]) -> pl.DataFrame:
    """The run's (qid, docno, score) lines of these topics only: the Parquet artifact is
    scanned with the filter pushed down, not read whole."""
    try:
        source = run.artifact.path  # local storage: let polars read only what it needs
    except NotImplementedError:  # object storage: no local path
        with run.artifact.open("rb") as handle:
            source = io.BytesIO(handle.read())
    return (
        pl.scan_parquet(source)
        .filter(pl.col("qid").is_in(qids))
        .select("qid", "docno", "score")
        .collect()
    )


def unjudged_top_k(
    *,
    runs: list[Run],
    qrels: QrelsVersion,
    k: int,
    options: measures.Options,
    qids: list[str] | None = None,
) -> list[tuple[str, str]]:
    """The (qid, docno) pairs in the runs' top k (trec_eval's order) that ``qrels`` does not
    judge, over ``qids`` or every topic of the runs; sorted, each once."""
    judged = cached_qrels_frame(qrels)
    pairs: set[tuple[str, str]] = set()
    for run in runs:
        frame = load_run_frame(run) if qids is None else load_run_topics(run, qids)
        top = topk.top_k(frame, k, trec_eval_version=options.trec_eval_version, depth=options.depth)
        pairs.update(topk.unjudged_pairs(topk.with_grades(top, judged)))
    return sorted(pairs)


@dataclass(frozen=True)
class SentToJudging:
    """What ``send_unjudged_to_judging`` did: pairs added to the pool, pairs it already had,
    and the topics left out because the campaign does not have them."""

    added: int
    already: int
    assigned: int
    missing_qids: list[str]
    left_out: int


def send_unjudged_to_judging(*, campaign, pairs: list[tuple[str, str]]) -> SentToJudging:
    """Add unjudged (qid, docno) pairs to a campaign's pool (annotation.services.add_pairs,
    source "unjudged"). Pairs of topics the campaign does not have are left out and their
    qids reported: a pool pair needs the campaign's topic."""
    from annotation import services as annotation  # annotation imports evaluation
    from annotation.models import PairSource

    topics = set(campaign.topics.values_list("qid", flat=True))
    kept = [(qid, docno) for qid, docno in pairs if qid in topics]
    missing = sorted({qid for qid, _ in pairs if qid not in topics})
    if not kept:
        return SentToJudging(0, 0, 0, missing, len(pairs))
    change = annotation.add_pairs(campaign=campaign, pairs=kept, source=PairSource.UNJUDGED)
    return SentToJudging(
        added=change.added,
        already=change.already,
        assigned=change.assigned,
        missing_qids=missing,
        left_out=len(pairs) - len(kept),
    )
