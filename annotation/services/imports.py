"""Importing judgments made elsewhere into a campaign (issue 12 part 1, issue 17 part 6).

One operation, :func:`import_judgments`, for the page, the API and ``manage.py
import_judgments``: read the file (annotation.formats.read_judgments), put every grade on
the campaign's scale (the lead's mapping, or a refusal naming the grades outside it), find
every topic, document and pair (refusing unknown topics and documents with file:line errors;
adding pairs missing from the pool or refusing them, as the lead chooses), then store it all
in one transaction or nothing. The file's judges become the campaign's outside people or
machines (ExternalJudge); every grade stored or changed points at the import (JudgmentImport:
file name, SHA-256, who, when). The same file again changes nothing and records nothing.
"""

from __future__ import annotations

import hashlib

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import formats
from annotation.models import (
    Campaign,
    ImportFormat,
)
from annotation.services.external import EXTERNAL_KINDS, check_judge_name
from annotation.services.import_plan import MESSAGES, ImportPlan, ImportResult
from common.uploads import max_upload_bytes
from evaluation.services import read_upload
from evaluation.trec import MAX_ERRORS
from jobs.services.limits import TooLargeForRequest

_SETTING = object()


def parse_mapping(text: str) -> dict[str, int]:
    """The lead's mapping text as {label: grade}; ValidationError naming the entry."""
    try:
        return formats.parse_mapping(text)
    except ValueError as error:
        raise ValidationError(MESSAGES["bad_mapping"].format(problem=error)) from None


def import_judgments(
    *,
    campaign: Campaign,
    source,
    file_name: str,
    user,
    fmt: str | None = None,
    judge_kind: str | None = None,
    judge_name: str = "",
    mapping: dict[str, int] | None = None,
    add_missing_pairs: bool = False,
    max_bytes=_SETTING,
    max_errors: int = MAX_ERRORS,
    max_rows: int | None = None,
) -> ImportResult:
    """Import the file's grades into the campaign, all or nothing.

    ``fmt``: one of ImportFormat (None: told from the content). ``judge_kind``: what the
    file's judges are (``outside`` people or ``machine``s; by default machines for UMBRELA,
    outside people otherwise). ``judge_name``: the judge of a
    qrels file (required there); for the other formats, when given, every grade of the file
    is taken as this one judge's. ``mapping``: {grade or label in the file: grade on the
    scale}, required when the file's grades are not the scale's. ``add_missing_pairs``: add
    pairs missing from the pool (source "graded", not given to this campaign's judges until
    the next assignment) instead of refusing them. ``max_bytes``: the file's limit after
    decompression (default settings.MAX_UPLOAD_MB; None: none, for the command line).
    ``max_rows``: a request's SYNC_WRITE_ROWS; a file with more grades raises
    jobs.services.limits.TooLargeForRequest once read, before anything is checked or stored (the page
    and the API then hand it to a job: annotation.tasks.import_judgments_job).

    Raises TrecFormatError (file:line problems, nothing stored) or ValidationError (a bad
    choice). The same file with the same choices again returns a result with ``record``
    None: nothing changed.
    """
    if fmt not in (None, "", *ImportFormat.values):
        raise ValidationError(
            MESSAGES["unknown_format"].format(fmt=fmt, choices=", ".join(ImportFormat.values))
        )
    if judge_kind not in (None, "", *EXTERNAL_KINDS):
        raise ValidationError(MESSAGES["unknown_kind"].format(kind=judge_kind))
    judge_name = check_judge_name(judge_name) if (judge_name or "").strip() else ""
    mapping = {str(k).strip().casefold(): int(v) for k, v in (mapping or {}).items()}
    grades = campaign.grades
    for label, grade in mapping.items():
        if grade not in grades:
            problem = MESSAGES["mapping_off_scale"].format(label=label, grade=grade)
            raise ValidationError(MESSAGES["bad_mapping"].format(problem=problem))
    if max_bytes is _SETTING:
        max_bytes = max_upload_bytes()
    data = read_upload(source)
    sha256 = hashlib.sha256(data).hexdigest()
    name = file_name or "upload"
    plan = ImportPlan(campaign, judge_name, judge_kind, mapping, add_missing_pairs, max_rows)
    # The plan's problems (unknown topics and documents, grades off the scale, pairs not in
    # the pool...) are listed with the file's own in one answer.
    parsed = formats.read_judgments(
        data,
        name=name,
        fmt=fmt or None,
        max_bytes=max_bytes,
        max_errors=max_errors,
        check=plan.check,
    )
    if max_rows is not None and len(parsed.records) > max_rows:
        raise TooLargeForRequest(
            count=len(parsed.records), what="grades", instead=MESSAGES["as_job"]
        )
    plan.name, plan.max_errors = name, max_errors
    options = {"judge_name": judge_name, "add_missing_pairs": add_missing_pairs}
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        plan.check_judges()
        return plan.store(
            user=user,
            sha256=sha256,
            fmt=parsed.fmt,
            options=options,
            skipped=parsed.skipped,
        )
