"""The qrels versions: the list, a version's page (where it came from, its downloads, the
other versions of its name), its download (graded or binary) and what changed between two
versions."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.models import Team
from accounts.services.teams import holds
from common.ids import parse_id, parse_small_int
from evaluation import services
from evaluation.access import NONE, owns_qrels, readable_qrels, reads_every_qrels
from evaluation.judging import judging
from evaluation.models import QrelsVersion
from evaluation.services.binary_qrels import binarise, binary_threshold

PAGE_SIZE = 50


@require_GET
@login_required
def qrels_list(request):
    versions = readable_qrels(request.user, QrelsVersion.objects.select_related("created_by"))
    page = Paginator(versions, PAGE_SIZE).get_page(request.GET.get("page"))
    previous = _previous_versions(request.user, list(page.object_list))
    for qrels in page.object_list:
        qrels.previous = previous.get(qrels.pk)
    return render(
        request,
        "evaluation/qrels_list.html",
        {"page": page, **_hidden_from_judges(request.user, page.paginator.count)},
    )


def _previous_versions(user, versions) -> dict:
    """{pk: the readable version of the same name just before it} for ``versions``."""
    names = {qrels.name for qrels in versions}
    same_names = readable_qrels(user, QrelsVersion.objects.filter(name__in=names))
    by_name: dict[str, list] = {}
    for other in same_names.only("name", "version").order_by("name", "version"):
        by_name.setdefault(other.name, []).append(other)
    previous = {}
    for qrels in versions:
        earlier = [o for o in by_name.get(qrels.name, []) if o.version < qrels.version]
        if earlier:
            previous[qrels.pk] = earlier[-1]
    return previous


def _hidden_from_judges(user, shown: int) -> dict:
    """Why a user who is no lead or engineer sees fewer versions, or none (access.py)."""
    if reads_every_qrels(user):
        return {"reads_every_qrels": True}
    return {
        "reads_every_qrels": False,
        "judges_read_none": settings.QRELS_FOR_JUDGES == NONE,
        "shown": shown,
    }


@require_GET
@login_required
def qrels_detail(request, pk):
    versions = readable_qrels(
        request.user, QrelsVersion.objects.select_related("created_by", "team")
    )
    qrels = get_object_or_404(versions, pk=pk)
    can_share = owns_qrels(request.user, qrels)
    topics = qrels.entries.values("qid").annotate(judged=Count("id")).order_by("qid")
    page = Paginator(topics, PAGE_SIZE).get_page(request.GET.get("page"))
    grades = qrels.entries.values("grade").annotate(n=Count("id")).order_by("grade")
    siblings = list(versions.filter(name=qrels.name).exclude(pk=qrels.pk).order_by("-version"))
    earlier = [other for other in siblings if other.version < qrels.version]
    return render(
        request,
        "evaluation/qrels_detail.html",
        {
            "qrels": qrels,
            "page": page,
            "grades": grades,
            "origin": judging().qrels_origin(qrels, request.user),
            "threshold": binary_threshold(qrels),
            "siblings": siblings,
            "previous": earlier[0] if earlier else None,
            "can_score": reads_every_qrels(request.user),
            "owned": holds(request.user, qrels.team_id),
            "can_share": can_share,
            "other_teams": Team.objects.exclude(pk=qrels.team_id) if can_share else [],
            "shared_ids": set(qrels.shared_with.values_list("pk", flat=True)),
        },
    )


@require_POST
@login_required
def qrels_share(request, pk):
    """Share a version read-only with exactly the teams ticked (a lead of its team; for
    anyone else there is no such version to share: 404)."""
    qrels = get_object_or_404(readable_qrels(request.user, QrelsVersion.objects.all()), pk=pk)
    if not owns_qrels(request.user, qrels):
        raise Http404("No such qrels version among those your teams' leads share.")
    teams = Team.objects.filter(slug__in=request.POST.getlist("teams")[:1000])
    services.share_qrels(qrels=qrels, teams=teams)
    named = ", ".join(team.name for team in qrels.shared_with.order_by("name")) or "no other team"
    messages.success(request, f"{qrels.label} is shared read-only with {named}.")
    return redirect(qrels)


@require_GET
@login_required
def qrels_compare(request, pk):
    """The diff of version ``pk`` with ``?other=`` (any readable version), older first."""
    versions = readable_qrels(request.user, QrelsVersion.objects.all())
    qrels = get_object_or_404(versions, pk=pk)
    other = get_object_or_404(versions, pk=parse_id(request.GET.get("other", "")) or 0)
    old, new = sorted((qrels, other), key=lambda q: (q.created_at, q.pk))
    return redirect("evaluation:qrels-diff", pk=new.pk, other=old.pk)


@require_GET
@login_required
def qrels_download(request, pk):
    """The TREC qrels file; ``?binary=1`` maps grades to 0/1 at the relevance threshold
    (``?threshold=N``, else the one frozen when a campaign published it, else 1)."""
    qrels = get_object_or_404(readable_qrels(request.user, QrelsVersion.objects.all()), pk=pk)
    frame = services.load_qrels_frame(qrels)
    filename = f"{qrels.name}-v{qrels.version}"
    if request.GET.get("binary"):
        threshold = _threshold(request, qrels)
        frame = binarise(frame, threshold)
        filename += f"-binary-at-{threshold}"
    body = services.qrels_to_trec_bytes(frame)
    response = HttpResponse(body, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.qrels"'
    return response


def _threshold(request, qrels) -> int:
    raw = request.GET.get("threshold", "")
    # Else the threshold frozen when a campaign published it (evaluation/services/binary_qrels.py).
    return binary_threshold(qrels, parse_small_int(raw))


@require_GET
@login_required
def qrels_diff(request, pk, other):
    """What changed from qrels version ``other`` to version ``pk``."""
    versions = readable_qrels(request.user, QrelsVersion.objects.all())
    new = get_object_or_404(versions, pk=pk)
    old = get_object_or_404(versions, pk=other)
    diff = services.diff_qrels(old, new)
    return render(request, "evaluation/qrels_diff.html", {"old": old, "new": new, "diff": diff})
