"""The demo instance (``manage.py demo``, so ``make run``): one login per role, and a real test
collection made into everything a newcomer looks at. README.md, "The demo".

The collection (evaluation/collection) is the Python and Django FAQs with the documentation
around them, read where Debian installs it, or the small fallback inside every Python. It is
written to DATA_DIR/collection as files, and those files go through the product's own
importers: the known answers become a qrels version, the seven rankers' runs are uploaded and
scored, two campaigns get topics and documents and are pooled from the runs. The demo judge
has one campaign to judge; three simulated judges (evaluation/collection/judges.py, labelled
as simulated on the page) have finished the other. With QRELSMITH_LLM_BASE_URL set, that
campaign also gets a machine judge pointed at it.

Each part is made once: running the demo again changes nothing and builds nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.services.roles import Role
from annotation.llm.prompts import DEFAULT_TEMPLATE
from annotation.models import Assignment, Campaign
from annotation.services import campaign_files, machine_judges
from annotation.services.campaigns import create_campaign, pool_from_runs
from annotation.services.judging import record_judgment
from evaluation import collection, services, trec
from evaluation.collection import files, judges, rankers
from evaluation.models import QrelsVersion, Run

USERS = [
    # username, password, role (None: superuser)
    ("admin", "admin-demo", None),
    ("lead", "lead-demo", Role.LEAD),
    ("judge", "judge-demo", Role.JUDGE),
    ("engineer", "engineer-demo", Role.ENGINEER),
]
QRELS = "faq-answers"
CAMPAIGN = "Python and Django FAQ"
PANEL_CAMPAIGN = "Python and Django FAQ (judged by three)"
TOPICS = 8  # per campaign
DEPTH = 10  # pool depth: the top 10 of each of the seven runs
KEY_ENV = machine_judges.KEY_ENV_PREFIX + "DEMO"  # the demo machine judge's key, if any

GUIDELINES = """\
Grade how well the **passage** answers the question, as a reader of the documentation who
asked it would judge. Read the description and the narrative first.

- **3, perfectly relevant**: it answers the question; you could stop reading here.
- **2, highly relevant**: it gives most of the answer, or the answer to a slightly narrower
  question.
- **1, related**: same subject, but it does not answer the question (a reference section the
  answer points to, a neighbouring question).
- **0, irrelevant**: another subject, or it only shares some words with the question.

Passages are sections of the documentation (their link opens the public page); a long section
is split into parts, so judge the part you see.
"""

Say = Callable[[str], None]


def make_demo(*, source: str = "auto", doc_root: Path | None = None, say: Say = print) -> None:
    """Make what is missing of the demo (see the module), all in one transaction. Raises
    collection.SourceMissing, before anything is made, when ``source`` names a
    documentation package that is not installed."""
    made = QrelsVersion.objects.filter(name=QRELS).exists() and all(
        Campaign.objects.filter(name=name).exists() for name in (CAMPAIGN, PANEL_CAMPAIGN)
    )
    built = None
    if not made:
        built = _build(source, doc_root or collection.sources.DOC_ROOT, say)
    with transaction.atomic():
        _users()
        if built is not None:
            _import(*built, say=say)
    say("Demo logins (username / password):")
    for username, password, role in USERS:
        say(f"  {role or 'admin':<9} {username} / {password}")


def _users() -> None:
    User = get_user_model()
    for username, password, role in USERS:
        user, created = User.objects.get_or_create(username=username)
        if created or not user.check_password(password):
            user.set_password(password)
        user.is_staff = user.is_superuser = role is None
        user.save()
        if role is not None:
            user.groups.add(Group.objects.get(name=role))


def _build(source: str, doc_root: Path, say: Say):
    """The collection, its runs, and the folder its files are written to."""
    started = time.perf_counter()
    built = collection.build_collection(source, doc_root=doc_root)
    for note in built.notes:
        say(note)
    runs = rankers.run_rankers(built.passages, built.topics)
    folder = settings.DATA_DIR / "collection"
    files.write_collection(built, runs, folder, about={"made_by": "manage.py demo"})
    say(
        f"Collection: {len(built.passages):,} passages and {len(built.topics):,} topics from "
        f"{'; '.join(built.sources)}, {len(runs)} rankers, in "
        f"{time.perf_counter() - started:.1f} s; its files are in {folder}."
    )
    return built, runs, folder


def _import(built, runs, folder: Path, *, say: Say) -> None:
    """The files through the product's importers: qrels, runs and the two campaigns."""
    origin = "; ".join(built.sources)
    User = get_user_model()
    engineer = User.objects.get(username="engineer")
    lead = User.objects.get(username="lead")
    if not QrelsVersion.objects.filter(name=QRELS).exists():
        _qrels_and_runs(folder, origin, engineer, say)
    chosen = _chosen_topics([topic.qid for topic in built.topics])
    runs_made = list(Run.objects.filter(system__name__in=rankers.RANKERS))
    if not Campaign.objects.filter(name=CAMPAIGN).exists():
        campaign = create_campaign(
            lead=lead,
            name=CAMPAIGN,
            description=f"Judge the top {DEPTH} passages of the seven demo rankers for "
            f"{TOPICS} questions of the Python and Django FAQs. Passages: {origin}.",
            guidelines=GUIDELINES,
            judges=[User.objects.get(username="judge")],
        )
        change = _fill(campaign, folder, chosen[0::2], runs_made)
        say(f"Created {campaign.name}: {change.added} pairs for the demo judge.")
    if not Campaign.objects.filter(name=PANEL_CAMPAIGN).exists():
        _panel(lead, folder, chosen[1::2], runs_made, built.qrels, runs, origin, say)


