"""manage.py backup_instance / restore_instance: the whole instance, tables and stored files,
out and back into a new database (jobs/backup.py)."""

import hashlib
import io
import json
import tarfile

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from annotation.models import Campaign, Judgment
from evaluation import measures, services
from evaluation.models import Evaluation, Run
from jobs.backup import MESSAGES, _stored_files

# Tests refused before anything is written run in a rolled-back transaction; the ones that
# restore (loaddata, the flush in wipe) commit, as the command does, and end with a flush.
pytestmark = pytest.mark.django_db
restores = pytest.mark.django_db(transaction=True)


def snapshot() -> dict:
    """What must come back: rows (by their meaning, not their ids), files and numbers."""
    judgments = sorted(
        Judgment.objects.values_list(
            "assignment__judge__username",
            "assignment__pair__topic__qid",
            "assignment__pair__document__docno",
            "grade",
            "seconds",
        )
    )
    files = {
        name: hashlib.sha256(default_storage.open(name).read()).hexdigest()
        for name in _stored_files()
    }
    means = sorted(
        (e.run.system.name, e.run.name, json.dumps(e.means, sort_keys=True))
        for e in Evaluation.objects.select_related("run__system")
    )
    return {
        "campaigns": sorted(Campaign.objects.values_list("name", "lead__username", "overlap")),
        "judgments": judgments,
        "files": files,
        "means": means,
    }


def wipe() -> None:
    call_command("flush", interactive=False, verbosity=0)
    for name in _stored_files():
        default_storage.delete(name)


def rewrite(source, target, change) -> None:
    """Copy the archive member by member, ``change(name, data) -> (name, data) | None``."""
    with tarfile.open(source, "r:gz") as old, tarfile.open(target, "w:gz") as new:
        for member in old.getmembers():
            changed = change(member.name, old.extractfile(member).read())
            if changed is None:
                continue
            info = tarfile.TarInfo(changed[0])
            info.size = len(changed[1])
            new.addfile(info, io.BytesIO(changed[1]))


_MADE: dict = {}  # the demo's archive and snapshot, made once for the module (demo is slow)


@pytest.fixture
def backup(media_root, tmp_path):
    """The demo instance, backed up, in an empty database and empty storage. The demo is
    made in one transaction (make_demo), here inside a savepoint rolled back once the archive
    is written: the database is as empty as a flush would leave it, in the refusals' rolled
    back tests as in the restores' committed ones."""
    path = tmp_path / "instance.tar.gz"
    if not _MADE:
        with transaction.atomic():
            call_command("demo", "--source", "fallback", stdout=io.StringIO())
            before = snapshot()
            out = io.StringIO()
            call_command("backup_instance", output=str(path), stdout=out)
            transaction.set_rollback(True)
        assert "rows of" in out.getvalue()
        for name in _stored_files():
            default_storage.delete(name)
        assert not Run.objects.exists() and _stored_files() == []
        _MADE.update(archive=path.read_bytes(), before=before)
    path.write_bytes(_MADE["archive"])
    return path, _MADE["before"]


@restores
def test_an_instance_comes_back_whole_in_a_new_database(backup):
    path, before = backup
    assert not Run.objects.exists() and _stored_files() == []

    out = io.StringIO()
    call_command("restore_instance", str(path), stdout=out)

    assert "restored" in out.getvalue()
    assert snapshot() == before
    assert before["files"], "the demo stores run files"
    # The restored instance works: logins, scoring from the restored artifacts, new rows.
    assert authenticate(username="lead", password="lead-demo") is not None
    stored = Evaluation.objects.select_related("run", "qrels").first()
    options = dict(stored.options)
    specs = options.pop("measures")
    again = measures.evaluate(
        services.load_qrels_frame(stored.qrels),
        services.load_run_frame(stored.run),
        specs,
        measures.Options(**options),
    )
    assert again.means == stored.means
    lead = Campaign.objects.first().lead
    assert Campaign.objects.create(name="after restore", lead=lead).pk > 0


@restores
def test_restoring_twice_is_refused_and_changes_nothing(backup):
    path, _ = backup
    call_command("restore_instance", str(path), stdout=io.StringIO())
    after_first = snapshot()

    with pytest.raises(CommandError, match="already holds data"):
        call_command("restore_instance", str(path))
    assert snapshot() == after_first


def test_a_damaged_file_is_refused_before_anything_is_written(backup, tmp_path):
    path, _ = backup
    damaged = tmp_path / "damaged.tar.gz"
    rewrite(
        path,
        damaged,
        lambda name, data: (name, data + b"x" if name.endswith(".parquet") else data),
    )

    with pytest.raises(CommandError, match=r"does not match its SHA-256 in the manifest"):
        call_command("restore_instance", str(damaged))
    assert _stored_files() == [] and not Run.objects.exists()


def test_a_member_outside_the_backup_folders_is_refused(backup, tmp_path):
    path, _ = backup
    hostile = tmp_path / "hostile.tar.gz"
    rewrite(
        path,
        hostile,
        lambda name, data: ("../evil" if name.endswith(".parquet") else name, data),
    )

    with pytest.raises(CommandError, match=r"member '\.\./evil' is not a plain file"):
        call_command("restore_instance", str(hostile))
    assert _stored_files() == [] and not Run.objects.exists()


