"""The query sandbox (Quepid's loop, issue 31 item 3): try an edit of an endpoint's template
(and mapping) on a query set against the saved version, or compare saved versions, scored
against a qrels version with any measure; then save the edit as the endpoint's next version.

A trial is a job (evaluation.tasks.search_trial_task). Each arm (a saved version, the edit)
asks every topic of the query set through the endpoint's client, under the outbound policy,
and is stored as a run through the upload's path (services/endpoint_runs.make_search_run)
marked as a trial's (SearchRun.trial): hidden from the leaderboard, the runs list and the
pickers, kept for the trial's run diff, and deleted with the trial when the endpoint's
trials pass TRIALS_KEPT. Arms differ only in template, mapping and method: the address,
kind and key are the endpoint's as it is now (an old version's address never receives
today's key). Topics a run lacks score 0 (trec_eval's -c), so a template that finds
nothing for hard queries does not look better for skipping them; means are over the query
set's judged topics (evaluation.search.sandbox).

Who sees a trial: the person who started it, and admins (anyone else: not found).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from accounts.services.teams import in_teams
from common.ids import parse_id
from evaluation import measures, search
from evaluation.access import READERS, readable_qrels
from evaluation.measures import specs
from evaluation.models import QrelsEntry, QrelsVersion, Run, SearchEndpoint, SearchTrial
from evaluation.search import sandbox
from evaluation.services.common import ImportRejected
from evaluation.services.endpoint_runs import (
    check_in_team,
    check_k,
    load_query_set,
    make_search_run,
)
from evaluation.services.endpoint_versions import record_version
from evaluation.services.run_files import delete_run_files
from evaluation.services.scoring import evaluate_run
from evaluation.services.search import invalid, update_search_endpoint

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_K = 100
TRIALS_KEPT = 20  # per endpoint; older trials and their runs are deleted
EDIT = "edit"

MESSAGES = {
    "arms": "Compare at least two things: the saved version and an edit of its template, or "
    "two saved versions (at most {most} in all).",
    "no_version": "{name} has no version {number}.",
    "other_kind": "Version {number} was a {kind} endpoint and {name} is a {current} one now: "
    "only versions of its present kind can be asked.",
    "unchanged": "The edit is the saved version's template and mapping: change something "
    "first, or compare saved versions.",
    "qrels_needed": "Choose the qrels version to score against.",
    "measure": "The measure cannot be used: {why}",
    "not_judged": "None of the {count:,} topics of {label} is judged in qrels {qrels}: choose "
    "another qrels version or query set.",
    "moved_on": "{name} is at version {now} now and this trial compared against version "
    "{then}: try the edit again against the saved version before saving it.",
    "nothing_to_save": "This trial compared saved versions: it has no edit to save.",
    "saved_already": "This trial was saved already, as version {number}.",
    "all_failed": "Nothing to compare: {details}",
    "note": "A note is at most {most} characters.",
}
NOTE_MAX = 300


def trial_invalid(key: str, **values) -> ValidationError:
    return ValidationError(MESSAGES[key].format(**values), code=key)


@dataclass(frozen=True)
class Arm:
    label: str
    version: int | None  # None: the unsaved edit
    template: str
    mapping: dict
    method: str


# --- checking what a trial asks, before any job --------------------------------------------


def _scoring(measure: str) -> specs.ScoringOptions:
    """The measure (either dialect, read by evaluation.measures' one parser) with trec_eval's
    -c, in the canonical form a dashboard reads back from the same choice."""
    try:
        chosen = specs.read_scoring_options(measures=[measure], complete=True)
        canonical = specs.canonical_measures(chosen.measures, chosen.options)
    except specs.OptionsError as error:
        raise trial_invalid("measure", why=str(error)) from None
    return specs.ScoringOptions(canonical, chosen.options)


def _arms(endpoint: SearchEndpoint, versions, template: str, mapping) -> list[Arm]:
    record_version(endpoint)  # an endpoint older than its versions' table
    numbers = list(dict.fromkeys(versions or [endpoint.version]))
    found = {v.number: v for v in endpoint.versions.filter(number__in=numbers)}
    arms = []
    for number in numbers:
        version = found.get(number)
        if version is None:
            raise trial_invalid("no_version", name=endpoint.name, number=number)
        if version.kind != endpoint.kind:
            raise trial_invalid(
                "other_kind",
                number=number,
                kind=version.get_kind_display(),
                name=endpoint.name,
                current=endpoint.get_kind_display(),
            )
        saved = " (saved)" if number == endpoint.version else ""
        arms.append(
            Arm(f"v{number}{saved}", number, version.template, version.mapping, version.method)
        )
    if template:
        arms.append(Arm(EDIT, None, template, mapping, endpoint.method))
    if not 2 <= len(arms) <= sandbox.MAX_ARMS:
        raise trial_invalid("arms", most=sandbox.MAX_ARMS)
    return arms


def plan_trial(
    *,
    endpoint: SearchEndpoint,
    user,
    template: str = "",
    mapping: dict | None = None,
    versions: list[int] | None = None,
    campaign=None,
    query_qrels=None,
    qrels=None,
    measure: str = DEFAULT_MEASURE,
    k: int = DEFAULT_K,
) -> dict:
    """Everything a trial asks, checked now (the job's arguments, plain JSON): the edit
    (``template``, ``mapping``: empty means the saved version's), the saved ``versions``
    (default: the saved one), the query set (``campaign`` or ``query_qrels``, as "make a
    run" reads them), the ``qrels`` to score against (default: the query set's qrels), the
    measure and the depth. ValidationError with a code: ``no_campaign`` and ``no_qrels``
    (a campaign the user does not lead, a qrels version they may not read) are for a
    "not found"; the others say what to change."""
    check_in_team(endpoint, user)
    k = check_k(k)
    template = template or ""
    if template.strip():
        try:
            search.check_template(template)
        except search.TemplateError as error:
            raise invalid("template", why=str(error)) from None
    else:
        template = ""
    if mapping:
        try:
            mapping = search.Mapping.from_dict(mapping).as_dict()
            search.compile_mapping(search.Mapping.from_dict(mapping))
        except search.MappingError as error:
            raise invalid("mapping", why=str(error)) from None
    else:
        mapping = dict(endpoint.mapping)
    if template and template == endpoint.template and mapping == endpoint.mapping:
        raise trial_invalid("unchanged")
    arms = _arms(endpoint, versions, template, mapping)
    queries = load_query_set(user=user, campaign=campaign, qrels=query_qrels)
    scored_on = qrels if qrels not in (None, "") else query_qrels
    if scored_on in (None, ""):
        raise trial_invalid("qrels_needed")
    found = None
    if parse_id(str(scored_on)) is not None:
        found = readable_qrels(
            user, QrelsVersion.objects.filter(pk=parse_id(str(scored_on)))
        ).first()
    if found is None:
        raise invalid("no_qrels")
    _scoring(measure)
    asked = [topic.qid for topic in queries.topics] + queries.missing
    if not QrelsEntry.objects.filter(qrels=found, qid__in=asked).exists():
        raise trial_invalid("not_judged", count=len(asked), label=queries.label, qrels=found.label)
    query_set = {"campaign": int(campaign)} if campaign not in (None, "") else {}
    if not query_set:
        query_set = {"qrels": int(query_qrels)}
    return {
        "endpoint": endpoint.pk,
        "template": template,
        "mapping": mapping if template else {},
        "versions": [arm.version for arm in arms if arm.version is not None],
        "query_set": query_set,
        "qrels": found.pk,
        "measure": measure.strip(),
        "k": k,
        "base_version": endpoint.version,
    }


# --- running one ---------------------------------------------------------------------------


def _endpoint_for(endpoint: SearchEndpoint, arm: Arm) -> SearchEndpoint:
    """The endpoint as the arm asks it, never saved: its template, mapping and method on
    the endpoint's address, kind and key."""
    asked = copy.copy(endpoint)
    asked.template, asked.mapping, asked.method = arm.template, arm.mapping, arm.method
    if arm.version is not None:
        asked.version = arm.version
    return asked


def run_trial(
    *,
    endpoint: SearchEndpoint,
    user,
    template: str = "",
    mapping: dict | None = None,
    versions: list[int] | None = None,
    query_set: dict,
    qrels: int,
    measure: str = DEFAULT_MEASURE,
    k: int = DEFAULT_K,
    base_version: int | None = None,
    job_id: int | None = None,
    on_progress=lambda done, total: None,
) -> SearchTrial:
    """Ask every arm, store each as a trial's run, score them and keep the trial (the
    ``plan_trial`` arguments). A job started again finds the trial its first attempt kept;
    runs an interrupted attempt left are deleted first. An arm whose every query failed is
    kept with its reason (all its topics count 0); ValidationError when every arm failed."""
    if job_id is not None:
        done = SearchTrial.objects.filter(job_id=job_id).first()
        if done is not None:
            return done
    plan = plan_trial(
        endpoint=endpoint,
        user=user,
        template=template,
        mapping=mapping,
        versions=versions,
        campaign=query_set.get("campaign"),
        query_qrels=query_set.get("qrels"),
        qrels=qrels,
        measure=measure,
        k=k,
    )
    arms = _arms(endpoint, plan["versions"], plan["template"], plan["mapping"] or None)
    queries = load_query_set(user=user, **plan["query_set"])
    scored_on = QrelsVersion.objects.get(pk=plan["qrels"])
    chosen = _scoring(plan["measure"])
    prefix = f"trial-j{job_id}" if job_id else f"trial-{timezone.now():%Y%m%d-%H%M%S-%f}"
    _drop_runs(
        Run.objects.filter(
            search__trial=True, search__endpoint=endpoint, name__startswith=prefix + "-"
        )
    )
    asked = [topic.qid for topic in queries.topics] + queries.missing
    total = len(asked) * len(arms)
    made_arms = []
    for n, arm in enumerate(arms):
        base = n * len(asked)
        try:
            made = make_search_run(
                endpoint=_endpoint_for(endpoint, arm),
                user=user,
                k=plan["k"],
                system=endpoint.name,
                name=f"{prefix}-{slugify(arm.label)}"[:100],
                queries=queries,
                trial=arm.label,
                on_progress=lambda done, _total, base=base: on_progress(base + done, total),
            )
        except ImportRejected as rejected:
            made_arms.append({"arm": arm, "made": None, "error": str(rejected)})
            continue
        made_arms.append({"arm": arm, "made": made, "error": ""})
    if all(item["made"] is None for item in made_arms):
        details = "; ".join(f"{item['arm'].label}: {item['error']}" for item in made_arms)
        raise ValidationError(MESSAGES["all_failed"].format(details=details), code="all_failed")
    names = measures.output_names(list(chosen.measures), chosen.options)
    kept = []
    for item in made_arms:
        kept.append(_arm_record(item, scored_on, chosen, asked, names))
    with transaction.atomic():
        trial = SearchTrial.objects.create(
            endpoint=endpoint,
            base_version=base_version or endpoint.version,
            template=plan["template"],
            mapping=plan["mapping"],
            versions=plan["versions"],
            query_set=plan["query_set"],
            query_set_label=queries.label[:300],
            qrels=scored_on,
            measure=plan["measure"],
            k=plan["k"],
            arms=kept,
            result={
                "measures": names,
                "specs": list(chosen.measures),
                "options": chosen.params(),
                "qids": asked,
            },
            created_by=user,
            job_id=job_id,
        )
        prune_trials(endpoint)
    return trial


def _arm_record(item, qrels, chosen, asked: list[str], names: list[str]) -> dict:
    arm, made = item["arm"], item["made"]
    record = {"label": arm.label, "version": arm.version, "run": None, "error": item["error"]}
    if made is None:
        return {**record, "failed": asked, "failed_count": len(asked), "per_topic": {}}
    evaluation = evaluate_run(
        run=made.run, qrels=qrels, measure_specs=list(chosen.measures), options=chosen.options
    )
    wanted = set(asked)
    per_topic = {
        qid: {name: values[name] for name in names if name in values}
        for qid, values in evaluation.per_topic.items()
        if qid in wanted
    }
    failed = [query["qid"] for query in made.failed]
    return {
        **record,
        "run": made.run.pk,
        "failed": failed,
        "failed_count": made.failed_count,
        "query_count": made.query_count,
        "per_topic": per_topic,
    }


def _drop_runs(runs) -> None:
    runs = list(runs)
    if runs:
        with transaction.atomic():
            delete_run_files(runs)
            Run.objects.filter(pk__in=[run.pk for run in runs]).delete()


def prune_trials(endpoint: SearchEndpoint, keep: int = TRIALS_KEPT) -> int:
    """Delete the endpoint's trials past the newest ``keep``, and their runs."""
    old = list(SearchTrial.objects.filter(endpoint=endpoint).order_by("-created_at", "-pk")[keep:])
    if not old:
        return 0
    run_ids = [arm["run"] for trial in old for arm in trial.arms if arm.get("run")]
    _drop_runs(Run.objects.filter(pk__in=run_ids, search__trial=True))
    SearchTrial.objects.filter(pk__in=[trial.pk for trial in old]).delete()
    return len(old)


# --- reading one ---------------------------------------------------------------------------


def visible_trials(user, endpoint: SearchEndpoint | None = None):
    """The trials ``user`` may see: their own, of the endpoints of their teams (a trial
    follows its endpoint's team: one who left the team loses its trials); an admin: all."""
    trials = SearchTrial.objects.select_related("endpoint", "qrels", "created_by")
    if endpoint is not None:
        trials = trials.filter(endpoint=endpoint)
    if user.is_superuser:
        return trials
    return in_teams(trials.filter(created_by=user), user, *READERS, field="endpoint__team")


def table(trial: SearchTrial, measure: str | None = None) -> tuple[str, sandbox.ArmTable]:
    """The trial's per-query table for one of its measures (the first by default)."""
    names = trial.result.get("measures", [])
    name = measure if measure in names else names[0]
    judged = set(
        QrelsEntry.objects.filter(qrels=trial.qrels, qid__in=trial.result["qids"]).values_list(
            "qid", flat=True
        )
    )
    values = [
        {qid: row[name] for qid, row in arm["per_topic"].items() if name in row}
        for arm in trial.arms
    ]
    failed = [set(arm["failed"]) for arm in trial.arms]
    return name, sandbox.compare_arms(trial.result["qids"], values, failed, judged)


# --- saving the edit -----------------------------------------------------------------------


def save_trial(*, trial: SearchTrial, user, note: str = "") -> SearchEndpoint:
    """The trial's edit saved as the endpoint's next version (with ``user`` and ``note``).
    Refused when the trial has no edit, was saved already, or the endpoint has moved on
    since (code ``moved_on``: someone saved another version meanwhile)."""
    note = (note or "").strip()
    if len(note) > NOTE_MAX:
        raise trial_invalid("note", most=NOTE_MAX)
    if not trial.template:
        raise trial_invalid("nothing_to_save")
    if trial.saved_as is not None:
        raise trial_invalid("saved_already", number=trial.saved_as)
    with transaction.atomic():
        endpoint = SearchEndpoint.objects.select_for_update().get(pk=trial.endpoint_id)
        if endpoint.version != trial.base_version:
            raise trial_invalid(
                "moved_on", name=endpoint.name, now=endpoint.version, then=trial.base_version
            )
        before = endpoint.version
        update_search_endpoint(
            endpoint=endpoint,
            template=trial.template,
            mapping=trial.mapping,
            by=user,
            note=note or f"Saved from sandbox trial {trial.pk}.",
        )
        if endpoint.version == before:
            raise trial_invalid("unchanged")
        trial.saved_as = endpoint.version
        trial.save(update_fields=["saved_as"])
    return endpoint