def _qrels_and_runs(folder: Path, origin: str, engineer, say: Say) -> None:
    """The known answers as a qrels version; each ranker's run uploaded and scored."""
    qrels = services.import_qrels(
        source=(folder / "qrels.txt").read_bytes(),
        filename="qrels.txt",
        name=QRELS,
        description="Known answers of the FAQ questions (grade 3: the FAQ's own answer; 1: a "
        f"section the answer links to; everything else unjudged). From {origin}.",
        user=engineer,
    )
    for name in rankers.RANKERS:
        run = services.import_run(
            source=(folder / "runs" / f"{name}.txt").read_bytes(),
            filename=f"{name}.txt",
            system=name,
            new_system={"description": rankers.DESCRIPTIONS[name], "tags": ["demo"]},
            user=engineer,
        )
        services.evaluate_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
    say(f"Created {qrels.label} and {len(rankers.RANKERS)} scored runs.")


def _chosen_topics(qids: list[str]) -> list[str]:
    """2 x TOPICS topics spread evenly over the collection (both manuals, every FAQ page)."""
    wanted = min(2 * TOPICS, len(qids))
    return [qids[i * len(qids) // wanted] for i in range(wanted)]


def _fill(campaign: Campaign, folder: Path, qids: list[str], runs: list[Run]):
    """The campaign's topics (``qids`` of topics.jsonl), every passage as a document, and
    the pool: the top DEPTH of each run."""
    wanted = set(qids)
    lines = (folder / "topics.jsonl").read_bytes().splitlines(keepends=True)
    topics = b"".join(line for line in lines if json.loads(line)["qid"] in wanted)
    campaign_files.import_topics(campaign=campaign, source=topics, filename="topics.jsonl")
    campaign_files.import_documents(
        campaign=campaign, source=folder / "documents.jsonl", filename="documents.jsonl"
    )
    return pool_from_runs(
        campaign=campaign,
        run_frames=[services.load_run_frame(run) for run in runs],
        depth=DEPTH,
        runs=runs,
    )


def _panel(lead, folder, qids, runs_made, qrels, run_texts, origin, say: Say) -> None:
    """The campaign the simulated panel has judged, every pair by all three."""
    User = get_user_model()
    panel = []
    for simulated in judges.PANEL:
        user, created = User.objects.get_or_create(username=simulated.name)
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(Group.objects.get(name=Role.JUDGE))
        panel.append(user)
    names = ", ".join(judge.name for judge in judges.PANEL)
    campaign = create_campaign(
        lead=lead,
        name=PANEL_CAMPAIGN,
        description=f"Simulated judges ({names}) graded every pair: their grades come from a "
        "noise model around the known answers and the rankers' agreement (README, 'The "
        "demo'), not from people. Read their agreement, settle the disagreements and publish "
        f"qrels. Passages: {origin}.",
        guidelines=GUIDELINES,
        overlap=len(panel),
        judges=panel,
    )
    _fill(campaign, folder, qids, runs_made)
    rankings = {name: _ranking(text) for name, text in run_texts.items()}
    assignments = list(
        Assignment.objects.filter(pair__campaign=campaign).select_related(
            "judge", "pair__topic", "pair__document"
        )
    )
    pairs = {(a.pair.topic.qid, a.pair.document.docno) for a in assignments}
    latent = judges.latent_grades(pairs, qrels=qrels, rankings=rankings)
    by_name = {simulated.name: simulated for simulated in judges.PANEL}
    for assignment in assignments:
        qid, docno = assignment.pair.topic.qid, assignment.pair.document.docno
        grade = judges.simulated_grade(
            by_name[assignment.judge.username], latent[qid, docno], qid=qid, docno=docno
        )
        record_judgment(
            assignment_id=assignment.pk, judge=assignment.judge, grade=grade, seconds=12.0
        )
    say(f"Created {campaign.name}: {len(pairs)} pairs, each graded by {names} (simulated).")
    make_machine_judge(campaign, lead, say)


def _ranking(run_text: str) -> dict[str, list[str]]:
    """qid -> docnos in the run's order (rank order: rankers.run_text writes them so)."""
    frame = trec.read_run(run_text.encode(), name="run")
    ranking: dict[str, list[str]] = {}
    for qid, docno in frame.select("qid", "docno").iter_rows():
        ranking.setdefault(qid, []).append(docno)
    return ranking


def make_machine_judge(campaign: Campaign, lead, say: Say) -> None:
    """A machine judge for the panel's campaign at the endpoint the environment names."""
    if not settings.LLM_BASE_URL:
        say(
            "Machine judge: none made. Set QRELSMITH_LLM_BASE_URL to an OpenAI-compatible "
            "endpoint (and QRELSMITH_LLM_MODEL) to have the demo make one (README, 'The demo')."
        )
        return
    try:
        machine = machine_judges.create_machine_judge(
            campaign=campaign,
            model_name=settings.LLM_MODEL,
            base_url=settings.LLM_BASE_URL,
            api_key_env=KEY_ENV if os.environ.get(KEY_ENV) else "",
            template=DEFAULT_TEMPLATE,
            created_by=lead,
        )
    except ValidationError as error:
        say(f"Machine judge: not made ({' '.join(error.messages)})")
        return
    say(f"Created the machine judge {machine.judge.name} at {machine.base_url}.")
