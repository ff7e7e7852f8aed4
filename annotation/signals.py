"""Grades as a Prometheus counter: ``judging_grades_total{action}``, one increment per
judgment change once it commits (grades, regrades, skips, undos and notes). Registered here,
by the app that owns the grades, so config/metrics.py (which serves /metrics) knows nothing
of annotation's models; AnnotationConfig.ready connects it."""

from django.db import transaction
from django.db.models.signals import post_save
from prometheus_client import Counter

from annotation.models import JudgmentChange

GRADES = Counter(
    "judging_grades", "Judgment changes committed, by kind (annotation.JudgmentChange).", ["action"]
)


def _count_grade(sender, instance, created, **kwargs):
    if created:
        action = instance.action
        transaction.on_commit(lambda: GRADES.labels(action).inc())


def connect_signals() -> None:
    post_save.connect(_count_grade, sender=JudgmentChange, dispatch_uid="metrics-grades")
