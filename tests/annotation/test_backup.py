"""Backing up a whole campaign to one JSON file and restoring it (issue "Trust", item 7):
the round trip keeps every field of every row, timestamps and history order included; a
corrupt file is refused with its JSON path and leaves the database as it was."""

import copy
import datetime as dt
import gzip
import io
import json
import os
import uuid
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from accounts.models import Team
from accounts.services.roles import Role
from annotation import backup, services
from annotation.models import (
    Assignment,
    AuditPair,
    Campaign,
    CampaignJudge,
    CertifiedDesign,
    DesignPair,
    Document,
    ExternalGrade,
    ExternalJudge,
    GullibilityGate,
    Judgment,
    JudgmentChange,
    JudgmentImport,
    LeadDecision,
    MachineAnswer,
    MachineAudit,
    MachineJudge,
    MachineRun,
    Pair,
    PairSource,
    Publication,
    PublishedGrade,
    Topic,
)
from annotation.services import adjudication, final_grades, machine_judges, machine_runs
from annotation.services.audits import send_audit
from annotation.services.external import add_external_judge, record_machine_grade
from annotation.services.imports import import_judgments
from annotation.services.tallies import tally_pairs
from common.outbound import parse_allow
from common.secrets import seal
from evaluation import services as evaluation
from evaluation.models import QrelsEntry, QrelsVersion
from tests.llm_server import KEY, ChatServer, Reply
from tests.rows import row_counts

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]

User = get_user_model()


# --- a campaign that uses every feature -----------------------------------------------------


def make_user(username, *roles, **fields):
    user = User.objects.create_user(username, **fields)
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


def build_campaign(name="Web Track 2026 — backup"):
    """Topics, documents with text and placeholders, pooled and gold pairs, three judges (one
    added late, one removed with done work kept), grades, a skip, an undo, a regrade, notes,
    retried requests, decisions (one superseded, one by a lead who left), two publications."""
    lead = make_user("lead", Role.LEAD, first_name="Lea", last_name="Dé", email="lea@example.org")
    co_lead = make_user("co-lead", Role.LEAD)
    judges = [make_user(f"judge{i}", Role.JUDGE, first_name=f"J{i}") for i in range(3)]
    leaver = make_user("leaver", Role.JUDGE)
    campaign = services.create_campaign(
        lead=lead,
        name=name,
        description="Ünïcode, <b>markup</b> and a\nnewline.",
        scale="0-3",
        guidelines="# Guidelines\n\nJudge the *page*, not the site.",
        overlap=2,
        relevance_threshold=2,
        adjudication_rule="majority",
        gold_min_accuracy=0.75,
        judges=[judges[0], judges[1], leaver],
    )
    for qid in ("201", "101", "150"):  # not in qid order: creation order must survive
        Topic.objects.create(
            campaign=campaign,
            qid=qid,
            query=f"query {qid} “quoted”",
            description=f"what {qid} is about",
            narrative="" if qid == "150" else "Relevant documents say why.",
        )
    Document.objects.create(
        campaign=campaign, docno="d1", title="Tïtle", text="Body\ttext", url="https://x.org/1"
    )
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, f"d{i}") for q in ("201", "101") for i in (1, 2, 3)],
        source=PairSource.POOLED,
    )
    services.set_gold(campaign=campaign, entries=[("150", "g1", 2)])
    services.add_judge(campaign=campaign, judge=judges[2])

    for n, assignment in enumerate(
        Assignment.objects.filter(pair__campaign=campaign).order_by("pk")
    ):
        services.record_judgment(
            assignment_id=assignment.pk,
            judge=assignment.judge,
            grade=(n * 7) % 4,
            seconds=1.5 + n / 3,
            request_id=uuid.uuid4() if n % 2 else None,
        )
    a = Assignment.objects.filter(pair__campaign=campaign, judge=judges[0]).order_by("pk")[0]
    services.record_judgment(assignment_id=a.pk, judge=judges[0], grade=3, seconds=2.25)
    services.set_note(assignment_id=a.pk, judge=judges[0], note="Changed my mind: see §2.")
    b = Assignment.objects.filter(pair__campaign=campaign, judge=judges[1]).order_by("pk")[1]
    services.skip_assignment(assignment_id=b.pk, judge=judges[1], reason="Page did not load")
    c = Assignment.objects.filter(pair__campaign=campaign, judge=judges[1]).order_by("pk")[2]
    services.undo_judgment(assignment_id=c.pk, judge=judges[1])
    services.record_judgment(assignment_id=c.pk, judge=judges[1], grade=1, seconds=0.5)
    d = Assignment.objects.filter(pair__campaign=campaign, judge=judges[2]).order_by("pk")[0]
    services.undo_judgment(assignment_id=d.pk, judge=judges[2])  # stays open
    services.remove_judge(campaign=campaign, judge=leaver)

    for state in final_grades.pair_states(campaign=campaign):
        if not state.decided:
            adjudication.decide_pair(
                campaign=campaign,
                pair_id=state.pair_id,
                lead=co_lead,
                grade=1,
                reason=f"settles {state.qid}/{state.docno}",
                based_on=None,
            )
    first = LeadDecision.objects.filter(pair__campaign=campaign).order_by("pk").first()
    adjudication.decide_pair(
        campaign=campaign,
        pair_id=first.pair_id,
        lead=lead,
        grade=3,
        reason="On second thought: it answers it.",
        based_on=first.pk,
    )
    published = adjudication.publish(campaign=campaign, user=lead)
    services.add_pairs(campaign=campaign, pairs=[("101", "d9")], source=PairSource.UNJUDGED)
    # The same grades again (d9 is left out): a copy, confirmed.
    adjudication.publish(
        campaign=campaign,
        user=None,
        description="With d9 open.",
        leave_out_undecided=True,
        identical_to=published.qrels_id,
    )
    co_lead.delete()  # their decisions stay, decided by nobody
    # Outside people and machines (format version 2): a crowd worker's grades, a machine
    # judge run here (its configuration; the key from the environment) and its grades, and
    # the settings of the pool ordering and of machine grades.
    crowd = add_external_judge(campaign=campaign, name="crowd worker 17", kind="outside")
    machine = machine_judges.create_machine_judge(
        campaign=campaign,
        model_name="judge-7b",
        base_url="https://llm.example.invalid/v1",
        api_key_env="QRELSMITH_LLM_KEY_7B",
        input_price=0.15,
    )
    for n, pair in enumerate(Pair.objects.filter(campaign=campaign).order_by("pk")[:3]):
        ExternalGrade.objects.create(
            judge=crowd, pair=pair, grade=n % 4, note="sure" if n else "", seconds=4.5 * n
        )
        record_machine_grade(
            judge=machine.judge, pair_id=pair.pk, grade=(n + 1) % 4, details={"raw": f"Grade: {n}"}
        )
    # Version 3: where imported grades came from (a crowd file that regrades the crowd
    # worker and grades a new pair; a machine's file grading a pair no person is given), a
    # machine judge run here twice (raw answers, tokens, failures kept with their raw text),
    # and an audit that sends the machine-only pair to the judges.
    import_judgments(
        campaign=campaign,
        source=b"qid,docno,judge,grade,note\n101,d2,crowd worker 17,0,regraded\n150,d1,w2,1,\n",
        file_name="crowd.csv",
        user=lead,
        add_missing_pairs=True,
    )
    import_judgments(
        campaign=campaign,
        source=b"qid,docno,judge,grade\n150,d2,umbrela-gpt,2\n",
        file_name="umbrela.csv",
        user=None,
        judge_kind="machine",
        add_missing_pairs=True,
    )
    # The key from the environment, as a backup never carries a key.
    with ChatServer() as server, mock.patch.dict(os.environ, {"QRELSMITH_LLM_KEY_13B": KEY}):
        server.plan("query 201", Reply("Highly relevant", prompt_tokens=90))
        runner = machine_judges.create_machine_judge(
            campaign=campaign,
            model_name="judge-13b",
            base_url=server.base_url,
            api_key_env="QRELSMITH_LLM_KEY_13B",
            concurrency=1,  # answers stored in the pool's order
            created_by=lead,
            timeout=5,
            output_price=0.6,
        )
        for scope, topic in (("pool", None), ("topic", campaign.topics.get(qid="101"))):
            run = machine_runs.prepare_run(machine=runner, scope=scope, topic=topic, user=lead)
            machine_runs.run_machine_judge(run=run)
    send_audit(campaign=campaign, kind="sample", size=1, seed=7, user=lead)
    Campaign.objects.filter(pk=campaign.pk).update(
        pool_ordering="bandit", machine_grades_fill=True, machine_grades_adjudicate=True
    )
    tally_pairs(campaign=campaign)  # machine grades now count, as update_campaign does
    add_trust(campaign, runner, lead)
    add_stop_rule(campaign)
    return Campaign.objects.get(pk=campaign.pk)


