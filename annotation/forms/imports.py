"""Forms that upload a file into a campaign: topics, documents, pairs, judgments made elsewhere."""

from __future__ import annotations

from django import forms

from annotation import formats
from annotation.models import EXTERNAL_JUDGE_KINDS


class UploadForm(forms.Form):
    # No size check here: common/uploads.py refuses a body over MAX_UPLOAD_MB with 413
    # before it is read, so a file that reaches a form is within the limit.
    file = forms.FileField(allow_empty_file=False)


def _format_choices(accepted: dict[str, str]) -> list[tuple[str, str]]:
    return [("", "Detect from the file"), *accepted.items()]


class TopicsImportForm(UploadForm):
    format = forms.ChoiceField(
        choices=_format_choices(formats.TOPIC_FORMATS), required=False, label="Format"
    )


class DocumentsImportForm(UploadForm):
    format = forms.ChoiceField(
        choices=_format_choices(formats.DOCUMENT_FORMATS), required=False, label="Format"
    )


class PairsImportForm(UploadForm):
    pass


class JudgmentsImportForm(UploadForm):
    """Judgments made elsewhere (annotation/services/imports.py)."""

    format = forms.ChoiceField(
        choices=_format_choices(formats.JUDGMENT_FORMATS), required=False, label="Format"
    )
    judge_kind = forms.ChoiceField(
        choices=[("", "Machines for UMBRELA, outside people otherwise"), *EXTERNAL_JUDGE_KINDS],
        required=False,
        label="The file's judges are",
    )
    judge_name = forms.CharField(
        max_length=150,
        required=False,
        label="Judge",
        help_text="Required for a qrels file; for another file, takes every grade as this judge's.",
    )
    mapping = forms.CharField(
        required=False,
        max_length=5000,
        label="Grade mapping",
        help_text="When the file's grades are not the scale's: 0:0, 1:1, 2:1, 3:2, 4:3 or "
        "Perfect=3; Mostly Good=2; So-so=1; Bad=0.",
    )
    add_missing_pairs = forms.BooleanField(
        required=False, label="Add pairs missing from the pool (otherwise they are refused)"
    )
