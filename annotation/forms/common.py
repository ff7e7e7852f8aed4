"""What the lead's forms share: limits, the messages tests assert, and the choice of judges."""

from __future__ import annotations

from django import forms

from annotation import access, services

# PositiveSmallIntegerField's ceiling: the form refuses more instead of the database failing.
MAX_OVERLAP = 32767

SCALE_CHOICES = [("0-3", "0–3 (TREC Deep Learning)"), ("0-5", "0–5")]

MESSAGES = {
    "label_required": "Grade {grade} needs a label.",
    "grade_in_use": (
        "Judgments already use grade {grade}; a {scale} scale cannot hold it. Keep the "
        "larger scale."
    ),
    "not_a_judge_user": "Choose a user in the judge group.",
    "already_judge": "{user} already judges this campaign.",
    "not_a_judge": services.MESSAGES["not_a_judge"],
    "same_judge": "Choose another judge to move the work to.",
    "unknown_topic": "This campaign has no topic {qid!r}.",
    "no_topics": "Import topics first: pooling keeps only the campaign's topics.",
    "no_runs": "Choose at least one run.",
    "unknown_pair": (
        "The pool has no pair {qid} × {docno}: add it first (a pairs file, pooling, or a gold "
        "file, which adds its pairs)."
    ),
}


def judge_users(teams=None):
    """Users who may judge (annotation.access.judge_users; of ``teams``), by name."""
    return access.judge_users(teams).order_by("username")


class JudgeChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, user):
        full = user.get_full_name()
        return f"{user.username} ({full})" if full else user.username


class JudgesField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, user):
        full = user.get_full_name()
        return f"{user.username} ({full})" if full else user.username
