"""A campaign of three judges with five finished pairs and one open, for the adjudication
tests: the ``setup`` fixture (tests/annotation/conftest.py) and the grades it uses."""

from annotation import services
from annotation.models import Assignment


def grade_all(campaign, judges, grades):
    """grades: {(qid, docno): (g_j0, g_j1, g_j2)}; None skips."""
    for (qid, docno), values in grades.items():
        for judge, value in zip(judges, values, strict=True):
            assignment = Assignment.objects.get(
                pair__topic__qid=qid, pair__document__docno=docno, judge=judge
            )
            if value is None:
                services.skip_assignment(assignment_id=assignment.pk, judge=judge, reason="x")
            else:
                services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=value)


GRADES = {
    ("1", "d0"): (2, 2, 2),  # unanimous
    ("1", "d1"): (0, 3, 3),  # majority 3, median 3, straddles, spread 3
    ("1", "d2"): (0, 1, 2),  # no majority; median 1; straddles (threshold 1), spread 2
    ("2", "d0"): (1, 2, 1),  # majority 1, median 1, spread 1, all relevant
    ("2", "d1"): (None, None, None),  # everyone skipped
    # ("2", "d2") stays open
}
