"""A query set becomes a run: a campaign's or a qrels version's topics asked of a search
endpoint to depth k (a job: evaluation.tasks.search_run_task), the answers stored as a run
through the upload's path with their provenance (SearchRun). Configuring and testing an
endpoint is evaluation/services/search.py."""

from __future__ import annotations

import gzip
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from accounts.services.teams import holds
from common.ids import parse_id
from evaluation import search
from evaluation.access import READERS, readable_qrels
from evaluation.judging import TopicText, judging
from evaluation.models import QrelsEntry, QrelsVersion, SearchEndpoint, SearchRun
from evaluation.services.common import ImportRejected
from evaluation.services.runs import import_run
from evaluation.services.search import MESSAGES, client_for, invalid, snapshot


def check_k(k) -> int:
    try:
        return search.check_k(k)
    except ValueError:
        raise invalid("k", high=search.MAX_K) from None


def query_set_choices(user) -> dict:
    """The query sets ``user`` may run: campaigns they lead, qrels versions they read."""
    return {
        "campaigns": list(
            judging().campaigns_led_by(user).order_by("name").values_list("pk", "name")
        ),
        "qrels": [(q.pk, q.label) for q in readable_qrels(user, QrelsVersion.objects.all())],
    }


@dataclass(frozen=True)
class QuerySet:
    label: str
    topics: list[TopicText]
    missing: list[str]  # qids whose text the user cannot read (recorded as failed)


def load_query_set(*, user, campaign=None, qrels=None) -> QuerySet:
    """A campaign's topics (one the user leads) or a qrels version's (one they read; the
    texts from the campaigns they lead). ValidationError when there is none to run."""
    if (campaign in (None, "")) == (qrels in (None, "")):
        raise invalid("query_set")
    if campaign not in (None, ""):
        found = None
        if parse_id(str(campaign)) is not None:
            found = judging().campaign_topics(user, parse_id(str(campaign)))
        if found is None:
            raise invalid("no_campaign")
        name, topics = found
        if not topics:
            raise invalid("no_topics")
        return QuerySet(f"campaign {name}", topics, [])
    version = None
    if parse_id(str(qrels)) is not None:
        version = readable_qrels(user, QrelsVersion.objects.filter(pk=parse_id(str(qrels)))).first()
    if version is None:
        raise invalid("no_qrels")
    qids = sorted(set(QrelsEntry.objects.filter(qrels=version).values_list("qid", flat=True)))
    if not qids:
        raise invalid("no_topics")
    texts = judging().topic_texts(user, qids)
    if not texts:  # every query would fail: say why before a job is made
        raise invalid("no_texts", count=len(qids), label=version.label)
    return QuerySet(
        f"qrels {version.label}",
        [texts[qid] for qid in qids if qid in texts],
        [qid for qid in qids if qid not in texts],
    )


def check_in_team(endpoint: SearchEndpoint, user) -> None:
    """ValidationError ``not_in_team`` unless ``user`` (None: a task with no user) is a lead
    or engineer of the endpoint's team, where its runs land."""
    if user is not None and not holds(user, endpoint.team_id, *READERS):
        raise invalid("not_in_team", user=user, team=endpoint.team, endpoint=endpoint.name)


def default_run_name(endpoint: SearchEndpoint, when) -> str:
    stem = slugify(endpoint.name)[:60] or "endpoint"
    return f"{stem}-v{endpoint.version}-{when:%Y%m%d-%H%M%S}"


def make_search_run(
    *,
    endpoint: SearchEndpoint,
    user,
    k: int,
    campaign=None,
    qrels=None,
    system: str = "",
    name: str = "",
    job_id: int | None = None,
    on_progress=lambda done, total: None,
    queries: QuerySet | None = None,
    trial: str = "",
) -> SearchRun:
    """Ask the endpoint every topic of the query set to depth ``k`` and store the answers as
    a run (evaluation.services.import_run: the TREC file, its Parquet artifact, SHA-256),
    with its provenance. Failed queries are kept as failures; ImportRejected when every
    query failed or nothing was found (then nothing is stored). ``trial`` names the sandbox
    arm the run is for (an unsaved ``endpoint`` of another template): the run is hidden
    from lists (SearchRun.trial) and its snapshot says so. The run lands in the endpoint's
    team, so ``user`` must be a lead or engineer there (a schedule's owner who left the
    team, a command's ``--user``): ValidationError ``not_in_team`` otherwise."""
    check_in_team(endpoint, user)
    k = check_k(k)
    if queries is None:
        queries = load_query_set(user=user, campaign=campaign, qrels=qrels)
    frozen = snapshot(endpoint)
    if trial:
        frozen["trial"] = trial
    client = client_for(endpoint)
    started = timezone.now()
    name = name.strip() or default_run_name(endpoint, started)
    tag = slugify(name)[:100] or "run"
    total = len(queries.topics) + len(queries.missing)
    done = 0

    def seen(_outcome) -> None:
        nonlocal done
        done += 1
        on_progress(done, total)

    topics = [search.Topic(t.qid, t.query, t.description, t.narrative) for t in queries.topics]
    try:
        outcomes = search.ask_topics(
            client, topics, k=k, concurrency=endpoint.concurrency, on_outcome=seen
        )
    finally:
        client.close()
    outcomes += [
        search.Outcome(
            qid=qid, seconds=0.0, attempts=0, error=MESSAGES["no_text"], error_kind="no_text"
        )
        for qid in queries.missing
    ]
    outcomes.sort(key=lambda outcome: outcome.qid)
    failed = [outcome for outcome in outcomes if outcome.failed]
    text = search.run_text(outcomes, tag=tag)
    if len(failed) == len(outcomes):
        raise ImportRejected(MESSAGES["all_failed"].format(failed=len(failed), total=total))
    if not text:
        raise ImportRejected(MESSAGES["nothing_found"].format(total=total))
    finished = timezone.now()
    description = f"Made by querying {endpoint.name} (v{endpoint.version}) for {queries.label}."
    if trial:
        description = f"A sandbox trial's run ({trial}) of {endpoint.name} for {queries.label}."
    if failed:
        description += f" {len(failed):,} of {total:,} queries failed."
    with transaction.atomic():
        run = import_run(
            source=text,
            filename=f"{tag}.run",
            system=system.strip() or endpoint.name,
            team=endpoint.team_id,
            name=name,
            description=description,
            user=user,
        )
        made = SearchRun(
            run=run,
            endpoint=endpoint,
            snapshot=frozen,
            query_set=queries.label[:300],
            k=k,
            started_at=started,
            finished_at=finished,
            queries=[outcome.provenance() for outcome in outcomes],
            query_count=total,
            failed_count=len(failed),
            job_id=job_id,
            trial=bool(trial),
        )
        documents = search.documents_jsonl(outcomes)
        if documents:
            folder = run.artifact.name.rsplit("/", 1)[0]
            made.documents.save(
                f"{folder}/documents.jsonl.gz", ContentFile(gzip.compress(documents)), save=False
            )
        made.save()
    return made


def summary(made: SearchRun) -> str:
    answered = made.query_count - made.failed_count
    text = MESSAGES["summary"].format(
        total=made.query_count,
        answered=answered,
        lines=made.run.line_count,
        failed=made.failed_count,
    )
    if made.failed_count:
        qids = [query["qid"] for query in made.failed]
        shown = ", ".join(qids[:10]) + (f" and {len(qids) - 10:,} more" if len(qids) > 10 else "")
        text += MESSAGES["failed_note"].format(qids=shown)
    return text
