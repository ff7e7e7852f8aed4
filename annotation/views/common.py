"""What the lead's pages share: their messages, paging and sortable tables, a campaign's
figures, its recent jobs, and the note that says where a removed judge's work went."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.db import transaction
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect

from annotation import services
from annotation.models import Assignment, Campaign, MachineJudge, TopicTally
from annotation.services.tallies import topic_sums
from jobs.models import Job
from jobs.services import start_job

PAGE_SIZE = 50
RECENT_JOBS = 5

MESSAGES = {
    "created": "Created the campaign {name}.",
    "saved": "Saved the campaign.",
    "added_judge": "Added {user}: {n} pair{s} assigned to them.",
    "removed_judge": "Removed {user}: {n} open pair{s} went to the other judges.",
    "removed_idle_judge": "Removed {user}; they had no open pairs.",
    "removed_some_moved": (
        "Removed {user}: {moved} of their {n} open pairs went to the other judges; the other "
        "{left} wait for a judge who does not hold them yet."
    ),
    "removed_none_moved": (
        "Removed {user}: none of their {n} open pair{s} could go to the other judges, who "
        "already hold {them}. Add a judge to cover {them}."
    ),
    "removed_last_judge": (
        "Removed {user}: their {n} open pair{s} wait for a judge (the campaign has none left)."
    ),
    "reassigned": "Moved {n} open pair{s} from {source} to {target}{where}.",
    "nothing_reassigned": (
        "Nothing moved: {source} has no open pairs{where} that {target} does not already hold."
    ),
    "assigned_more": "{n} new assignment{s} for the higher number of judges per pair.",
}


def plural(n: int) -> str:
    return "" if n == 1 else "s"


# --- paging and sorting ------------------------------------------------------------------


def query_url(request, **changes) -> str:
    """This page's query string with ``changes`` applied (None removes a key)."""
    query = request.GET.copy()
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = value
    encoded = query.urlencode()
    return f"?{encoded}" if encoded else "?"


@dataclass
class Pager:
    page: Page
    previous_url: str | None
    next_url: str | None


def paginate(request, items, param: str = "page") -> Pager:
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get(param))
    return Pager(
        page=page,
        previous_url=query_url(request, **{param: page.previous_page_number()})
        if page.has_previous()
        else None,
        next_url=query_url(request, **{param: page.next_page_number()})
        if page.has_next()
        else None,
    )


@dataclass
class Column:
    key: str
    label: str
    numeric: bool
    url: str
    aria_sort: str  # "ascending", "descending" or "" when the table is not sorted by it


def sorting(request, columns, default: str, param: str = "sort", reset: str = "page"):
    """Which column a table is sorted by, from ``?sort=key`` or ``?sort=-key`` (descending),
    and the header links: a click sorts by the column (numbers largest first), a second click
    reverses. Unknown keys fall back to ``default``. Returns (key, descending, headers)."""
    raw = request.GET.get(param, default)
    key, descending = raw.lstrip("-"), raw.startswith("-")
    if key not in {c[0] for c in columns}:
        key, descending = default.lstrip("-"), default.startswith("-")
    headers = []
    for name, label, numeric in columns:
        if name == key:
            target = name if descending else f"-{name}"
            aria = "descending" if descending else "ascending"
        else:
            target = f"-{name}" if numeric else name
            aria = ""
        headers.append(
            Column(name, label, numeric, query_url(request, **{param: target, reset: None}), aria)
        )
    return key, descending, headers


# --- a campaign's figures and jobs ---------------------------------------------------------


def campaign_figures(campaign: Campaign) -> dict:
    documents = campaign.documents.aggregate(
        total=Count("pk"),
        lacking=Count("pk", filter=Q(text="", title="")),
    )
    # From the topics' tallies (annotation/services/tallies.py): one row per topic, not per
    # pair or assignment. Skipped: neither open nor graded.
    tallies = topic_sums(TopicTally.objects.filter(campaign=campaign))
    assigned, open_ = tallies["assigned"], tallies["open"]
    judges = campaign.judges.count()
    return {
        "topics": campaign.topics.count(),
        "documents": documents["total"],
        "lacking_text": documents["lacking"],
        "pairs": tallies["pairs"],
        "assigned": assigned,
        "done": assigned - open_,
        "skipped": assigned - open_ - (tallies["graded"] or 0),
        "judges": judges,
        "overlap_warning": services.overlap_warning(campaign=campaign, judges=judges),
    }


def recent_jobs(request, campaign: Campaign, kinds: tuple[str, ...] = ()) -> list[Job]:
    """The user's latest imports and poolings of this campaign (annotation/tasks.py ties
    each job to its campaign in ``result``); only the job's owner may open it."""
    jobs = Job.objects.filter(result__campaign=campaign.pk, created_by=request.user)
    if kinds:
        jobs = jobs.filter(kind__in=kinds)
    return list(jobs.order_by("-created_at")[:RECENT_JOBS])


# --- judges --------------------------------------------------------------------------------


def start_campaign_job(request, campaign: Campaign, *, kind: str, title: str, task, **params):
    """A change too large for the request (jobs/services/limits.py: SYNC_WRITE_ROWS), started as a job
    on ``campaign``: the redirect to the job's page, which shows its progress and outcome."""
    job = start_job(
        kind=f"annotation.{kind}",
        title=f"{title} ({campaign.name})",
        user=request.user,
        task=task,
        campaign_id=campaign.pk,
        **params,
    )
    return redirect(job)


def remove_judge_with_note(campaign: Campaign, judge) -> tuple[int, str]:
    """Remove a judge and say where their open work went: services.remove_judge gives it to
    the other judges where it can (never to one who already holds the pair). Returns the
    message level and text."""
    assignments = Assignment.objects.filter(pair__campaign=campaign)
    with transaction.atomic():
        before = assignments.count()
        n = services.remove_judge(campaign=campaign, judge=judge)
        moved = assignments.count() - (before - n)
    values = {"user": judge, "n": n, "s": plural(n), "moved": moved, "left": n - moved}
    values["them"] = "it" if n == 1 else "them"
    if n == 0:
        key, level = "removed_idle_judge", messages.SUCCESS
    elif not campaign.judges.exists():
        key, level = "removed_last_judge", messages.WARNING
    elif moved == n:
        key, level = "removed_judge", messages.SUCCESS
    elif moved:
        key, level = "removed_some_moved", messages.WARNING
    else:
        key, level = "removed_none_moved", messages.WARNING
    return level, MESSAGES[key].format(**values)


def campaign_machine(campaign, mid) -> MachineJudge:
    """The campaign's machine judge ``mid`` (its judge and campaign joined in); 404 for any
    other, another campaign's included."""
    return get_object_or_404(
        MachineJudge.objects.select_related("judge__campaign"), pk=mid, judge__campaign=campaign
    )
