from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from config.ids import parse_small_int
from evaluation import services
from evaluation.binary import binarise, binary_threshold
from evaluation.models import Evaluation, QrelsVersion, Run, System
from evaluation.views_dashboards import is_reader, require_reader

PAGE_SIZE = 50


@require_GET
@login_required
def home(request):
    context = {"qrels_count": QrelsVersion.objects.count(), "is_reader": False}
    # Systems, runs and evaluations are for leads and engineers only: judging is blind to
    # which system retrieved a document, so a judge must not even see the run names.
    if is_reader(request.user):
        context.update(
            is_reader=True,
            system_count=System.objects.count(),
            run_count=Run.objects.count(),
            recent_evaluations=Evaluation.objects.select_related("run__system", "qrels")[:8],
            recent_runs=Run.objects.select_related("system").order_by("-uploaded_at")[:5],
        )
    return render(request, "home.html", context)


@require_GET
@login_required
def qrels_list(request):
    page = Paginator(QrelsVersion.objects.select_related("created_by"), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(request, "evaluation/qrels_list.html", {"page": page})


@require_GET
@login_required
def qrels_detail(request, pk):
    qrels = get_object_or_404(QrelsVersion.objects.select_related("created_by"), pk=pk)
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
    qrels = get_object_or_404(QrelsVersion, pk=pk)
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
    new = get_object_or_404(QrelsVersion, pk=pk)
    old = get_object_or_404(QrelsVersion, pk=other)
    diff = services.diff_qrels(old, new)
    return render(request, "evaluation/qrels_diff.html", {"old": old, "new": new, "diff": diff})


@require_GET
@login_required
def run_list(request):
    require_reader(request.user)
    runs = Run.objects.select_related("system", "uploaded_by")
    page = Paginator(runs, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "evaluation/run_list.html", {"page": page})


@require_GET
@login_required
def run_download(request, pk):
    require_reader(request.user)
    run = get_object_or_404(Run, pk=pk)
    return FileResponse(
        run.original_file.open("rb"), as_attachment=True, filename=run.original_filename
    )