def add_trust(campaign, machine, lead):
    """Version 4 (issue 33): the suggestion settings and the gate threshold, a certified
    design with its audit and every pool pair's probability, and two gates of the machine
    (one blocked and overridden, one that had not finished), a call of a pair since gone."""
    Campaign.objects.filter(pk=campaign.pk).update(
        suggestions_from=machine, blind_share=0.35, gate_threshold=0.05
    )
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("pk"))
    audit = MachineAudit.objects.create(
        campaign=campaign, kind="certified", size=2, seed=11, sent=2, assigned=0, sent_by=lead
    )
    design = CertifiedDesign.objects.create(
        campaign=campaign,
        machine=machine,
        strategy="stratified",
        seed=11,
        budget=0.25,
        budget_is_share=True,
        strata="topic×grade",
        pool_size=len(pairs),
        chosen=2,
        expected_size=2.0,
        runs=[],
        audit=audit,
        withdrawn=1,
        created_by=lead,
        redraws=[{"strategy": "uniform", "seed": 10, "budget": 2.0, "redrawn_by": "lead"}],
    )
    for n, pair in enumerate(pairs):
        DesignPair.objects.create(
            design=design,
            pair=pair,
            probability=0.25 if n % 2 else 1.0,
            stratum=n % 3,
            chosen=n < 2,
        )
    overridden = GullibilityGate.objects.create(
        machine=machine,
        threshold=0.05,
        relevant_from=2,
        max_pairs=600,
        seed=3,
        pairs=2,
        calls=[[pairs[0].pk, 0, 3, 2, None], [pairs[1].pk, 1, 1, 1, 1], [10**9, 0, 0, 0, 0]],
        rises=[{"probe": "stuffed", "rise": 0.5, "low": 0.1, "high": 0.8}],
        failures=1,
        blocked=True,
        conclusive=True,
        started_by=lead,
        override_reason="Stuffing is not what our corpus has.",
        overridden_by=lead,
    )
    GullibilityGate.objects.filter(pk=overridden.pk).update(
        finished_at=overridden.created_at, overridden_at=overridden.created_at
    )
    GullibilityGate.objects.create(
        machine=machine, threshold=0.05, relevant_from=2, max_pairs=10, seed=4, started_by=None
    )
    Publication.objects.filter(campaign=campaign).update(
        machine_gates={machine.judge.label: {"verdict": "overridden", "gate": overridden.pk}}
    )


def add_stop_rule(campaign):
    """Version 5: a stop rule other than the defaults that has paused judging, with its
    record (services/stopping.apply_stop_rule writes it so)."""
    at = "2026-11-27T10:15:00.250000+00:00"
    Campaign.objects.filter(pk=campaign.pk).update(
        stop_rule="top",
        stop_confidence=0.9,
        stop_top=2,
        paused_at=dt.datetime.fromisoformat(at),
        stop_event={
            "rule": "top",
            "confidence": 0.9,
            "top": 2,
            "measure": "ndcg_cut_10",
            "described": "the top 2 runs settled at 90% (nDCG@10)",
            "spent": 7,
            "undecided": 3,
            "at": at,
        },
    )


def ordered(model) -> list[int]:
    return list(model.objects.order_by("pk").values_list("pk", flat=True))


def natural_keys() -> dict:
    """pk → natural key for every model a row can point at."""
    decisions = LeadDecision.objects.order_by("pk").values_list("pk", flat=True)
    return {
        User: dict(User.objects.values_list("pk", "username")),
        Campaign: dict(Campaign.objects.values_list("pk", "name")),
        Topic: dict(Topic.objects.values_list("pk", "qid")),
        Document: dict(Document.objects.values_list("pk", "docno")),
        Pair: {
            p.pk: (p.topic.qid, p.document.docno)
            for p in Pair.objects.select_related("topic", "document")
        },
        ExternalJudge: dict(ExternalJudge.objects.values_list("pk", "name")),
        MachineJudge: dict(MachineJudge.objects.values_list("pk", "judge__name")),
        ExternalGrade: {
            g.pk: (g.judge.name, g.pair.topic.qid, g.pair.document.docno)
            for g in ExternalGrade.objects.select_related("judge", "pair__topic", "pair__document")
        },
        **{
            model: {pk: f"{model.__name__} #{n}" for n, pk in enumerate(ordered(model))}
            for model in (JudgmentImport, MachineRun, MachineAudit, CertifiedDesign)
        },
        Assignment: {
            a.pk: (a.pair.topic.qid, a.pair.document.docno, a.judge.username)
            for a in Assignment.objects.select_related("pair__topic", "pair__document", "judge")
        },
        LeadDecision: {pk: f"decision #{n}" for n, pk in enumerate(decisions)},
        QrelsVersion: {q.pk: q.label for q in QrelsVersion.objects.all()},
        Team: {t.pk: t.slug for t in Team.objects.all()},
        Publication: {p.pk: p.qrels.label for p in Publication.objects.select_related("qrels")},
    }


DUMPED = [
    Campaign,
    CampaignJudge,
    Topic,
    Document,
    Pair,
    Assignment,
    Judgment,
    JudgmentChange,
    LeadDecision,
    QrelsVersion,
    QrelsEntry,
    Publication,
    PublishedGrade,
    ExternalJudge,
    ExternalGrade,
    MachineJudge,
    JudgmentImport,
    MachineRun,
    MachineAnswer,
    MachineAudit,
    AuditPair,
    CertifiedDesign,
    DesignPair,
    GullibilityGate,
]


