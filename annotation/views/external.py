"""Judgments from anywhere, for a campaign's lead: the judges of three kinds, the machine
settings, and importing grades made elsewhere (inline: the file is read in the request, at
most settings.MAX_UPLOAD_MB; a file of more grades than a request may write, SYNC_WRITE_ROWS,
goes to a job), with every import's provenance."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import formats, forms, services, tasks
from annotation.access import get_campaign_for_lead
from annotation.services import campaign_files, imports
from annotation.services.external import judge_roster
from evaluation.trec import TrecFormatError
from jobs.services.limits import TooLargeForRequest, sync_write_limit

MESSAGES = {
    "imported": "{name}: {summary}",
    "refused": "Nothing imported: {name} has {total} problem{s}.",
    "settings_saved": "Saved the machine settings.",
}


def render_judgments(
    request, campaign, *, status: int = 200, form=None, errors=None, settings_form=None
):
    settings_form = settings_form or forms.MachineSettingsForm(
        campaign=campaign,
        initial={
            field: getattr(campaign, field)
            for field in forms.MachineSettingsForm.base_fields
            if field != "gate_points"
        }
        | {"gate_points": round(100 * campaign.gate_threshold, 4)},
    )
    context = {
        "campaign": campaign,
        "roster": judge_roster(campaign=campaign),
        "imports": campaign.imports.select_related("imported_by")[:50],
        "form": form or forms.JudgmentsImportForm(),
        "settings_form": settings_form,
        "errors": errors,
        "formats": formats.JUDGMENT_FORMATS,
        "scale": campaign.grades,
        "max_mb": settings.MAX_UPLOAD_MB,
    }
    return render(request, "annotation/judgments.html", context, status=status)


@login_required
@require_GET
def judgments(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    return render_judgments(request, campaign)


@require_POST
@login_required
def judgments_import(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.JudgmentsImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return render_judgments(request, campaign, status=400, form=form)
    data = form.cleaned_data
    upload = data["file"]
    choices = {
        "fmt": data["format"] or None,
        "judge_kind": data["judge_kind"] or None,
        "judge_name": data["judge_name"],
        "add_missing_pairs": data["add_missing_pairs"],
    }
    try:
        mapping = imports.parse_mapping(data["mapping"])
        result = imports.import_judgments(
            campaign=campaign,
            source=upload,
            file_name=upload.name,
            user=request.user,
            mapping=mapping,
            max_rows=sync_write_limit(),
            **choices,
        )
    except TooLargeForRequest:
        # More grades than a request may write: a job imports them (its page shows how).
        job = campaign_files.start_import_job(
            campaign=campaign,
            upload=upload,
            user=request.user,
            what="judgments",
            task=tasks.import_judgments_job,
            mapping=mapping,
            **choices,
        )
        return redirect(job)
    except TrecFormatError as error:
        errors = {
            "summary": MESSAGES["refused"].format(
                name=upload.name, total=error.total, s="" if error.total == 1 else "s"
            ),
            "lines": [str(line) for line in error.errors],
            "more": error.more,
        }
        return render_judgments(request, campaign, status=400, form=form, errors=errors)
    except ValidationError as error:
        errors = {"summary": " ".join(error.messages), "lines": [], "more": 0}
        return render_judgments(request, campaign, status=400, form=form, errors=errors)
    messages.success(
        request, MESSAGES["imported"].format(name=upload.name, summary=result.summary())
    )
    return redirect("annotation:judgments", pk=campaign.pk)


@require_POST
@login_required
def machine_settings(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.MachineSettingsForm(request.POST, campaign=campaign)
    if form.is_valid():
        changes = dict(form.cleaned_data)
        points = changes.pop("gate_points", None)
        if points is not None:
            changes["gate_threshold"] = points / 100
        try:
            services.update_campaign(campaign=campaign, **changes)
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                for problem in problems:
                    form.add_error(field if field in form.fields else None, problem)
        else:
            messages.success(request, MESSAGES["settings_saved"])
            return redirect("annotation:judgments", pk=campaign.pk)
    return render_judgments(request, campaign, status=400, settings_form=form)
