"""Fixtures for the API tests: users by role, API clients logged in as them, and ``world``, a
small instance with one of everything (made on demand, per test)."""

from dataclasses import dataclass, field
from http.cookies import SimpleCookie

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import Membership, Team
from annotation import services as annotation
from annotation.models import (
    Assignment,
    Campaign,
    Document,
    GullibilityGate,
    Judgment,
    JudgmentImport,
    MachineAudit,
    MachineJudge,
    MachineRun,
    PairSource,
    Publication,
    Topic,
)
from annotation.services import adjudication, machine_judges, machine_runs
from annotation.services.imports import import_judgments
from evaluation import services as evaluation
from evaluation.models import (
    Evaluation,
    QrelsVersion,
    Run,
    Schedule,
    ScheduleAlert,
    ScheduleFiring,
    SearchEndpoint,
    SearchTrial,
    System,
)
from evaluation.services import schedules as schedule_service
from evaluation.services import search as search_service
from jobs.models import Job
from tests.worlds import made_once

QRELS = b"1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n2 0 d4 3\n"
RUN = b"1 Q0 d1 1 3.0 bm25\n1 Q0 d2 2 2.0 bm25\n2 Q0 d4 1 5.5 bm25\n2 Q0 d3 2 1.5 bm25\n"
OTHER_RUN = b"1 Q0 d2 1 9.0 dense\n1 Q0 d1 2 8.0 dense\n2 Q0 d3 1 7.0 dense\n"
TOPICS = b"1\tcheap flights\n2\tsourdough starter\n3\tnew topic\n"
DOCUMENTS = b'{"docno": "d9", "title": "Nine", "text": "Ninth document."}\n'


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def user_maker(user_model):
    """``make(username, *roles)``: a user with ``roles`` as groups (their roles in the default
    team); with ``team=``, as memberships of that team instead (and no group)."""

    def make(username: str, *roles: str, superuser: bool = False, team=None):
        if superuser:
            return user_model.objects.create_superuser(username, password=None)
        user = user_model.objects.create_user(username)  # no password: hashing is slow
        if roles and team is not None:
            for role in roles:
                Membership.objects.create(team=team, user=user, role=role)
        elif roles:
            user.groups.add(*Group.objects.filter(name__in=roles))
        return user

    return make


@pytest.fixture
def make_user(django_user_model):
    return user_maker(django_user_model)


@pytest.fixture
def api():
    """``api(user)``: an APIClient with ``user``'s session (``api()``: anonymous)."""

    def client_for(user=None) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_login(user)
        return client

    return client_for


@pytest.fixture
def run_jobs(django_capture_on_commit_callbacks):
    """``with run_jobs(): client.post(...)``: jobs are enqueued when the request's transaction
    commits, which a test's transaction never does; this runs the captured callbacks (the
    immediate task backend then runs the task in place)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@dataclass
class World:
    users: dict
    campaign: Campaign
    topic: Topic
    document: Document
    assignment: Assignment  # the judge's, graded 2
    other_assignment: Assignment  # the other judge's, graded 0
    judgment: Judgment
    qrels: QrelsVersion
    system: System
    run: Run
    evaluation: Evaluation
    job: Job  # the engineer's
    publication: Publication  # the campaign's two graded pairs, as qrels "robust" v1
    machine: MachineJudge | None = None  # a machine judge of the campaign, never run
    machine_run: MachineRun | None = None  # a run of it that has not started
    judgment_import: JudgmentImport | None = None  # a machine judge's grade of 1 d2
    machine_audit: MachineAudit | None = None  # an audit that found nothing to send
    search_endpoint: SearchEndpoint | None = None  # at an address nothing answers
    search_trial: SearchTrial | None = None  # the lead's sandbox trial of it, with an edit
    schedule: Schedule | None = None  # the lead's, of the search endpoint; never fired
    schedule_alert: ScheduleAlert | None = None  # its alert, not acknowledged
    machine_gate: GullibilityGate | None = None  # a finished gate of the machine that blocks
    other_team: Team | None = None  # the other team's: its users see nothing of the above
    sessions: dict = field(default_factory=dict)  # role -> session key (``logged_in_world``)

    @property
    def ids(self) -> dict:
        return {
            "campaign": self.campaign.pk,
            "topic": self.topic.pk,
            "document": self.document.pk,
            "pair": self.assignment.pair_id,
            "assignment": self.assignment.pk,
            "other_assignment": self.other_assignment.pk,
            "judgment": self.judgment.pk,
            "qrels": self.qrels.pk,
            "system": self.system.pk,
            "run": self.run.pk,
            "evaluation": self.evaluation.pk,
            "job": self.job.pk,
            "publication": self.publication.pk,
            "judgment_import": self.judgment_import.pk if self.judgment_import else 0,
            "judge": self.users["judge"].pk,
            "other_judge": self.users["other_judge"].pk,
            "spare_judge": self.users["spare_judge"].pk,
            "qid": self.topic.qid,
            "machine": self.machine.pk if self.machine else None,
            "machine_run": self.machine_run.pk if self.machine_run else None,
            "machine_audit": self.machine_audit.pk if self.machine_audit else None,
            "search_endpoint": self.search_endpoint.pk if self.search_endpoint else None,
            "search_trial": self.search_trial.pk if self.search_trial else None,
            "schedule": self.schedule.pk if self.schedule else None,
            "schedule_alert": self.schedule_alert.pk if self.schedule_alert else None,
            "machine_gate": self.machine_gate.pk if self.machine_gate else None,
        }


@pytest.fixture
def world(make_user, media_root) -> World:
    """A fresh ``build_world()`` for each test, with a MEDIA_ROOT of its own."""
    return build_world(make_user)


def logged_in_world() -> World:
    """``build_world()`` with a session per role (``signed_in``)."""
    from django.contrib.auth import get_user_model

    world = build_world(user_maker(get_user_model()))
    world.sessions = {role: session_of(user) for role, user in world.users.items()}
    return world


# build_world()'s world made once for a module (tests/worlds.py): a module whose tests need
# no transaction of their own opts in with ``def world(world_copy): return world_copy`` (each
# test gets its own copy), or, when its tests only read the world's ids and users, with
# ``def world(module_world, db): return module_world``.
world_made = made_once(logged_in_world)


@pytest.fixture(scope="module")
def module_world(world_made) -> World:
    """The module's one world itself, not a copy (the permission matrices, the contract)."""
    return world_made.world