def dump() -> dict:
    """Every field of every row of the campaign models (ids replaced by natural keys), rows in
    id order, and every user's name, email and roles. Written without the backup code, so a
    field the backup forgets shows up here."""
    keys = natural_keys()
    result = {}
    for model in DUMPED:
        fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        rows = []
        for obj in model.objects.order_by("pk"):
            row = {}
            for field in fields:
                value = getattr(obj, field.attname)
                if field.is_relation and value is not None:
                    value = keys[field.related_model][value]
                row[field.name] = value
            if model is GullibilityGate:  # calls name pairs by id
                row["calls"] = [[keys[Pair].get(c[0]), *c[1:]] for c in row["calls"]]
            rows.append(row)
        result[model.__name__] = rows
    result["users"] = [
        (u.username, u.first_name, u.last_name, u.email, sorted(g.name for g in u.groups.all()))
        for u in User.objects.order_by("username").prefetch_related("groups")
    ]
    return result


def delete_everything() -> None:
    """Empty every table the backup fills, users included, as on a fresh instance."""
    # Grades protect their import, so they go before the campaign (and its imports).
    for model in (PublishedGrade, Publication, ExternalGrade, CertifiedDesign):
        model.objects.all().delete()
    while LeadDecision.objects.exists():  # each protects the one it supersedes
        LeadDecision.objects.filter(superseded_by__isnull=True).delete()
    Campaign.objects.all().delete()
    QrelsVersion.objects.all().delete()
    User.objects.all().delete()


def export(campaign, path: Path) -> str:
    out = io.StringIO()
    call_command("export_campaign", str(campaign.pk), "-o", str(path), stdout=out)
    return out.getvalue()


def import_file(path: Path, *args) -> str:
    out = io.StringIO()
    call_command("import_campaign", str(path), *args, stdout=out)
    return out.getvalue()


def read_document(path: Path) -> dict:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return json.loads(data)


# Version 3's sections beyond version 2's.
V3_SECTIONS = ("imports", "machine_runs", "machine_answers", "audits")
# Version 4's sections and campaign keys beyond version 3's.
V4_SECTIONS = ("certified_design", "gates")
V4_CAMPAIGN = ("gate_threshold", "blind_share", "suggestions_from")
# Version 5's campaign keys beyond version 4's (its sections are version 4's).
V5_CAMPAIGN = ("stop_rule", "stop_confidence", "stop_top", "paused_at", "stop_event")


def as_version_4(document: dict) -> dict:
    """The document as version 4 wrote it."""
    document = copy.deepcopy(document)
    document["version"] = 4
    for key in V5_CAMPAIGN:
        del document["campaign"][key]
    return document


def as_before_version_5(before: dict) -> None:
    """What a backup older than version 5 restores: no stop rule, judging not paused
    (``before`` changed to say so)."""
    before["Campaign"][0].update(
        stop_rule="none", stop_confidence=0.95, stop_top=3, paused_at=None, stop_event={}
    )


def as_version_3(document: dict) -> dict:
    """The document as version 3 wrote it."""
    document = as_version_4(document)
    document["version"] = 3
    for key in V4_SECTIONS:
        del document[key]
    for key in V4_CAMPAIGN:
        del document["campaign"][key]
    for publication in document["publications"]:
        del publication["machine_gates"]
    return document


def as_before_version_4(before: dict, after: dict) -> None:
    """What a backup older than version 4 restores: no design, no gates, the settings'
    defaults, publications without their gates, no stop rule (``before`` changed to say so)."""
    as_before_version_5(before)
    for model in ("CertifiedDesign", "DesignPair", "GullibilityGate"):
        assert after.pop(model) == [], model
        before.pop(model)
    before["Campaign"][0].update(suggestions_from=None, blind_share=0.2, gate_threshold=0.02)
    for row in before["Publication"]:
        row["machine_gates"] = {}


def without_export_time(document: dict) -> dict:
    return {k: v for k, v in document.items() if k != "exported_at"}


# --- round trip ---------------------------------------------------------------------------


@pytest.mark.parametrize("filename", ["backup.json", "backup.json.gz"])
def test_a_campaign_survives_export_and_import_into_an_empty_instance(tmp_path, filename):
    campaign = build_campaign()
    before = dump()
    assert len(before["LeadDecision"]) >= 2 and before["LeadDecision"][-1]["supersedes"]
    assert [len(before[m]) for m in ("Publication", "QrelsVersion")] == [2, 2]
    assert any(d["decided_by"] is None for d in before["LeadDecision"])
    # Version 3's rows are all there, pointing at each other.
    assert [len(before[m]) for m in ("JudgmentImport", "MachineRun", "MachineAudit")] == [2, 2, 2]
    assert {g["source"] for g in before["ExternalGrade"]} == {
        None,
        "JudgmentImport #0",
        "JudgmentImport #1",
    }
    regraded = [g for g in before["ExternalGrade"] if g["note"] == "regraded"]
    assert [(g["judge"], g["source"]) for g in regraded] == [
        ("crowd worker 17", "JudgmentImport #0")
    ]
    answers = before["MachineAnswer"]
    assert {a["run"] for a in answers} == {"MachineRun #0", "MachineRun #1"}
    assert any(a["recorded"] for a in answers)
    assert ("not_a_grade", "Highly relevant") in {(a["failure"], a["raw"]) for a in answers}
    assert before["AuditPair"][0]["pair"] == ("150", "d2")
    assert before["MachineAudit"][0]["sent_by"] == "lead"
    path = tmp_path / filename
    said = export(campaign, path)
    assert said.startswith(f"Wrote campaign {campaign.name!r} (id {campaign.pk}) to {path}")
    document = read_document(path)

    delete_everything()
    assert not Campaign.objects.exists() and not User.objects.exists()
    said = import_file(path)

    after = dump()
    users_after = after.pop("users")
    users_before = before.pop("users")
    assert after == before
    # co-lead was deleted before the export; everybody else comes back with their roles.
    assert users_after == [u for u in users_before if u[0] != "co-lead"]
    restored = Campaign.objects.get()
    assert said.splitlines()[0].startswith(f"Created campaign {campaign.name!r} (id {restored.pk})")
    assert "Created qrels web-track-2026-backup v1, web-track-2026-backup v2." in said
    assert (
        "Created 5 user(s), inactive and without a password (an admin activates them and "
        "sets a password): judge0, judge1, judge2, lead, leaver." in said
    )
    for user in User.objects.all():
        assert not user.is_active and not user.has_usable_password() and not user.is_staff
    # The restored campaign exports to the same document.
    again = tmp_path / f"again-{filename}"
    export(restored, again)
    assert without_export_time(read_document(again)) == without_export_time(document)


