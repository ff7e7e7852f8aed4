"""The lead's way from disagreements to a published qrels version: the disagreement queue,
one pair's grades and the decision on it (keyboard-first, static/js/adjudicate.js),
publishing, and the campaign's downloads (raw judgments, provenance of published grades)."""

from __future__ import annotations

import itertools
from collections import Counter

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation import tasks
from annotation.access import get_campaign_for_lead
from annotation.models import AdjudicationRule, GradeBasis, LeadDecision, Pair, Publication
from annotation.services import adjudication as service
from annotation.services import final_grades, grade_tables
from annotation.views.common import paginate, plural, start_campaign_job
from common import text_limits
from common.exports import write_csv
from common.ids import parse_id
from evaluation.models import QrelsVersion
from jobs.services.limits import fits_in_request

# How the publish page names each basis of a final grade.
BASIS_LABELS = {
    GradeBasis.UNANIMOUS: "unanimous",
    GradeBasis.MAJORITY: "by majority",
    GradeBasis.MEDIAN: "by median",
    GradeBasis.LEAD: "decided by a lead",
    GradeBasis.GOLD: "calibration pairs",
}
# The left-out pairs shown on the publish page before "and N more".
SHOWN_UNDECIDED = 50

MESSAGES = {
    "already_published": (
        "These grades were published as {label} after you opened the publish page (a second "
        "click, or another lead); nothing new was published."
    ),
}


def _topic_filter(request, campaign) -> tuple[int | None, object]:
    raw = request.GET.get("topic", "")
    if not raw:
        return None, None
    topic_id = parse_id(raw)
    topic = campaign.topics.filter(pk=topic_id).first() if topic_id else None
    if topic is None:
        raise Http404("No such topic in this campaign")
    return topic.pk, topic


def _queue_url(campaign, topic_id, show) -> str:
    url = reverse("annotation:adjudication", args=[campaign.pk])
    query = "&".join(
        part for part in (f"topic={topic_id}" if topic_id else "", f"show={show}") if part
    )
    return f"{url}?{query}"


@require_GET
@login_required
def queue(request, pk):
    """Disputed pairs, threshold straddlers first, then widest spread; undecided only by
    default, or all of them; optionally one topic's."""
    campaign = get_campaign_for_lead(request.user, pk)
    topic_id, topic = _topic_filter(request, campaign)
    show = "all" if request.GET.get("show") == "all" else "undecided"
    # Counted from the topics' tallies, so the paginator does not count the pairs.
    disputed = service.disputed_page(
        campaign=campaign, topic_id=topic_id, undecided_only=show == "undecided"
    )
    page = paginate(request, disputed)
    # Only the pairs of this page are read in full (every judge's grade and note).
    page.page.object_list = final_grades.states_of(
        campaign=campaign, pair_ids=page.page.object_list
    )
    return render(
        request,
        "annotation/adjudication.html",
        {
            "campaign": campaign,
            "topic": topic,
            "show": show,
            "page": page,
            "figures": service.pair_figures(campaign=campaign),
            "rule": AdjudicationRule(campaign.adjudication_rule).label,
            "query": f"topic={topic_id}&show={show}" if topic_id else f"show={show}",
        },
    )


def _neighbours(campaign, pair_id, topic_id, show):
    return service.queue_neighbours(
        campaign=campaign, pair_id=pair_id, topic_id=topic_id, undecided_only=show == "undecided"
    )