def test_a_backup_of_other_migrations_is_refused(backup, tmp_path):
    path, _ = backup

    def newer(name, data):
        if name != "manifest.json":
            return name, data
        manifest = json.loads(data)
        manifest["migrations"]["annotation"].append("9999_from_the_future")
        return name, json.dumps(manifest).encode()

    other = tmp_path / "other.tar.gz"
    rewrite(path, other, newer)

    with pytest.raises(CommandError) as refused:
        call_command("restore_instance", str(other))
    assert "annotation: the backup has 9999_from_the_future" in str(refused.value)
    assert not Run.objects.exists()


def test_a_file_that_is_not_a_backup_is_named(tmp_path):
    junk = tmp_path / "notes.tar.gz"
    junk.write_bytes(b"not a tar at all")

    with pytest.raises(CommandError, match=r"notes\.tar\.gz: not an instance backup"):
        call_command("restore_instance", str(junk))


def test_messages_name_the_archive():
    assert all(
        "{path}" in text for key, text in MESSAGES.items() if not key.startswith("not_empty")
    )


@restores
def test_a_backup_never_holds_a_stored_key_not_even_encrypted(media_root, tmp_path, settings):
    """A machine judge's key stays in the instance: the archive says a key was stored, the
    restore says to store it again (issue 27, finding 13)."""
    from annotation.models import MachineJudge
    from annotation.services import create_campaign, machine_judges

    secret = "sk-instance-backup-secret-0123456789"
    lead = get_user_model().objects.create_user("lead")
    campaign = create_campaign(lead=lead, name="Keys")
    machine_judges.create_machine_judge(
        campaign=campaign,
        model_name="m",
        base_url="https://llm.example.invalid/v1",
        api_key=secret,
    )
    sealed = MachineJudge.objects.get().api_key_sealed
    path = tmp_path / "instance.tar.gz"
    out = io.StringIO()
    call_command("backup_instance", output=str(path), stdout=out)
    assert "1 stored key(s) left out" in out.getvalue()
    with tarfile.open(path, "r:gz") as archive:
        data = archive.extractfile("data.jsonl").read().decode()
        manifest = json.loads(archive.extractfile("manifest.json").read())
    assert secret not in data and sealed not in data and sealed.removeprefix("fernet:") not in data
    assert manifest["secrets_left_out"] == {
        "annotation.machinejudge": [MachineJudge.objects.get().pk]
    }
    wipe()
    out = io.StringIO()
    call_command("restore_instance", str(path), stdout=out)
    assert MachineJudge.objects.get().api_key_sealed == ""
    assert "store them again" in out.getvalue()


@restores
def test_the_certified_design_gates_and_suggestion_settings_come_back(media_root, tmp_path):
    """Issue 33's rows and settings are in the instance archive like every table: the
    certified design with each pair's probability, the gates with the override's reason,
    who and when, the gate's job, the threshold and the suggestion settings."""
    from annotation.models import CertifiedDesign, DesignPair, GullibilityGate, Pair
    from annotation.services import add_pairs, create_campaign, machine_judges
    from jobs.models import Job
    from tests.annotation.test_backup import add_trust

    lead = get_user_model().objects.create_user("lead")
    campaign = create_campaign(lead=lead, name="Trust")
    campaign.topics.create(qid="1", query="q")
    add_pairs(campaign=campaign, pairs=[("1", f"d{i}") for i in range(4)], source="pooled")
    machine = machine_judges.create_machine_judge(
        campaign=campaign, model_name="m", base_url="https://llm.example.invalid/v1"
    )
    add_trust(campaign, machine, lead)
    job = Job.objects.create(kind="annotation.gullibility_gate", title="gate", created_by=lead)
    GullibilityGate.objects.filter(finished_at__isnull=True).update(job=job)

    def state():
        pair = dict(Pair.objects.values_list("pk", "document__docno"))
        return {
            "campaign": list(
                Campaign.objects.values_list(
                    "suggestions_from__judge__name", "blind_share", "gate_threshold", "seed"
                )
            ),
            "design": list(
                CertifiedDesign.objects.values_list(
                    "machine__judge__name",
                    "strategy",
                    "seed",
                    "budget",
                    "audit__kind",
                    "chosen",
                )
            ),
            "pairs": sorted(
                DesignPair.objects.values_list("pair__document__docno", "probability", "chosen")
            ),
            "gates": [
                (
                    [[pair.get(c[0]), *c[1:]] for c in g.calls],
                    g.blocked,
                    g.override_reason,
                    g.overridden_by_id and g.overridden_by.username,
                    # Django's serialiser keeps milliseconds of a time (all tables alike).
                    g.overridden_at.replace(microsecond=g.overridden_at.microsecond // 1000 * 1000)
                    if g.overridden_at
                    else None,
                    g.job and g.job.title,
                )
                for g in GullibilityGate.objects.order_by("pk")
            ],
        }

    before = state()
    assert before["design"] and len(before["gates"]) == 2 and before["gates"][1][5] == "gate"
    path = tmp_path / "instance.tar.gz"
    call_command("backup_instance", output=str(path), stdout=io.StringIO())
    wipe()
    assert not CertifiedDesign.objects.exists()
    call_command("restore_instance", str(path), stdout=io.StringIO())
    assert state() == before
