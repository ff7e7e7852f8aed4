"""A campaign's inputs from files and stored runs: importing topics, documents and pairs,
and pooling stored runs (DESIGN.md, "Work that takes time").

Each function validates everything first and then stores it, raising
:class:`~evaluation.trec.TrecFormatError` (file:line problems) or ``ValidationError`` (a
refusal that is no line of the file), so nothing is stored on failure. The management
commands and the demo call these directly; annotation.tasks runs them as background jobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import formats
from annotation.models import Campaign, Document, PairSource, Topic
from annotation.services import ordering
from annotation.services.campaigns import PoolChange, add_pairs_in_batches, pool_from_runs
from annotation.services.common import topics_check
from evaluation.models import Run
from evaluation.services import load_run_frame
from jobs.models import Job
from jobs.services import Progress, drop_staged, stage_upload, start_job
from jobs.services.limits import sync_write_limit

BATCH = 2000

MESSAGES = {
    "no_topics": "The campaign has no topics yet: import topics before building its pool.",
    "no_shared_topics": (
        "None of the runs' topics are in this campaign (the runs have {run_qids}; "
        "the campaign has {campaign_qids})."
    ),
}


@dataclass(frozen=True)
class ImportCounts:
    noun: str  # "topic" or "document"
    created: int
    updated: int
    unchanged: int

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    @property
    def summary(self) -> str:
        plural = "" if self.total == 1 else "s"
        return (
            f"Imported {self.total:,} {self.noun}{plural}: {self.created:,} new, "
            f"{self.updated:,} updated, {self.unchanged:,} unchanged."
        )


def count_of(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def pool_summary(change: PoolChange) -> str:
    return (
        f"Added {count_of(change.added, 'pair')} to the pool ({change.already:,} already in "
        f"it; {count_of(change.new_documents, 'new document')} without text yet); "
        f"{count_of(change.assigned, 'assignment')} made."
    )


def step(progress: Progress | None, text: str, done: int, total: int | None = None) -> None:
    if progress is not None:
        progress.step(text, done=done, total=total)


# --- the work --------------------------------------------------------------------------------


def import_topics(
    *,
    campaign: Campaign,
    source,
    filename: str,
    fmt: str | None = None,
    max_bytes: int | None = None,
    progress: Progress | None = None,
) -> ImportCounts:
    """Add the file's topics to the campaign; a qid already there gets the file's query,
    description and narrative. All or nothing."""
    step(progress, f"Reading {filename}", done=0, total=3)
    records = formats.read_topics(source, name=filename, fmt=fmt, max_bytes=max_bytes)
    step(progress, f"Storing {len(records):,} topics", done=1)
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        existing = {topic.qid: topic for topic in campaign.topics.all()}
        new, changed = [], []
        for record in records:
            topic = existing.get(record.qid)
            if topic is None:
                new.append(
                    Topic(
                        campaign=campaign,
                        qid=record.qid,
                        query=record.query,
                        description=record.description,
                        narrative=record.narrative,
                    )
                )
            elif (topic.query, topic.description, topic.narrative) != record[1:4]:
                topic.query, topic.description, topic.narrative = record[1:4]
                changed.append(topic)
        Topic.objects.bulk_create(new, batch_size=BATCH)
        Topic.objects.bulk_update(changed, ["query", "description", "narrative"], batch_size=BATCH)
    return ImportCounts("topic", len(new), len(changed), len(records) - len(new) - len(changed))


def import_documents(
    *,
    campaign: Campaign,
    source,
    filename: str,
    fmt: str | None = None,
    max_bytes: int | None = None,
    progress: Progress | None = None,
) -> ImportCounts:
    """Add the file's documents to the campaign; a docno already there (for instance a
    placeholder pooling created) gets the file's title, text and url. A bad file stores
    nothing; a good one is stored SYNC_WRITE_ROWS documents per transaction, so that a large
    file does not keep every other writer waiting (a batch stored before a crash is
    "unchanged" when the job is tried again)."""
    step(progress, f"Reading {filename}", done=0, total=3)
    records = formats.read_documents(source, name=filename, fmt=fmt, max_bytes=max_bytes)
    step(progress, f"Storing {len(records):,} documents", done=1)
    new = changed = unchanged = 0
    batch = sync_write_limit()
    for start in range(0, len(records), batch):
        counts = _store_documents(campaign, records[start : start + batch])
        new, changed, unchanged = new + counts[0], changed + counts[1], unchanged + counts[2]
        stored = min(start + batch, len(records))
        step(progress, f"Stored {stored:,} of {len(records):,} documents", done=1)
    return ImportCounts("document", new, changed, unchanged)


def _store_documents(campaign: Campaign, records) -> tuple[int, int, int]:
    """Store checked document records in one transaction: (new, changed, unchanged)."""
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        new, changed, unchanged, fresh = [], [], 0, []
        for start in range(0, len(records), BATCH):
            chunk = {r.docno: r for r in records[start : start + BATCH]}
            found = campaign.documents.filter(docno__in=list(chunk))
            for document in found:
                record = chunk.pop(document.docno)
                if (document.title, document.text, document.url) == record[1:4]:
                    unchanged += 1
                    continue
                document.title, document.text, document.url = record[1:4]
                changed.append(document)
            fresh.extend(chunk.values())
        for record in fresh:
            new.append(
                Document(
                    campaign=campaign,
                    docno=record.docno,
                    title=record.title,
                    text=record.text,
                    url=record.url,
                )
            )
        Document.objects.bulk_create(new, batch_size=BATCH)
        Document.objects.bulk_update(changed, ["title", "text", "url"], batch_size=BATCH)
    return len(new), len(changed), unchanged


def import_pairs(
    *,
    campaign: Campaign,
    source,
    filename: str,
    max_bytes: int | None = None,
    progress: Progress | None = None,
) -> PoolChange:
    """Add the file's (qid, docno) pairs to the pool and assign them. Every qid must be a
    topic of the campaign (reported with its lines, among the file's other problems); docnos without a document get a
    placeholder to fill by a documents import. A bad file stores nothing; a good one is
    stored SYNC_WRITE_ROWS pairs per transaction (add_pairs_in_batches), so that a
    large file does not keep every other writer waiting."""
    step(progress, f"Reading {filename}", done=0, total=3)
    records = formats.read_pairs(
        source, name=filename, max_bytes=max_bytes, check=topics_check(campaign)
    )
    step(progress, f"Adding {len(records):,} pairs and assigning them", done=1)

    def on_batch(done: int, total: int) -> None:
        step(progress, f"Added and assigned {done:,} of {total:,} pairs", done=1)

    return add_pairs_in_batches(
        campaign=campaign,
        pairs=[(r.qid, r.docno) for r in records],
        source=PairSource.IMPORTED,
        batch=sync_write_limit(),
        on_batch=on_batch,
    )


def pool_stored_runs(
    *, campaign: Campaign, runs: Sequence[Run], depth: int, progress: Progress | None = None
) -> PoolChange:
    """Depth-k pooling of stored runs over the campaign's topics, then assignment. Refused
    (ValidationError) when the campaign has no topics or shares none with the runs."""
    if not runs:
        raise ValueError("pooling needs at least one run")
    total = len(runs) + 2
    qids = set(campaign.topics.values_list("qid", flat=True))
    if not qids:
        raise ValidationError(MESSAGES["no_topics"])
    frames = []
    for index, run in enumerate(runs):
        step(progress, f"Reading run {run}", done=index, total=total)
        frames.append(load_run_frame(run))
    run_qids = set().union(*(set(frame["qid"].unique().to_list()) for frame in frames))
    if not qids & run_qids:
        raise ValidationError(
            MESSAGES["no_shared_topics"].format(
                run_qids=_some(run_qids) or "no topics", campaign_qids=_some(qids)
            )
        )
    step(progress, f"Pooling at depth {depth} and assigning the pairs", done=len(runs))
    change = pool_from_runs(
        campaign=campaign,
        run_frames=frames,
        depth=depth,
        runs=list(runs),
        batch=sync_write_limit(),
    )
    ordering.reorder_pool(campaign=campaign)  # the adaptive strategies now know the runs
    return change


def _some(values: set[str], shown: int = 5) -> str:
    ordered = sorted(values, key=lambda v: (len(v), v))
    text = ", ".join(ordered[:shown])
    return text + (f" and {len(ordered) - shown:,} more" if len(ordered) > shown else "")


def start_import_job(*, campaign: Campaign, upload, user, what: str, task, **params) -> Job:
    """Stage an uploaded file and start the job that imports it (web form and API alike)."""
    staged = stage_upload(upload, prefix=f"campaign-{campaign.pk}/{what}")
    try:
        return start_job(
            kind=f"annotation.import_{what}",
            title=f"Import {what} into {campaign.name}",
            user=user,
            task=task,
            campaign_id=campaign.pk,
            staged=staged,
            filename=upload.name,
            **params,
        )
    except BaseException:
        # The job never started, so nothing else will delete the staged file.
        drop_staged(staged)
        raise