def session_of(user) -> str:
    """The key of a session ``user`` is logged in with, as ``force_login`` makes one."""
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def signed_in(client, world, role: str):
    """``client`` with no cookie but the session ``logged_in_world`` logged ``role`` in with
    once (none for "anonymous"): what ``force_login`` gives, without its dozen milliseconds
    (a session row, the user's last login, the signals) before each of a matrix's requests.
    A request that changes the session changes it inside the test's transaction, which is
    rolled back."""
    client.cookies = SimpleCookie()
    if role in world.sessions:
        client.cookies[settings.SESSION_COOKIE_NAME] = world.sessions[role]
    return client


def build_world(make_user) -> World:
    """A campaign led by ``lead`` with topics 1 and 2, documents d1–d4, every pair in the
    pool, overlap 1 between ``judge`` and ``other_judge`` (``spare_judge`` judges nothing);
    one graded assignment each; qrels, a system with a run and its evaluation; a job of the
    engineer's. ``other_lead`` leads nothing here; ``nobody`` holds no role. All of it is
    in the default team (the roles are groups); ``other_team_lead``, ``other_team_engineer``
    and ``other_team_judge`` hold their roles in another team, "Web search", alone."""
    other_team = Team.objects.create(name="Web search", slug="web-search")
    users = {
        "nobody": make_user("nobody"),
        "judge": make_user("ann", "judge"),
        "other_judge": make_user("bob", "judge"),
        "spare_judge": make_user("cy", "judge"),
        "lead": make_user("lea", "lead"),
        "other_lead": make_user("leo", "lead"),
        "engineer": make_user("eng", "engineer"),
        "admin": make_user("root", superuser=True),
        "other_team_lead": make_user("olga", "lead", team=other_team),
        "other_team_engineer": make_user("otto", "engineer", team=other_team),
        "other_team_judge": make_user("oona", "judge", team=other_team),
    }
    campaign = annotation.create_campaign(
        lead=users["lead"],
        name="Robust",
        judges=[users["judge"], users["other_judge"]],
    )
    for qid, query in (("1", "cheap flights"), ("2", "sourdough starter")):
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    annotation.add_pairs(
        campaign=campaign,
        pairs=[("1", "d1"), ("1", "d2"), ("2", "d3"), ("2", "d4")],
        source=PairSource.IMPORTED,
    )
    Document.objects.filter(campaign=campaign, docno="d1").update(title="One", text="First.")
    # Every pooled document has text, so judges may grade it (a pair without text waits).
    Document.objects.filter(campaign=campaign, text="").update(text="A passage to grade.")
    mine = Assignment.objects.filter(judge=users["judge"]).order_by("pk").first()
    theirs = Assignment.objects.filter(judge=users["other_judge"]).order_by("pk").first()
    judgment = annotation.record_judgment(assignment_id=mine.pk, judge=users["judge"], grade=2)
    annotation.record_judgment(assignment_id=theirs.pk, judge=users["other_judge"], grade=0)
    qrels = evaluation.import_qrels(source=QRELS, filename="dl.qrels", name="dl")
    run = evaluation.import_run(
        source=RUN, filename="bm25.run", system="bm25", user=users["engineer"]
    )
    scored = evaluation.evaluate_run(run=run, qrels=qrels, measure_specs=["ndcg_cut.10", "map"])
    job = Job.objects.create(
        kind="evaluation.import_run", title="Import", created_by=users["engineer"]
    )
    publication = adjudication.publish(
        campaign=campaign, user=users["lead"], leave_out_undecided=True
    )
    machine = machine_judges.create_machine_judge(
        campaign=campaign,
        model_name="judge-7b",
        base_url="https://llm.example.invalid/v1",
        max_retries=0,
    )
    judgment_import = import_judgments(
        campaign=campaign,
        source=b"1 0 d2 1\n",
        file_name="machine.qrels",
        user=users["lead"],
        judge_name="world-machine",
        judge_kind="machine",
    ).record
    endpoint = search_service.create_search_endpoint(
        name="world-search",
        kind="elasticsearch",
        url="https://search.example.invalid/docs/_search",
        max_retries=0,
    )
    schedule = schedule_service.create_schedule(
        user=users["lead"],
        name="world-nightly",
        endpoint=endpoint.pk,
        qrels=qrels.pk,
        campaign=campaign.pk,
        cron_expression="0 3 * * *",
        k=10,
    )
    blocking_rise = {"probe": "stuffed", "label": "The query's words stuffed in", "pairs": 40}
    blocking_rise.update(original_rate=0.1, probe_rate=0.4, rise=0.3, low=0.2, high=0.4)
    machine_gate = GullibilityGate.objects.create(
        machine=machine,
        threshold=0.02,
        relevant_from=1,
        max_pairs=40,
        seed=1,
        pairs=40,
        rises=[{**blocking_rise, "exceeds": True}],
        blocked=True,
        conclusive=True,
        finished_at=timezone.now(),
    )
    return World(
        other_team=other_team,
        machine_gate=machine_gate,
        search_trial=world_trial(endpoint, qrels, users["lead"]),
        schedule=schedule,
        schedule_alert=world_alert(schedule, run, scored),
        machine_audit=MachineAudit.objects.create(campaign=campaign, kind="disagreement"),
        machine=machine,
        machine_run=machine_runs.prepare_run(machine=machine, scope="pool"),
        users=users,
        campaign=campaign,
        topic=campaign.topics.get(qid="1"),
        document=campaign.documents.get(docno="d1"),
        assignment=mine,
        other_assignment=theirs,
        judgment=judgment,
        qrels=qrels,
        system=run.system,
        run=run,
        evaluation=scored,
        job=job,
        publication=publication,
        judgment_import=judgment_import,
        search_endpoint=endpoint,
    )