def test_the_judges_queue_and_the_history_keep_their_order(tmp_path):
    """Orderings that break ties by id (topics in a judge's queue, history entries with the
    same time) come back the same."""
    campaign = build_campaign()
    judge = User.objects.get(username="judge0")

    def queue_and_history(campaign, judge):
        ids = services.judge_queue(campaign=campaign, judge=judge)
        pairs = {
            a.pk: (a.pair.topic.qid, a.pair.document.docno)
            for a in Assignment.objects.filter(pk__in=ids).select_related(
                "pair__topic", "pair__document"
            )
        }
        queue = [pairs[pk] for pk in ids]
        history = list(
            JudgmentChange.objects.filter(assignment__pair__campaign=campaign).values_list(
                "assignment__pair__topic__qid", "action", "changed_at"
            )
        )
        return queue, history

    before = queue_and_history(campaign, judge)
    export(campaign, tmp_path / "b.json")
    delete_everything()
    import_file(tmp_path / "b.json")
    assert queue_and_history(Campaign.objects.get(), User.objects.get(username="judge0")) == before


def test_key_order_in_the_file_does_not_matter(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    before = dump()

    def reversed_keys(value):
        if isinstance(value, dict):
            return {k: reversed_keys(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(v) for v in value]
        return value

    document = reversed_keys(read_document(tmp_path / "b.json"))
    (tmp_path / "r.json").write_text(json.dumps(document))
    delete_everything()
    import_file(tmp_path / "r.json")
    after = dump()
    after.pop("users"), before.pop("users")
    assert after == before


@pytest.mark.parametrize("filename", ["old.json", "old.json.gz"])
def test_a_backup_written_under_the_former_product_name_still_imports(tmp_path, filename):
    """Backups made before the rename (issue 15) say "relevance-studio-campaign"; the content
    is the same version 1, so they restore the campaign exactly."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    before = dump()
    document = read_document(tmp_path / "b.json")
    assert document["format"] == backup.FORMAT == "qrelsmith-campaign"
    text = json.dumps({**document, "format": "relevance-studio-campaign"}).encode()
    old = tmp_path / filename
    old.write_bytes(gzip.compress(text) if filename.endswith(".gz") else text)
    delete_everything()
    said = import_file(old)
    assert said.startswith(f"Created campaign {campaign.name!r}")
    after = dump()
    after.pop("users"), before.pop("users")
    assert after == before
    # Exported again, it carries the new name.
    export(Campaign.objects.get(), tmp_path / "again.json")
    assert read_document(tmp_path / "again.json")["format"] == "qrelsmith-campaign"


# --- importing next to existing data --------------------------------------------------------


def test_importing_a_published_campaign_twice_is_refused_and_changes_nothing(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    counts = row_counts()
    with pytest.raises(CommandError) as refused:
        import_file(tmp_path / "b.json")
    message = str(refused.value)
    assert message.startswith("nothing imported:\n")
    assert (
        f"b.json: publications[0].qrels: qrels web-track-2026-backup v1 already exists here, "
        f"published by campaign {campaign.name!r} (id {campaign.pk}); this backup seems "
        "imported already" in message
    )
    assert "publications[1].qrels: qrels web-track-2026-backup v2 already exists" in message
    assert row_counts() == counts


def test_a_campaign_without_publications_imports_again_as_a_second_campaign(tmp_path):
    lead = make_user("lead", Role.LEAD)
    campaign = services.create_campaign(lead=lead, name="Pilot", judges=[lead])
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source=PairSource.IMPORTED)
    export(campaign, tmp_path / "b.json")
    said = import_file(tmp_path / "b.json", "--no-create-users")  # everybody is here
    assert "Linked 1 existing user(s), left unchanged: lead." in said
    assert "Created" not in said.split("\n", 1)[1]
    assert Campaign.objects.filter(name="Pilot").count() == 2
    copy = Campaign.objects.exclude(pk=campaign.pk).get()
    assert copy.lead == lead and list(copy.judges.all()) == [lead]
    assert Assignment.objects.filter(pair__campaign=copy, judge=lead).count() == 1
    assert User.objects.get(username="lead").is_active  # an existing user is left alone


def test_an_identical_unpublished_qrels_version_is_reused(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    before = dump()
    # The campaign goes, its qrels versions stay.
    for model in (PublishedGrade, Publication, ExternalGrade, CertifiedDesign):
        model.objects.all().delete()
    while LeadDecision.objects.exists():
        LeadDecision.objects.filter(superseded_by__isnull=True).delete()
    Campaign.objects.all().delete()
    assert QrelsVersion.objects.count() == 2
    said = import_file(tmp_path / "b.json")
    assert "Reused qrels web-track-2026-backup v1, web-track-2026-backup v2" in said
    assert QrelsVersion.objects.count() == 2
    after = dump()
    assert after == before


def test_a_different_qrels_version_of_the_same_name_and_number_is_refused(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    delete_everything()
    evaluation.import_qrels(source=b"1 0 d1 1\n", filename="q.txt", name="web-track-2026-backup")
    counts = row_counts()
    with pytest.raises(
        CommandError,
        match=r"publications\[0\]\.qrels: qrels web-track-2026-backup "
        r"v1 already exists here with other grades",
    ) as refused:
        import_file(tmp_path / "b.json")
    assert "v2" not in str(refused.value)  # v2 is free: only v1 is in the way
    assert row_counts() == counts


def test_no_create_users_refuses_a_backup_naming_unknown_people(tmp_path):
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    delete_everything()
    make_user("lead", Role.LEAD)
    counts = row_counts()
    with pytest.raises(CommandError) as refused:
        import_file(tmp_path / "b.json", "--no-create-users")
    message = str(refused.value)
    assert "b.json: users[0].username: no user 'judge0' on this instance (--no-create-users" in (
        message
    )
    assert "'lead'" not in message and "'leaver'" in message
    assert row_counts() == counts


# --- refused files ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_backup_document(django_db_setup, django_db_blocker, tmp_path_factory):
    """The small campaign's backup document, made once for the refusal tests (each test
    changes a copy of it): the campaign is built and exported in a transaction that is then
    rolled back."""
    path = tmp_path_factory.mktemp("small-backup") / "b.json"
    loopback = override_settings(OUTBOUND_ALLOW=parse_allow(["127.0.0.1"]))
    with django_db_blocker.unblock(), loopback, transaction.atomic():
        export(build_campaign(), path)
        transaction.set_rollback(True)
    return read_document(path)


@pytest.fixture
def small_backup(small_backup_document, tmp_path, monkeypatch):
    """A small campaign's backup document (as a dict, this test's own copy) and a function
    that writes a variant of it and imports it, returning the refusal's message."""
    document = copy.deepcopy(small_backup_document)
    delete_everything()  # whatever came before, an empty instance

    monkeypatch.chdir(tmp_path)  # errors name the file as given: backup.json

    def refused(data: bytes | dict, name="backup.json") -> str:
        if isinstance(data, dict):
            data = json.dumps(data).encode()
        Path(name).write_bytes(data)
        counts = row_counts()
        with pytest.raises(CommandError) as error:
            import_file(Path(name))
        assert row_counts() == counts
        message = str(error.value)
        assert message.startswith("nothing imported:\n")
        return message.removeprefix("nothing imported:\n")

    return document, refused


