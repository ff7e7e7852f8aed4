"""The downloads of a campaign's grades: every judgment with its judge (CSV and the API's
pages), the decision log, and a published version's provenance (one row per grade, where it
came from). Rows only; the views, the API and manage.py export_judgments write them."""

from __future__ import annotations

from django.db.models import CharField, F, Value
from django.db.models.functions import Coalesce, Concat

from annotation.models import (
    Assignment,
    Campaign,
    ExternalGrade,
    JudgeKind,
    LeadDecision,
    Publication,
)

# judge: a username for a person judging here, ``outside:NAME`` or ``machine:NAME`` for the
# others (ExternalJudge.label); judge_kind says which; imported_from names the file an
# imported grade came from (empty for grades given here).
JUDGMENT_HEADER = [
    "qid",
    "docno",
    "judge",
    "grade",
    "skip_reason",
    "note",
    "seconds",
    "time",
    "judge_kind",
    "imported_from",
]


PROVENANCE_HEADER = [
    "qid",
    "docno",
    "grade",
    "basis",
    "judges",
    "lead_reason",
    "lead",
    "decided_at",
    "rule_in_force",
]


DECISION_HEADER = [
    "qid",
    "docno",
    "grade",
    "reason",
    "lead",
    "decided_at",
    "rule_in_force",
    "replaces",
]


def judgment_rows(campaign: Campaign):
    """Every judge's own grade of every pair, for the raw downloads, under
    :data:`JUDGMENT_HEADER`: the judgments of people judging here (grade None when skipped),
    then merged in order the grades of outside people and machines (imported, or recorded
    here by a machine judge run; their time is when the source says it was judged, else
    when it was stored). One query (a UNION), ordered by qid, docno and judge, so the API
    pages it like any list."""
    here = (
        Assignment.objects.filter(pair__campaign=campaign, judgment__isnull=False)
        .annotate(
            row_qid=F("pair__topic__qid"),
            row_docno=F("pair__document__docno"),
            row_judge=F("judge__username"),
            row_grade=F("judgment__grade"),
            row_skip=F("judgment__skip_reason"),
            row_note=F("judgment__note"),
            row_seconds=F("judgment__seconds"),
            row_time=F("judgment__updated_at"),
            row_kind=Value(JudgeKind.HERE, output_field=CharField()),
            row_source=Value("", output_field=CharField()),
        )
        .values_list(*_ROW_FIELDS)
        .order_by()  # the models' default orders: a compound query orders only as a whole
    )
    elsewhere = (
        ExternalGrade.objects.filter(judge__campaign=campaign)
        .annotate(
            row_qid=F("pair__topic__qid"),
            row_docno=F("pair__document__docno"),
            row_judge=Concat("judge__kind", Value(":"), "judge__name", output_field=CharField()),
            row_grade=F("grade"),
            row_skip=Value("", output_field=CharField()),
            row_note=F("note"),
            row_seconds=F("seconds"),
            row_time=Coalesce("judged_at", "updated_at"),
            row_kind=F("judge__kind"),
            row_source=Coalesce("source__file_name", Value(""), output_field=CharField()),
        )
        .values_list(*_ROW_FIELDS)
        .order_by()
    )
    return here.union(elsewhere, all=True).order_by("row_qid", "row_docno", "row_judge")


_ROW_FIELDS = (
    "row_qid",
    "row_docno",
    "row_judge",
    "row_grade",
    "row_skip",
    "row_note",
    "row_seconds",
    "row_time",
    "row_kind",
    "row_source",
)


def judgment_table(campaign: Campaign):
    """:func:`judgment_rows` as text cells, under :data:`JUDGMENT_HEADER`."""
    for qid, docno, judge, grade, skip, note, seconds, at, kind, source in judgment_rows(campaign):
        yield (
            qid,
            docno,
            judge,
            "" if grade is None else grade,
            skip,
            note,
            "" if seconds is None else f"{seconds:.1f}",
            at.isoformat(),
            kind,
            source,
        )


def provenance_table(publication: Publication):
    """Each published grade with its basis, every judge's grade and, for a lead's decision,
    the reason, the lead, when, and the campaign's rule in force then, under
    :data:`PROVENANCE_HEADER`."""
    for g in publication.grades.select_related("decision__decided_by"):
        judges = " ".join(
            f"{judge}={'skip' if grade is None else grade}"
            for judge, grade in sorted(g.judges.items())
        )
        d = g.decision
        lead = [d.reason, _username(d.decided_by), d.decided_at.isoformat(), d.rule] if d else []
        yield g.qid, g.docno, g.grade, g.basis, judges, *(lead or ["", "", "", ""])


def decision_table(campaign: Campaign):
    """The decision log: every lead's decision on the campaign's pairs, oldest first, with
    the rule in force when it was made and the decision it replaced, under
    :data:`DECISION_HEADER`."""
    decisions = LeadDecision.objects.filter(pair__campaign=campaign).select_related(
        "pair__topic", "pair__document", "decided_by"
    )
    for d in decisions:
        yield (
            d.pair.topic.qid,
            d.pair.document.docno,
            d.grade,
            d.reason,
            _username(d.decided_by),
            d.decided_at.isoformat(),
            d.rule,
            d.supersedes_id or "",
        )


def _username(user) -> str:
    return user.get_username() if user is not None else ""
