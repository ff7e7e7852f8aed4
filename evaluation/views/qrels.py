"""The qrels versions: the list, a version's page, its download (graded or binary) and what
changed between two versions."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from config.ids import parse_small_int
from evaluation import services
from evaluation.access import readable_qrels
from evaluation.binary import binarise, binary_threshold
from evaluation.models import QrelsVersion

PAGE_SIZE = 50


@require_GET
@login_required
def qrels_list(request):
    versions = readable_qrels(request.user, QrelsVersion.objects.select_related("created_by"))
    page = Paginator(versions, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "evaluation/qrels_list.html", {"page": page})


@require_GET
@login_required
def qrels_detail(request, pk):
    versions = readable_qrels(request.user, QrelsVersion.objects.select_related("created_by"))
    qrels = get_object_or_404(versions, pk=pk)
    topics = qrels.entries.values("qid").annotate(judged=Count("id")).order_by("qid")
    page = Paginator(topics, PAGE_SIZE).get_page(request.GET.get("page"))
    grades = qrels.entries.values("grade").annotate(n=Count("id")).order_by("grade")
    return render(
        request,
        "evaluation/qrels_detail.html",
        {"qrels": qrels, "page": page, "grades": grades},
    )


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
    # Else the threshold frozen when a campaign published it (evaluation/binary.py).
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