def test_refusals_name_the_file_and_the_json_path(small_backup):
    document, refused = small_backup
    del document["topics"][2]["qid"]
    # Topic 150 has the gold pair and the two pairs the imports added.
    assert refused(document).splitlines() == [
        "backup.json: topics[2].qid: missing",
        "backup.json: pairs[6].qid: topic '150' is not in topics",
        "backup.json: pairs[8].qid: topic '150' is not in topics",
        "backup.json: pairs[9].qid: topic '150' is not in topics",
    ]


def edit(document: dict, change) -> dict:
    change(document)
    return document


def first_judgment(document):
    return next(j for j in document["judgments"] if j["grade"] is not None)


def drop_a_recorded_grade(document):
    answer = next(a for a in document["machine_answers"] if a["recorded"])
    key = (answer["judge"], answer["qid"], answer["docno"])
    document["external_grades"] = [
        g for g in document["external_grades"] if (g["judge"], g["qid"], g["docno"]) != key
    ]


def bump_grade(entry):
    entry[2] = (entry[2] + 1) % 4


CORRUPTIONS = {
    "not JSON": (
        lambda d: b'{"format": "qrelsmith-campaign",\n}',
        "backup.json: not valid JSON: Expecting property name enclosed in double quotes "
        "(line 2, column 1)",
    ),
    "not an object": (lambda d: b"[1, 2]", "the document must be a JSON object"),
    "nested too deeply": (lambda d: b"[" * 100_000, "not valid JSON: nested too deeply"),
    "a huge integer": (
        lambda d: json.dumps(d).replace('"version": 2', '"version": ' + "9" * 5000).encode(),
        "not valid JSON: Exceeds the limit (4300 digits) for integer string conversion",
    ),
    "not UTF-8": (lambda d: b'{"format": "\xff"}', "not UTF-8 text (byte 12)"),
    "NaN": (
        lambda d: json.dumps(
            edit(d, lambda x: x["judgments"][0].update(seconds=float("nan")))
        ).encode(),
        "not valid JSON: NaN is not a JSON number",
    ),
    "another format": (
        lambda d: edit(d, lambda x: x.update(format="trec-qrels")),
        "format: must be 'qrelsmith-campaign'",
    ),
    "a newer version": (
        lambda d: edit(d, lambda x: x.update(version=6)),
        "version: 6 is not a version this Qrelsmith reads (it reads versions 1, 2, 3, 4 and 5)",
    ),
    "version 4 with version 5's campaign keys": (
        lambda d: edit(d, lambda x: x.update(version=4)),
        "campaign.stop_rule: unknown key",
    ),
    "a stop rule nobody can choose": (
        lambda d: edit(d, lambda x: x["campaign"].update(stop_rule="never")),
        "campaign.stop_rule: 'never' is not one of none, adjacent, top",
    ),
    "a stop confidence of 1": (
        lambda d: edit(d, lambda x: x["campaign"].update(stop_confidence=1)),
        "campaign.stop_confidence: The confidence must be a number above 0.5 and below 1 "
        "(e.g. 0.95), got 1.0.",
    ),
    "a top-k rule with k 0": (
        lambda d: edit(d, lambda x: x["campaign"].update(stop_top=0)),
        "campaign.stop_top: k must be a whole number from 1 to 1,000, got 0.",
    ),
    "a stop record that is not an object": (
        lambda d: edit(d, lambda x: x["campaign"].update(stop_event=["paused"])),
        "campaign.stop_event: must be an object",
    ),
    "a stop record whose resume is not a time": (
        lambda d: edit(d, lambda x: x["campaign"]["stop_event"].update(resumed_at="yesterday")),
        "campaign.stop_event.resumed_at: 'yesterday' is not a date and time in ISO 8601",
    ),
    "version 3 with version 4's sections": (
        lambda d: edit(d, lambda x: x.update(version=3)),
        "certified_design: unknown key",
    ),
    "version 2 with version 3's sections": (
        lambda d: edit(d, lambda x: x.update(version=2)),
        "imports: unknown key",
    ),
    "version 1 with version 2's sections": (
        lambda d: edit(d, lambda x: x.update(version=1)),
        "external_judges: unknown key",
    ),
    "a grade of a judge not listed": (
        lambda d: edit(
            d,
            lambda x: x["external_grades"].append(
                {**x["external_grades"][0], "judge": "nobody-here"}
            ),
        ),
        "external_grades[10].judge: 'nobody-here' is not in external_judges",
    ),
    "an outside person with a machine's configuration": (
        lambda d: edit(
            d, lambda x: x["external_judges"][0].update(machine=x["external_judges"][1]["machine"])
        ),
        "external_judges[0].machine: only a machine judge has a configuration",
    ),
    "an external grade off the scale": (
        lambda d: edit(d, lambda x: x["external_grades"][0].update(grade=9)),
        "external_grades[0].grade: grade 9 is not on the campaign's scale (0, 1, 2, 3)",
    ),
    # Version 4: the suggestion settings, the certified design, the gates.
    "a suggested machine not listed": (
        lambda d: edit(d, lambda x: x["campaign"].update(suggestions_from="nobody")),
        "campaign.suggestions_from: 'nobody' is not in external_judges",
    ),
    "a blind share out of range": (
        lambda d: edit(d, lambda x: x["campaign"].update(blind_share=0.99)),
        "campaign.blind_share: must be between 0.05 and 0.95",
    ),
    "a gate threshold of 1": (
        lambda d: edit(d, lambda x: x["campaign"].update(gate_threshold=1)),
        "campaign.gate_threshold: must be a share from 0 up to (not including) 1",
    ),
    "a design's audit that is not a certified sample": (
        lambda d: edit(d, lambda x: x["certified_design"].update(audit=1)),
        "certified_design.audit: audits[0] is not a certified sample",
    ),
    "a design's audit not listed": (
        lambda d: edit(d, lambda x: x["certified_design"].update(audit=7)),
        "certified_design.audit: there is no audit 7 in audits",
    ),
    "a design pair twice": (
        lambda d: edit(
            d, lambda x: x["certified_design"]["pairs"].append(x["certified_design"]["pairs"][0])
        ),
        "certified_design.pairs[10]: the pair is already certified_design.pairs[0]",
    ),
    "a probability of 0": (
        lambda d: edit(d, lambda x: x["certified_design"]["pairs"][1].update(probability=0)),
        "certified_design.pairs[1].probability: must be above 0 and at most 1",
    ),
    "a design of an outside person": (
        lambda d: edit(d, lambda x: x["certified_design"].update(machine="crowd worker 17")),
        "certified_design.machine: 'crowd worker 17' is not a machine judge with a configuration",
    ),
    "a gate's call of a pair not in the pool": (
        lambda d: edit(d, lambda x: x["gates"][0]["calls"][0].__setitem__(1, "d404")),
        "gates[0].calls[0]: pair ('101', 'd404') is not in pairs",
    ),
    "a gate's call of the wrong shape": (
        lambda d: edit(d, lambda x: x["gates"][0]["calls"].append([1, 2])),
        "gates[0].calls[3]: must be [qid, docno, original, stuffed, instruction, shuffled]",
    ),
    "a gate overridden by nobody known": (
        lambda d: edit(d, lambda x: x["gates"][0].update(overridden_by="ghost")),
        "gates[0].overridden_by: user 'ghost' is not in users",
    ),
    # Version 3: imports, machine runs and answers, audits.
    "a bad hash": (
        lambda d: edit(d, lambda x: x["imports"][0].update(sha256="abc123")),
        "imports[0].sha256: 'abc123' is not a SHA-256 (64 lower-case hexadecimal digits)",
    ),
    "a hash in capitals": (
        lambda d: edit(
            d, lambda x: x["imports"][1].update(sha256=x["imports"][1]["sha256"].upper())
        ),
        "imports[1].sha256: ",
    ),
    "an import id twice": (
        lambda d: edit(d, lambda x: x["imports"][1].update(id=x["imports"][0]["id"])),
        "imports[1].id: 1 is already imports[0]",
    ),
    "an import of an unknown format": (
        lambda d: edit(d, lambda x: x["imports"][0].update(format="xlsx")),
        "imports[0].format: 'xlsx' is not one of table, jsonl, qrels, umbrela, autojudge",
    ),
    "a grade naming an import not in the file": (
        lambda d: edit(
            d, lambda x: next(g for g in x["external_grades"] if g["source"]).update(source=9)
        ),
        ".source: import 9 is not in imports",
    ),
    "a run of a judge without a configuration": (
        lambda d: edit(d, lambda x: x["machine_runs"][0].update(judge="umbrela-gpt")),
        "machine_runs[0].judge: 'umbrela-gpt' is not a machine judge with a configuration "
        "(external_judges[3])",
    ),
    "a run of a topic not in the file": (
        lambda d: edit(d, lambda x: x["machine_runs"][1].update(topic="999")),
        "machine_runs[1].topic: topic '999' is not in topics",
    ),
    "an answer for a pair not in the file": (
        lambda d: edit(d, lambda x: x["machine_answers"][0].update(docno="nope")),
        "machine_answers[0]: pair ('101', 'nope') is not in pairs",
    ),
    "an answer of a judge not in the file": (
        lambda d: edit(d, lambda x: x["machine_answers"][0].update(judge="nobody-here")),
        "machine_answers[0].judge: 'nobody-here' is not in external_judges",
    ),
    "an answer of an outside person": (
        lambda d: edit(d, lambda x: x["machine_answers"][0].update(judge="crowd worker 17")),
        "machine_answers[0].judge: 'crowd worker 17' is not a machine judge with a "
        "configuration (external_judges[0])",
    ),
    "an answer twice": (
        lambda d: edit(d, lambda x: x["machine_answers"].append(dict(x["machine_answers"][0]))),
        "already answered for the pair at machine_answers[0]",
    ),
    "an answer of a run not in the file": (
        lambda d: edit(d, lambda x: x["machine_answers"][0].update(run=99)),
        "machine_answers[0].run: run 99 is not in machine_runs",
    ),
    "an answer of another judge's run": (
        lambda d: edit(
            d, lambda x: x["machine_runs"][0].update(judge=x["external_judges"][1]["name"])
        ),
        ".run: machine_runs[0] is a run of another machine judge",
    ),
    "a graded answer without a grade": (
        lambda d: edit(
            d,
            lambda x: next(a for a in x["machine_answers"] if a["outcome"] == "graded").update(
                grade=None
            ),
        ),
        ".grade: a graded answer has a grade and a failed one has none (null)",
    ),
    "a failure that records a grade": (
        lambda d: edit(
            d,
            lambda x: next(a for a in x["machine_answers"] if a["outcome"] == "failed").update(
                recorded=True
            ),
        ),
        ".recorded: a failed answer records no grade",
    ),
    "a recorded answer whose grade is not in the file": (
        lambda d: edit(d, drop_a_recorded_grade),
        ".recorded: 'judge-13b-qrelsmith-umbrela-v1' has no grade of the pair in external_grades",
    ),
    "an audited pair not in the pool": (
        lambda d: edit(d, lambda x: x["audits"][0]["pairs"][0].update(docno="nope")),
        "audits[0].pairs[0]: pair ('150', 'nope') is not in pairs",
    ),
    "a pair sent by two audits": (
        lambda d: edit(
            d, lambda x: x["audits"].append({**x["audits"][0], "kind": "threshold", "seed": None})
        ),
        "audits[2].pairs[0]: the pair was already sent at audits[0].pairs[0]",
    ),
    "the same sample twice": (
        lambda d: edit(d, lambda x: x["audits"].append({**x["audits"][0], "pairs": []})),
        "audits[2]: the sample of seed 7 and size 1 is already audits[0]",
    ),
    "an audit by someone not in users": (
        lambda d: edit(d, lambda x: x["audits"][0].update(sent_by="nobody")),
        "audits[0].sent_by: user 'nobody' is not in users",
    ),
    "a pool ordering that does not exist": (
        lambda d: edit(d, lambda x: x["campaign"].update(pool_ordering="oracle")),
        "campaign.pool_ordering: 'oracle' is not one of random",
    ),
    "a setting that is not a boolean": (
        lambda d: edit(d, lambda x: x["campaign"].update(machine_grades_fill="yes")),
        "campaign.machine_grades_fill: must be true or false",
    ),
    "a scale of more grades than a campaign may have": (
        lambda d: edit(
            d,
            lambda x: x["campaign"].update(
                scale=[{"grade": g, "label": "g", "definition": ""} for g in range(200)]
            ),
        ),
        "campaign.scale: a scale has at most 101 grades (0 to 100); this one has 200",
    ),
    "a campaign description over its cap": (
        lambda d: edit(d, lambda x: x["campaign"].update(description="x" * 10_001)),
        "campaign.description: is longer than 10000 characters",
    ),
    "a topic narrative over its cap": (
        lambda d: edit(d, lambda x: x["topics"][0].update(narrative="x" * 20_001)),
        "topics[0].narrative: is longer than 20000 characters",
    ),
    "a missing section": (lambda d: edit(d, lambda x: x.pop("changes")), "changes: missing"),
    "an unknown key": (
        lambda d: edit(d, lambda x: x["pairs"][1].update(weight=2)),
        "pairs[1].weight: unknown key",
    ),
    "a key twice": (
        lambda d: json.dumps(d).replace('"qid":', '"qid": "x", "qid":', 1).encode(),
        "topics[0]: key 'qid' appears more than once",
    ),
    "a duplicate qid": (
        lambda d: edit(d, lambda x: x["topics"].append(dict(x["topics"][0]))),
        "topics[3].qid: '201' is already topics[0]",
    ),
    "a judgment for an unknown pair": (
        lambda d: edit(d, lambda x: first_judgment(x).update(docno="nope")),
        "'nope') is not in pairs",
    ),
    "a decision superseding an unknown one": (
        lambda d: edit(d, lambda x: x["decisions"][-1].update(supersedes=99)),
        "supersedes: decision 99 is not among the decisions listed before this one",
    ),
    "a second first decision": (
        lambda d: edit(d, lambda x: x["decisions"][-1].update(supersedes=None)),
        "supersedes: the pair's first decision is decisions[0]",
    ),
    "a grade off the scale": (
        lambda d: edit(d, lambda x: first_judgment(x).update(grade=4)),
        ".grade: grade 4 is not on the campaign's scale (0, 1, 2, 3)",
    ),
    "a gold grade off the scale": (
        lambda d: edit(
            d,
            lambda x: next(p for p in x["pairs"] if p["gold_grade"] is not None).update(
                gold_grade=-1
            ),
        ),
        ".gold_grade: grade -1 is not on the campaign's scale",
    ),
    "a slot beyond the overlap": (
        lambda d: edit(d, lambda x: x["assignments"][0].update(slot=5)),
        "assignments[0].slot: must be between 1 and the overlap (2)",
    ),
    "a judgment with neither grade nor skip": (
        lambda d: edit(d, lambda x: first_judgment(x).update(grade=None)),
        "a judgment needs a grade or a skip reason",
    ),
    "an unknown user": (
        lambda d: edit(d, lambda x: x["campaign"].update(lead="nobody")),
        "campaign.lead: user 'nobody' is not in users",
    ),
    "a time without zone": (
        lambda d: edit(d, lambda x: x["pairs"][0].update(added_at="2026-01-01T10:00:00")),
        "pairs[0].added_at: '2026-01-01T10:00:00' has no time zone",
    ),
    "a NUL character": (
        lambda d: edit(d, lambda x: x["documents"][0].update(text="a\x00b")),
        "documents[0].text: contains a NUL character",
    ),
    "a wrong type": (
        lambda d: edit(d, lambda x: x["assignments"][0].update(position="1")),
        "assignments[0].position: must be an integer",
    ),
    "an unknown status": (
        lambda d: edit(d, lambda x: x["assignments"][0].update(status="lost")),
        "assignments[0].status: 'lost' is not one of open, done, skipped",
    ),
    "a qrels checksum that does not match": (
        lambda d: edit(d, lambda x: bump_grade(x["publications"][0]["qrels"]["entries"][0])),
        "publications[0].qrels.checksum: does not match the entries",
    ),
    "a published grade naming an unknown decision": (
        lambda d: edit(d, lambda x: x["publications"][1]["grades"][0].update(decision=77)),
        "publications[1].grades[0].decision: decision 77 is not in decisions",
    ),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_a_corrupt_backup_is_refused_and_stores_nothing(small_backup, case):
    document, refused = small_backup
    corrupt, expected = CORRUPTIONS[case]
    message = refused(corrupt(document))
    assert expected in message
    assert message.startswith("backup.json: ")


def test_a_truncated_gzip_file_is_refused(small_backup):
    document, refused = small_backup
    data = gzip.compress(json.dumps(document).encode())
    assert refused(data[:-30], name="b.json.gz") == "b.json.gz: gzip stream is truncated"


def test_a_gzip_bomb_is_refused_before_it_fills_memory(small_backup, settings):
    _, refused = small_backup
    settings.MAX_UPLOAD_MB = 1
    bomb = gzip.compress(b" " * (5 << 20))
    assert len(bomb) < 10_000
    assert refused(bomb, name="bomb.json.gz") == (
        "bomb.json.gz: file is larger than the limit of 1048576 bytes (after decompression)"
    )


def test_the_first_50_problems_are_listed_and_the_rest_counted(small_backup):
    document, refused = small_backup
    for assignment in document["assignments"]:
        assignment.update(slot="1", overlap=-1, position=None, status="lost")
    total = 4 * len(document["assignments"])
    assert total > 50
    lines = refused(document).splitlines()
    assert len(lines) == 51
    assert lines[0] == "backup.json: assignments[0].slot: must be an integer"
    assert lines[-1] == f"... and {total - 50} more problems"


# --- the library call ---------------------------------------------------------------------


def test_export_writes_one_list_item_per_line(tmp_path):
    campaign = build_campaign()
    out = io.StringIO()
    summary = backup.export_campaign(campaign=campaign, out=out)
    text = out.getvalue()
    assert summary.counts["assignments"] == Assignment.objects.count()
    assert summary.counts["entries"] == QrelsEntry.objects.count()
    lines = text.splitlines()
    assert lines[0].startswith('{"format":"qrelsmith-campaign","version":5,"exported_at":')
    assert sum(line.startswith('{"qid"') for line in lines) >= Assignment.objects.count()
    document = json.loads(text)
    assert list(document) == list(backup.schema.TOP_KEYS)
    assert [u["username"] for u in document["users"]] == [
        "judge0",
        "judge1",
        "judge2",
        "lead",
        "leaver",
    ]
    assert document["users"][3]["roles"] == ["lead"]
    assert "password" not in text


def test_export_names_a_missing_campaign(tmp_path):
    with pytest.raises(CommandError, match="no campaign with id 999"):
        export(Campaign(pk=999), tmp_path / "b.json")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_export_leaves_no_file(tmp_path, monkeypatch):
    campaign = build_campaign()

    def broken(campaign):
        yield {"qid": "1"}
        raise RuntimeError("disk full")

    monkeypatch.setattr("annotation.backup.exporting._pairs", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        backup.write_campaign_file(campaign=campaign, path=tmp_path / "b.json.gz")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.django_db(transaction=True)
def test_export_outside_a_transaction_reads_one_snapshot(tmp_path):
    """The command's own transaction (REPEATABLE READ on PostgreSQL) is the one it opens."""
    campaign = build_campaign()
    before = dump()
    export(campaign, tmp_path / "b.json")
    delete_everything()
    import_file(tmp_path / "b.json")
    after = dump()
    after.pop("users"), before.pop("users")
    assert after == before


# --- outside and machine judges (format version 2) -------------------------------------------


def test_a_machine_judges_key_never_leaves_the_instance(tmp_path):
    campaign = build_campaign()
    secret = "sk-backup-secret-0123456789"
    MachineJudge.objects.update(api_key_sealed=seal(secret))
    sealed = MachineJudge.objects.values_list("api_key_sealed", flat=True).first()
    export(campaign, tmp_path / "b.json")
    text = (tmp_path / "b.json").read_text()
    # Neither the key, nor its sealed form, nor the key the runner read: only that one was stored.
    assert secret not in text and sealed not in text and KEY not in text
    stored = [
        j["machine"]["api_key_stored"] for j in json.loads(text)["external_judges"] if j["machine"]
    ]
    assert stored == [True, True]
    delete_everything()
    summary = import_file(tmp_path / "b.json")
    assert set(MachineJudge.objects.values_list("api_key_sealed", flat=True)) == {""}
    restored = MachineJudge.objects.get(model_name="judge-7b")
    assert restored.api_key_env == "QRELSMITH_LLM_KEY_7B"
    assert restored.judge.campaign.pool_ordering == "bandit"
    assert "machine judges whose key must be stored again" in str(summary)


def test_a_restore_never_honours_a_variable_a_machine_judge_may_not_read(tmp_path):
    """A backup is a file anyone may have edited: its api_key_env naming SECRET_KEY or
    DATABASE_URL is dropped on restore, never read."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    document = json.loads((tmp_path / "b.json").read_text())
    for judge in document["external_judges"]:
        if judge["machine"]:
            judge["machine"]["api_key_env"] = "SECRET_KEY"
    (tmp_path / "b.json").write_text(json.dumps(document))
    delete_everything()
    import_file(tmp_path / "b.json")
    assert set(MachineJudge.objects.values_list("api_key_env", flat=True)) == {""}


def test_restored_machine_grades_count_in_the_pairs_tallies(tmp_path):
    """With machine grades in adjudication, a pair's tally counts them, as before."""
    campaign = build_campaign()
    tallies = list(
        Pair.objects.order_by("pk").values_list("lowest_grade", "highest_grade", "grades_tied")
    )
    export(campaign, tmp_path / "b.json")
    delete_everything()
    import_file(tmp_path / "b.json")
    assert (
        list(
            Pair.objects.order_by("pk").values_list("lowest_grade", "highest_grade", "grades_tied")
        )
        == tallies
    )


def test_a_version_2_backup_still_restores(tmp_path):
    """Written before imports' provenance, machine runs and answers, and audits: the
    campaign, its judges and grades come back, from no import, with none of those."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    before = dump()
    document = as_version_3(read_document(tmp_path / "b.json"))
    document["version"] = 2
    for key in V3_SECTIONS:
        del document[key]
    for grade in document["external_grades"]:
        del grade["source"]
    for judge in document["external_judges"]:
        del judge["created_by"]
        if judge["machine"] is not None:
            del judge["machine"]["created_by"]
    (tmp_path / "v2.json").write_text(json.dumps(document))
    delete_everything()
    said = import_file(tmp_path / "v2.json")
    assert said.startswith(f"Created campaign {campaign.name!r}")
    after = dump()
    for model in ("JudgmentImport", "MachineRun", "MachineAnswer", "MachineAudit", "AuditPair"):
        assert after.pop(model) == [], model
        before.pop(model)
    as_before_version_4(before, after)
    for model, key in (("ExternalGrade", "source"), ("ExternalJudge", "created_by")):
        for row in before[model]:
            row[key] = None
    for row in before["MachineJudge"]:
        row["created_by"] = None
    after.pop("users"), before.pop("users")
    assert after == before


def test_a_version_3_backup_still_restores(tmp_path):
    """Written before issue 33: no design, no gates, the threshold and suggestion settings
    as their defaults (suggestions off)."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    before = dump()
    (tmp_path / "v3.json").write_text(json.dumps(as_version_3(read_document(tmp_path / "b.json"))))
    delete_everything()
    import_file(tmp_path / "v3.json")
    after = dump()
    as_before_version_4(before, after)
    after.pop("users"), before.pop("users")
    assert after == before


def test_the_certified_design_and_the_gates_come_back_with_their_references(tmp_path):
    """Issue 33's rows by natural key: the suggested machine, the design's machine, audit and
    every pool pair's probability, each gate's machine, calls by pair and override."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")

    def links():
        restored = Campaign.objects.get()
        design = CertifiedDesign.objects.select_related("audit", "machine__judge").get()
        docno_of = dict(Pair.objects.values_list("pk", "document__docno"))
        return {
            "settings": (
                restored.suggestions_from.judge.name,
                restored.blind_share,
                restored.gate_threshold,
            ),
            "design": (design.machine.judge.name, design.audit.kind, design.audit.seed),
            "probabilities": sorted(
                DesignPair.objects.values_list(
                    "pair__topic__qid", "pair__document__docno", "probability", "chosen"
                )
            ),
            "gates": [
                (
                    g.machine.judge.name,
                    [(docno_of.get(c[0]), *c[1:]) for c in g.calls],
                    g.override_reason,
                    g.overridden_by.username if g.overridden_by else None,
                    g.job_id,
                )
                for g in GullibilityGate.objects.order_by("pk")
            ],
        }

    before = links()
    assert before["gates"][0][1][2] == (None, 0, 0, 0, 0), "a call of a pair since gone"
    delete_everything()
    said = import_file(tmp_path / "b.json")
    assert links() == before
    assert "1 certified designs, 2 gullibility gates." in said
    # The gate that had not finished has no job here: it reads as failed, not running.
    from annotation.services.gates import clearance, verdict

    gates = list(GullibilityGate.objects.order_by("pk"))
    assert [verdict(g) for g in gates] == ["overridden", "failed"]
    assert clearance(gates[0].machine).cleared is False  # the latest gate is the failed one


def test_every_version_3_row_comes_back_with_its_references(tmp_path):
    """Each answer's judge, pair, run and recorded grade, each grade's import, each audited
    pair's audit, by natural key."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")

    def links():
        return {
            "answers": sorted(
                MachineAnswer.objects.values_list(
                    "machine__judge__name",
                    "pair__topic__qid",
                    "pair__document__docno",
                    "run__scope",
                    "run__topic__qid",
                    "recorded__judge__name",
                    "recorded__pair__document__docno",
                    "recorded__grade",
                )
            ),
            "grades": sorted(
                ExternalGrade.objects.values_list(
                    "judge__name", "pair__document__docno", "source__file_name", "source__sha256"
                ),
                key=str,
            ),
            "audited": sorted(
                AuditPair.objects.values_list(
                    "audit__kind", "audit__sent_by__username", "pair__topic__qid", "reason"
                )
            ),
            "runs": sorted(
                MachineRun.objects.values_list(
                    "machine__judge__name", "scope", "graded", "failed", "started_by__username"
                )
            ),
        }

    before = links()
    assert all(before.values())
    delete_everything()
    said = import_file(tmp_path / "b.json")
    assert links() == before
    assert (
        "2 judgment imports, 2 machine runs, "
        f"{MachineAnswer.objects.count()} machine answers, 2 audits" in said
    )


def test_the_restore_takes_as_many_queries_for_one_answer_as_for_all(tmp_path):
    """Imports, runs, answers, grades and audit pairs are written in bulk, never a query per
    row (a large campaign's restore must not slow down)."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    document = read_document(tmp_path / "b.json")
    assert len(document["machine_answers"]) > 1
    fewer = dict(
        document, machine_answers=[next(a for a in document["machine_answers"] if a["recorded"])]
    )
    counts = []
    for variant in (document, fewer):
        delete_everything()
        checked = backup.parse_backup(json.dumps(variant).encode(), name="b.json")
        with CaptureQueriesContext(connection) as queries:
            backup.restore_backup(checked)
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_a_version_1_backup_still_restores(tmp_path):
    """Written before outside and machine judges: no such judges, the settings' defaults."""
    campaign = build_campaign()
    export(campaign, tmp_path / "b.json")
    document = as_version_3(read_document(tmp_path / "b.json"))
    document["version"] = 1
    for key in ("external_judges", "external_grades", *V3_SECTIONS):
        del document[key]
    for key in ("pool_ordering", "machine_grades_adjudicate", "machine_grades_fill"):
        del document["campaign"][key]
    (tmp_path / "v1.json").write_text(json.dumps(document))
    delete_everything()
    said = import_file(tmp_path / "v1.json")
    assert said.startswith(f"Created campaign {campaign.name!r}")
    restored = Campaign.objects.get()
    assert (restored.pool_ordering, restored.machine_grades_fill) == ("random", False)
    assert not ExternalJudge.objects.exists() and not ExternalGrade.objects.exists()
    assert Judgment.objects.count() > 0
