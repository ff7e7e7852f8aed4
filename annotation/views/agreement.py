"""The lead's agreement report (campaign-wide statistics, a heatmap of pairwise kappa, each
judge pair's confusion matrix, topics worst first, each judge's grades and leniency) with
its CSV and JSON downloads, and the calibration page (gold pairs, their import, each judge
against them). The numbers come from annotation.services.agreement: stored snapshots,
recomputed by a background task after judges grade; the page says when a recomputation is
pending. Gold pairs and calibration come from annotation.services.gold."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import services
from annotation.access import get_campaign_for_lead
from annotation.models import SENT_BY_HAND
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export, machine_agreement, suggestions
from annotation.services import gold as gold_service
from annotation.views.common import paginate, plural, query_url, sorting
from common.exports import write_csv
from common.ids import parse_id
from evaluation.trec import TrecFormatError
from jobs.services.limits import TooLargeForRequest, sync_write_limit

WEIGHT_LABELS = {"quadratic": "Quadratic", "linear": "Linear", "none": "Unweighted"}
DOWNLOAD_FORMATS = ("json", "csv")
TOPIC_COLUMNS = [
    ("qid", "Topic", False),
    ("pairs", "Pairs", True),
    ("multiply_judged", "Graded by 2+", True),
    ("disputed", "Disputed", True),
    ("alpha", "α ordinal", True),
    ("observed", "Observed", True),
]
JUDGE_COLUMNS = [("judge", "Judge", False), ("judged", "Graded", True)]

MESSAGES = {
    "gold_imported": (
        "Marked {marked} calibration pair{s} from {name}: {added} new to the pool, {already} "
        "already in it; {assigned} new assignment{s_assigned}."
    ),
    "gold_refused": "Nothing imported: {name} has {total} problem{s}.",
    "file_too_large": "{name} is larger than the limit of {limit} KB for gold files.",
    "unmarked": "{n} pair{s} are ordinary pairs again; their judges' grades stay.",
    "nothing_unmarked": "Choose the gold pairs to unmark.",
}


def _weights(request) -> str:
    """The weights the lead chose (?weights=), the default for anything else."""
    chosen = request.GET.get("weights", "")
    return chosen if chosen in agreement_service.WEIGHTS else agreement_service.DEFAULT_WEIGHTS


def _weight_links(request, chosen: str) -> list[dict]:
    return [
        {"key": key, "label": label, "url": query_url(request, weights=key), "on": key == chosen}
        for key, label in WEIGHT_LABELS.items()
    ]


# --- the report ------------------------------------------------------------------------------


@require_GET
@login_required
def report(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    weights = _weights(request)
    result = agreement_service.campaign_agreement(campaign=campaign, weights=weights)
    judges = [row.judge for row in result.judges]
    heatmap = [
        {
            "judge": a,
            "cells": [
                {"judge": b, "self": a == b, "pair": None if a == b else result.pair(a, b)}
                for b in judges
            ],
        }
        for a in judges
    ]
    overall = [
        {"key": key, "label": label, "stat": getattr(result.report, attribute), "band": band}
        for key, label, attribute, band in agreement_export.OVERALL
    ]
    for row in overall:
        row["words"] = row["band"](row["stat"].value) if row["band"] else ""
    topic_key, topic_descending, topic_headers = sorting(
        request, TOPIC_COLUMNS, "alpha", param="tsort", reset="tpage"
    )
    judge_key, judge_descending, judge_headers = sorting(
        request, JUDGE_COLUMNS, "judge", param="jsort", reset="jpage"
    )
    adjudication = reverse("annotation:adjudication", args=[campaign.pk])
    anchoring = result.anchoring  # computed with the snapshot, never on a page view
    context = {
        "campaign": campaign,
        "result": result,
        "report": result.report,
        "weights": weights,
        "weight_label": WEIGHT_LABELS[weights],
        "weight_links": _weight_links(request, weights),
        "overall": overall,
        "heatmap": heatmap,
        "judges": judges,
        "pair_details": [_pair_detail(pair, result.report.scale) for pair in result.report.pairs],
        "confidence": round(result.report.confidence * 100),
        "topic_headers": topic_headers,
        "topics": paginate(
            request, _sorted_topics(result.topics, topic_key, topic_descending), "tpage"
        ),
        "judge_headers": judge_headers,
        "judge_rows": _judge_rows(result, judge_key, judge_descending),
        "scale": result.report.scale,
        # Machines against the humans (never in the humans' numbers above).
        "machines": machine_agreement.machine_agreement(
            campaign=campaign, weights=agreement_service.WEIGHTS[weights]
        ),
        # Post-editing: suggested against blind grades (None unless the campaign suggests).
        "anchoring": anchoring,
        "anchoring_rows": [
            {
                "words": words,
                "cells": [
                    getattr(anchoring.suggested, key),
                    getattr(anchoring.blind, key),
                    anchoring.difference[key],
                ],
            }
            for key, words in suggestions.MEASURE_WORDS.items()
        ]
        if anchoring
        else [],
        # The audit form (its counts are on the machine judges page, not computed here).
        "audit_kinds": [
            {"value": kind.value, "label": kind.label, "pairs": None, "reason": ""}
            for kind in SENT_BY_HAND
        ],
        "adjudication_url": adjudication,
        "downloads": _download_links(campaign, weights),
        "in_line": agreement_service.IN_LINE_GRADES,
    }
    return render(request, "annotation/agreement.html", context)


def _pair_detail(pair, scale) -> dict:
    """A judge pair with its confusion matrix as rows labelled by grade."""
    rows = [
        {
            "grade": grade,
            "cells": [{"count": count, "diagonal": i == j} for j, count in enumerate(counts)],
        }
        for i, (grade, counts) in enumerate(zip(scale, pair.confusion, strict=True))
    ]
    return {"pair": pair, "rows": rows}


def _sorted_topics(rows, key: str, descending: bool) -> list:
    """Worst first by default (the service's order: alpha ascending, undefined last); other
    columns sort with rows lacking a value last either way."""
    if key == "alpha" and not descending:
        return list(rows)
    value = {
        "qid": lambda t: t.qid,
        "pairs": lambda t: t.agreement.pairs,
        "multiply_judged": lambda t: t.agreement.multiply_judged,
        "disputed": lambda t: t.agreement.disputed,
        "alpha": lambda t: t.agreement.alpha_ordinal.value,
        "observed": lambda t: t.agreement.observed.value,
    }[key]
    present = sorted((t for t in rows if value(t) is not None), key=lambda t: t.qid)
    present.sort(key=value, reverse=descending)
    return present + [t for t in rows if value(t) is None]


def _judge_rows(result, key: str, descending: bool) -> list[dict]:
    rows = []
    for row in result.judges:
        counts = row.profile.grade_counts
        total = sum(counts) or 1
        rows.append(
            {
                "judge": row.judge,
                "judged": row.profile.judged,
                "grades": [
                    {
                        "grade": grade,
                        "count": count,
                        "share": count / total,
                        "percent": round(100 * count / total),
                    }
                    for grade, count in zip(result.report.scale, counts, strict=True)
                ],
                "leniency": row.profile.leniency,
                "tendency": row.tendency,
            }
        )
    rows.sort(key=lambda r: r["judge"])
    rows.sort(key=lambda r: r[key], reverse=descending)
    return rows


def _download_links(campaign, weights: str) -> list[dict]:
    url = reverse("annotation:agreement-download", args=[campaign.pk, "csv"])
    links = [
        {
            "label": "JSON (everything)",
            "url": reverse("annotation:agreement-download", args=[campaign.pk, "json"])
            + f"?weights={weights}",
        }
    ]
    for table in agreement_export.TABLES:
        links.append({"label": f"CSV: {table}", "url": f"{url}?table={table}&weights={weights}"})
    return links


# --- downloads -------------------------------------------------------------------------------


@require_GET
@login_required
def download(request, pk, fmt):
    """``json``: the whole report. ``csv``: one table (``?table=`` overall, pairwise, topics
    or judges; overall by default). Both follow ``?weights=``."""
    campaign = get_campaign_for_lead(request.user, pk)
    if fmt not in DOWNLOAD_FORMATS:
        raise Http404("No such download")
    table = request.GET.get("table", "overall")
    if fmt == "csv" and table not in agreement_export.TABLES:
        raise Http404("No such table")
    weights = _weights(request)
    result = agreement_service.campaign_agreement(campaign=campaign, weights=weights)
    stem = f"{slugify(campaign.name) or 'campaign'}-{campaign.pk}-agreement-{weights}"
    if fmt == "json":
        response = JsonResponse(agreement_export.report_data(result))
        response["Content-Disposition"] = f'attachment; filename="{stem}.json"'
        return response
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stem}-{table}.csv"'
    write_csv(response, *agreement_export.report_table(result, table))
    return response


# --- calibration -----------------------------------------------------------------------------


class GoldImportForm(forms.Form):
    file = forms.FileField(allow_empty_file=False)

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = gold_service.MAX_GOLD_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                MESSAGES["file_too_large"].format(name=upload.name, limit=limit // 1024)
            )
        return upload


@require_http_methods(["GET", "POST"])
@login_required
def calibration(request, pk):
    """The gold pairs and each judge against them; a POST unmarks the chosen gold pairs."""
    campaign = get_campaign_for_lead(request.user, pk)
    if request.method == "POST":
        ids = [parse_id(value) for value in request.POST.getlist("pair")]
        ids = [i for i in ids if i is not None]
        if not ids:
            messages.error(request, MESSAGES["nothing_unmarked"])
        else:
            n = services.clear_gold(campaign=campaign, pair_ids=ids)
            messages.success(request, MESSAGES["unmarked"].format(n=n, s=plural(n)))
        return redirect("annotation:calibration", pk=campaign.pk)
    return render_calibration(request, campaign)


def render_calibration(request, campaign, *, status: int = 200, form=None, errors=None):
    weights = _weights(request)
    result = gold_service.campaign_calibration(campaign=campaign, weights=weights)
    context = {
        "campaign": campaign,
        "result": result,
        "weights": weights,
        "weight_label": WEIGHT_LABELS[weights],
        "weight_links": _weight_links(request, weights),
        "gold": paginate(request, result.gold),
        "form": form or GoldImportForm(),
        "errors": errors,
        "max_kb": gold_service.MAX_GOLD_BYTES // 1024,
        "scale": campaign.grades,
    }
    return render(request, "annotation/calibration.html", context, status=status)


@require_POST
@login_required
def gold_import(request, pk):
    """Import a gold file inline (gold sets are small): all or nothing."""
    campaign = get_campaign_for_lead(request.user, pk)
    form = GoldImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return render_calibration(request, campaign, status=400, form=form)
    upload = form.cleaned_data["file"]
    try:
        done = gold_service.import_gold(
            campaign=campaign,
            source=upload,
            filename=upload.name,
            max_rows=sync_write_limit(),
        )
    except TrecFormatError as error:
        errors = {
            "summary": MESSAGES["gold_refused"].format(
                name=upload.name, total=error.total, s=plural(error.total)
            ),
            "lines": [str(line) for line in error.errors],
            "more": error.more,
        }
        return render_calibration(request, campaign, status=400, form=form, errors=errors)
    except ValidationError as error:
        errors = {"summary": " ".join(error.messages), "lines": [], "more": 0}
        return render_calibration(request, campaign, status=400, form=form, errors=errors)
    except TooLargeForRequest as refused:
        errors = {"summary": str(refused), "lines": [], "more": 0}
        return render_calibration(request, campaign, status=413, form=form, errors=errors)
    change = done.change
    messages.success(
        request,
        MESSAGES["gold_imported"].format(
            marked=done.marked,
            s=plural(done.marked),
            name=upload.name,
            added=change.added,
            already=change.already,
            assigned=change.assigned,
            s_assigned=plural(change.assigned),
        ),
    )
    return redirect("annotation:calibration", pk=campaign.pk)