def world_trial(endpoint: SearchEndpoint, qrels: QrelsVersion, lead) -> SearchTrial:
    """A finished sandbox trial of ``endpoint`` (its runs made no lines: the address answers
    nothing), as evaluation.services.sandbox.run_trial keeps one."""
    template = endpoint.template.replace("{{query}}", "{{query}} {{description}}")
    arm = {"run": None, "error": "", "failed": [], "failed_count": 0, "query_count": 2}
    return SearchTrial.objects.create(
        endpoint=endpoint,
        base_version=endpoint.version,
        template=template,
        mapping=endpoint.mapping,
        versions=[endpoint.version],
        query_set={"qrels": qrels.pk},
        query_set_label=f"qrels {qrels.label}",
        qrels=qrels,
        measure="nDCG@10",
        k=10,
        arms=[
            {**arm, "label": "v1 (saved)", "version": 1, "per_topic": {"1": {"ndcg_cut_10": 0.5}}},
            {**arm, "label": "edit", "version": None, "per_topic": {"1": {"ndcg_cut_10": 0.7}}},
        ],
        result={
            "measures": ["ndcg_cut_10"],
            "specs": ["ndcg_cut.10"],
            "options": {"measures": ["ndcg_cut.10"], "complete": True},
            "qids": ["1", "2"],
        },
        created_by=lead,
    )


def world_alert(schedule, run, scored) -> ScheduleAlert:
    """An alert of the world's schedule: a firing (with the world's run) that dropped."""
    from django.utils import timezone

    firing = ScheduleFiring.objects.create(
        schedule=schedule,
        slot=timezone.now(),
        fired_at=timezone.now(),
        status="succeeded",
        run=run,
        evaluation=scored,
        mean=0.5,
    )
    return ScheduleAlert.objects.create(
        schedule=schedule,
        firing=firing,
        measure="ndcg_cut_10",
        previous=0.9,
        current=0.5,
        threshold=0.1,
        reasons=["threshold"],
        created_at=timezone.now(),
    )
