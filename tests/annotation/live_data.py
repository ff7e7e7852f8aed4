"""A running campaign for the live leaderboard's tests: a lead, three judges (overlap 1),
three topics, and two stored runs pooled at depth 3: "good" ranks the documents judges will
find relevant (g*, grade 3) first, "weak" the ones they will not (w*, grade 0)."""

from __future__ import annotations

from django.contrib.auth.models import Group

from annotation import services
from annotation.models import Assignment, Document, Topic
from annotation.services import campaign_files
from evaluation import services as evaluation_services

GOOD = b"".join(
    f"{q} Q0 g{q}{i} {i} {10 - i}.0 good\n".encode() for q in (1, 2, 3) for i in range(1, 4)
)
WEAK = b"".join(
    f"{q} Q0 w{q}{i} {i} {10 - i}.0 weak\n".encode() for q in (1, 2, 3) for i in range(1, 4)
)


def person(django_user_model, name, role, password=None):
    account = django_user_model.objects.create_user(name, password=password)
    account.groups.add(Group.objects.get_or_create(name=role)[0])
    return account


def live_world(django_user_model, *, password=None):
    lead = person(django_user_model, "lead", "lead", password)
    judges = [person(django_user_model, f"judge{i}", "judge", password) for i in range(3)]
    campaign = services.create_campaign(lead=lead, name="Live 2026", overlap=1, judges=judges)
    for qid in ("1", "2", "3"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    runs = [
        evaluation_services.import_run(source=GOOD, filename="good.run", system="good"),
        evaluation_services.import_run(source=WEAK, filename="weak.run", system="weak"),
    ]
    campaign_files.pool_stored_runs(campaign=campaign, runs=runs, depth=3)
    # Judges' queues hold only pairs whose document has text (pooling adds docnos bare).
    Document.objects.filter(campaign=campaign).update(text="A passage.")
    return campaign, lead, judges, runs


def truth(docno: str) -> int:
    return 3 if docno.startswith("g") else 0


def grade(campaign, *, judge=None, limit=None) -> int:
    """Grade open assignments (of one judge, or all) with their true grade; how many."""
    open_work = Assignment.objects.filter(pair__campaign=campaign, status="open")
    if judge is not None:
        open_work = open_work.filter(judge=judge)
    done = 0
    for assignment in open_work.select_related("pair__document", "judge").order_by("pk")[:limit]:
        services.record_judgment(
            assignment_id=assignment.pk,
            judge=assignment.judge,
            grade=truth(assignment.pair.document.docno),
        )
        done += 1
    return done