@require_http_methods(["GET", "POST"])
@login_required
def pair(request, pk, pair):
    """One pair: the topic, the document, every judge's grade and note, the automatic
    proposal, earlier decisions, and the form to decide. A decision moves on to the next
    pair of the queue the lead came from."""
    campaign = get_campaign_for_lead(request.user, pk)
    obj = get_object_or_404(
        Pair.objects.select_related("topic", "document"), pk=pair, campaign=campaign
    )
    topic_id, _ = _topic_filter(request, campaign)
    show = "all" if request.GET.get("show") == "all" else "undecided"
    error, status = "", 200
    if request.method == "POST":
        based_on = request.POST.get("based_on", "")
        try:
            grade = int(request.POST.get("grade", ""))
        except ValueError:
            error, status = "Choose a grade (press its key).", 400
        else:
            try:
                service.decide_pair(
                    campaign=campaign,
                    pair_id=obj.pk,
                    lead=request.user,
                    grade=grade,
                    reason=request.POST.get("reason", ""),
                    based_on=parse_id(based_on),
                )
            except service.DecisionConflict as conflict:
                error, status = str(conflict), 409
            except ValidationError as invalid:
                error, status = " ".join(invalid.messages), 400
            else:
                messages.success(
                    request,
                    f"Decided {obj.topic.qid} × {obj.document.docno}: grade {grade}.",
                )
                # The pair may have left the undecided queue: the next is looked up afresh.
                _, following = _neighbours(campaign, obj.pk, topic_id, show)
                if following is None:
                    return redirect(_queue_url(campaign, topic_id, show))
                return redirect(
                    reverse("annotation:adjudicate-pair", args=[campaign.pk, following])
                    + "?"
                    + request.GET.urlencode()
                )
    (state,) = final_grades.pair_states(campaign=campaign, pair_ids=[obj.pk])
    previous, following = _neighbours(campaign, obj.pk, topic_id, show)
    history = LeadDecision.objects.filter(pair=obj).select_related("decided_by")
    return render(
        request,
        "annotation/adjudicate_pair.html",
        {
            "campaign": campaign,
            "pair": obj,
            "state": state,
            "history": list(history),
            "previous": previous,
            "following": following,
            "query": request.GET.urlencode(),
            "queue_url": _queue_url(campaign, topic_id, show),
            "error": error,
            "posted_grade": request.POST.get("grade", "") if error else "",
            "posted_reason": request.POST.get("reason", "") if error else "",
            "scale": campaign.scale,
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@login_required
def publish(request, pk):
    """Freeze the decided grades as a new qrels version; undecided pairs block it unless the
    lead leaves them out, explicitly. Grades equal to the newest version of the name are
    published only when the lead confirms that copy (``identical_to``, the version's id);
    when this campaign published that version after the page was opened (a double click, a
    colleague), the lead is taken to it instead."""
    campaign = get_campaign_for_lead(request.user, pk)
    error, status, blocked, identical = "", 200, None, None
    data = request.POST if request.method == "POST" else request.GET
    name = data.get("name", "")
    description = data.get("description", "").strip()
    leave_out = data.get("leave_out") == "on"
    identical_to = parse_id(data.get("identical_to"))
    if request.method == "POST" and not fits_in_request(campaign.pairs.count()):
        # More grades than a request may write (SYNC_WRITE_ROWS): a job publishes them.
        return start_campaign_job(
            request,
            campaign,
            kind="publish",
            title="Publish the qrels",
            task=tasks.publish_job,
            name=name,
            description=description,
            leave_out_undecided=leave_out,
            identical_to=identical_to,
        )
    if request.method == "POST":
        try:
            publication = service.publish(
                campaign=campaign,
                user=request.user,
                name=name,
                description=description,
                leave_out_undecided=leave_out,
                identical_to=identical_to,
            )
        except service.PublishBlocked as refused:
            error, status, blocked = str(refused), 400, refused.undecided
        except service.IdenticalGrades as same:
            latest = same.latest
            seen = parse_id(request.POST.get("seen")) or 0
            if latest.pk > seen and Publication.objects.filter(qrels=latest, campaign=campaign):
                messages.info(request, MESSAGES["already_published"].format(label=latest.label))
                return redirect(latest.get_absolute_url())
            error, status, identical = same.message, 409, latest
        except ValidationError as invalid:
            error, status = " ".join(invalid.messages), 400
        else:
            left = publication.counts.get("left_out", 0)
            messages.success(
                request,
                f"Published {publication.qrels.label}: {publication.qrels.judgment_count} "
                f"grade{plural(publication.qrels.judgment_count)}"
                + (f", {left} undecided pair{plural(left)} left out." if left else "."),
            )
            return redirect(publication.qrels.get_absolute_url())
    elif identical_to:
        # A publish job refused a copy and links here to confirm it (annotation/tasks.py).
        identical = QrelsVersion.objects.filter(pk=identical_to).first()
    figures = service.pair_figures(campaign=campaign)
    if blocked is not None:
        undecided, undecided_total = blocked[:SHOWN_UNDECIDED], len(blocked)
    else:
        first = service.undecided_pairs(campaign=campaign).values_list("pk", flat=True)
        undecided = final_grades.states_of(campaign=campaign, pair_ids=first[:SHOWN_UNDECIDED])
        undecided_total = figures["undecided"]
    basis_counts = Counter()
    for basis, n in figures["bases"].items():
        basis_counts[BASIS_LABELS[basis]] += n
    publications = list(
        Publication.objects.filter(campaign=campaign).select_related("qrels", "published_by")
    )
    for newer, older in itertools.pairwise(publications):
        newer.previous = older.qrels
    return render(
        request,
        "annotation/publish.html",
        {
            "campaign": campaign,
            "figures": figures,
            "basis_counts": sorted(basis_counts.items(), key=lambda item: -item[1]),
            "undecided": undecided,
            "more_undecided": max(0, undecided_total - SHOWN_UNDECIDED),
            "undecided_total": undecided_total,
            "publications": publications,
            "default_name": name or service.default_qrels_name(campaign),
            "name_pattern": service.QRELS_NAME_PATTERN,
            "description": description,
            "leave_out": leave_out,
            "description_chars": text_limits.DESCRIPTION,
            "error": error,
            "identical": identical,
            # The form's ``seen``: the campaign's newest version when the lead opened the page.
            "seen": max((p.qrels_id for p in publications), default=0),
        },
        status=status,
    )


# --- downloads -----------------------------------------------------------------------------


def _csv_response(filename: str, header: list[str], rows) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    write_csv(response, header, rows)
    return response


@require_GET
@login_required
def download(request, pk, what):
    """``judgments``: every judge's own grade, imported and machine grades included
    (grade_tables.JUDGMENT_HEADER). ``decisions``: the decision log (every lead's decision with its
    reason, who, when and the rule in force). ``provenance``: a publication's grades with
    their basis, each judge's grade and the lead's decision (``?publication=ID``, the latest
    by default)."""
    campaign = get_campaign_for_lead(request.user, pk)
    if what == "decisions":
        return _csv_response(
            f"{service.default_qrels_name(campaign)}-decisions.csv",
            grade_tables.DECISION_HEADER,
            grade_tables.decision_table(campaign),
        )
    if what == "judgments":
        return _csv_response(
            f"{service.default_qrels_name(campaign)}-judgments.csv",
            grade_tables.JUDGMENT_HEADER,
            grade_tables.judgment_table(campaign),
        )
    if what == "provenance":
        publications = Publication.objects.filter(campaign=campaign).select_related("qrels")
        raw = request.GET.get("publication", "")
        chosen = parse_id(raw)
        publication = publications.filter(pk=chosen).first() if chosen else publications.first()
        if publication is None:
            raise Http404("No such publication of this campaign")
        return _csv_response(
            f"{publication.qrels.name}-v{publication.qrels.version}-provenance.csv",
            grade_tables.PROVENANCE_HEADER,
            grade_tables.provenance_table(publication),
        )
    raise Http404("No such download")
