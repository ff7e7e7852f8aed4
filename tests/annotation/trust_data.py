"""A campaign for the certified-leaderboard and gullibility-gate tests: a lead, two judges
(overlap 1), four topics of fifteen documents, three stored runs pooled at depth 10 (60
pairs), and documents whose text says "evidence" as many times as a stated rule wants: the
honest scripted machine (tests/llm_server.py honest_grade) grades by that count, the humans
(``grade_sample``) by ``truth``, which differs from it on every fifth document."""

from __future__ import annotations

from django.contrib.auth.models import Group

from annotation import services
from annotation.models import Assignment, AssignmentStatus, Document, Topic
from annotation.services import campaign_files
from evaluation import services as evaluation_services

QUERIES = {
    "1": "ocean tides moon",
    "2": "volcano lava eruption",
    "3": "honey bee colony",
    "4": "glacier ice melt",
}
DOCS = 15


def truth(docno: str) -> int:
    """The humans' grade of a document: d<q>-<i> is graded i mod 4 (0 for a third of them)."""
    i = int(docno.split("-")[1])
    return 0 if i % 3 == 0 else i % 4


def machine_says(docno: str) -> int:
    """What the honest machine reads in the text: the truth, one higher on every fifth."""
    i = int(docno.split("-")[1])
    return min(3, truth(docno) + (1 if i % 5 == 0 else 0))


def text_of(qid: str, docno: str) -> str:
    evidence = " ".join(["It offers evidence."] * machine_says(docno))
    return f"A passage numbered {docno} about something. It has several sentences. {evidence}"


def run_file(name: str, order) -> bytes:
    lines = []
    for qid in QUERIES:
        docnos = sorted((f"d{qid}-{i}" for i in range(DOCS)), key=order)[:10]
        lines += [f"{qid} Q0 {d} {r} {20 - r}.0 {name}" for r, d in enumerate(docnos, start=1)]
    return ("\n".join(lines) + "\n").encode()


def person(django_user_model, name, role, password=None):
    account = django_user_model.objects.create_user(name, password=password)
    account.groups.add(Group.objects.get_or_create(name=role)[0])
    return account


def trust_world(django_user_model, *, password=None):
    lead = person(django_user_model, "lead", "lead", password)
    judges = [person(django_user_model, f"judge{i}", "judge", password) for i in range(2)]
    campaign = services.create_campaign(lead=lead, name="Trust 2026", overlap=1, judges=judges)
    for qid, query in QUERIES.items():
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    runs = [
        evaluation_services.import_run(
            source=run_file("best", lambda d: (-truth(d), d)), filename="best.run", system="best"
        ),
        evaluation_services.import_run(
            source=run_file("middle", lambda d: (int(d.split("-")[1]) % 7, d)),
            filename="middle.run",
            system="middle",
        ),
        evaluation_services.import_run(
            source=run_file("worst", lambda d: (truth(d), d)), filename="worst.run", system="worst"
        ),
    ]
    campaign_files.pool_stored_runs(campaign=campaign, runs=runs, depth=10)
    for document in Document.objects.filter(campaign=campaign).select_related("campaign"):
        qid = document.docno[1:].split("-")[0]
        document.text = text_of(qid, document.docno)
        document.save(update_fields=["text"])
    return campaign, lead, judges, runs


def grade_open(campaign, *, limit=None) -> int:
    """The judges grade their open assignments with the truth; how many they graded."""
    open_work = Assignment.objects.filter(pair__campaign=campaign, status=AssignmentStatus.OPEN)
    done = 0
    for assignment in open_work.select_related("pair__document", "judge").order_by("pk")[:limit]:
        services.record_judgment(
            assignment_id=assignment.pk,
            judge=assignment.judge,
            grade=truth(assignment.pair.document.docno),
        )
        done += 1
    return done
