"""manage.py export_qrels --binary and manage.py diff_qrels, through call_command."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation import services

pytestmark = pytest.mark.django_db

QRELS = b"1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n2 0 d4 3\n"
NEWER = b"1 0 d1 3\n1 0 d5 1\n2 0 d3 1\n2 0 d4 0\n"


@pytest.fixture
def versions(media_root):
    old = services.import_qrels(source=QRELS, filename="dl.qrels", name="dl")
    new = services.import_qrels(source=NEWER, filename="dl2.qrels", name="dl")
    return old, new


def test_export_qrels_binary_writes_0_1_at_the_threshold(versions, tmp_path):
    target = tmp_path / "binary.qrels"
    err = io.StringIO()
    call_command("export_qrels", "dl@1", "--binary", "-o", str(target), stderr=err)
    assert target.read_text() == "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 1\n"
    assert "Wrote dl v1, binary at 1 (4 judgments)" in err.getvalue()
    call_command(
        "export_qrels", "dl@1", "--binary", "--threshold", "3", "-o", str(target), stderr=err
    )
    assert target.read_text() == "1 0 d1 0\n1 0 d2 0\n2 0 d3 0\n2 0 d4 1\n"


def test_export_qrels_binary_to_stdout(versions, capfdbinary):
    call_command("export_qrels", "dl@1", "--binary")
    assert capfdbinary.readouterr().out == b"1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 1\n"


def test_a_threshold_without_binary_is_refused(versions):
    with pytest.raises(CommandError, match="--threshold only applies with --binary"):
        call_command("export_qrels", "dl", "--threshold", "2")


def test_diff_qrels_prints_what_changed(versions):
    out = io.StringIO()
    call_command("diff_qrels", "dl@1", "dl@2", stdout=out)
    assert out.getvalue().splitlines() == [
        "dl v1 → dl v2: 1 added, 1 removed, 2 changed, 1 unchanged",
        "+ 1 d5 1",
        "- 1 d2 0",
        "~ 1 d1 2 -> 3",
        "~ 2 d4 3 -> 0",
    ]


def test_diff_qrels_json_is_the_apis(versions, make_diff_client):
    old, new = versions
    out = io.StringIO()
    call_command("diff_qrels", "dl@1", "dl", "--json", stdout=out)
    assert (
        json.loads(out.getvalue())
        == make_diff_client.get(f"/api/v1/qrels/{new.pk}/diff/{old.pk}/").json()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [(("dl@1", "nope"), "no qrels named 'nope'"), (("dl@x", "dl"), "the version must be a number")],
)
def test_diff_qrels_names_a_missing_version(versions, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("diff_qrels", *args)


@pytest.fixture
def make_diff_client(django_user_model):
    from django.contrib.auth.models import Group
    from rest_framework.test import APIClient

    from accounts.services.roles import Role

    reader = django_user_model.objects.create_user("reader")
    reader.groups.add(Group.objects.get(name=Role.ENGINEER))  # engineers read every version
    client = APIClient()
    client.force_login(reader)
    return client
