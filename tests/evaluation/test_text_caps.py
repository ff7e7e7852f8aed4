"""Caps on the free text of runs, systems and qrels versions (issue 27, finding 14;
common.text_limits): the services refuse before a file is read (ImportRejected naming the
file and the text), the API answers 400, and nothing is stored."""

import pytest

from evaluation import services
from evaluation.models import QrelsVersion, Run, System
from tests.api import conftest as shared
from tests.api.conftest import OTHER_RUN, QRELS, upload

# tests/api/conftest.py's fixtures (the world: a campaign, users by role, qrels, a run).
api, make_user, world = shared.api, shared.make_user, shared.world

pytestmark = pytest.mark.django_db

LONG = "d" * 10_001


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"description": LONG}, "the description is longer than 10,000 characters"),
        ({"system": "s" * 101}, "the system name is longer than 100 characters"),
        ({"name": "n" * 101}, "the run name is longer than 100 characters"),
        (
            {"new_system": {"description": LONG, "tags": []}},
            "the system description is longer than 10,000 characters",
        ),
        ({"new_system": {"tags": ["t" * 51]}}, "the tag is longer than 50 characters"),
        ({"new_system": {"tags": [f"t{i}" for i in range(21)]}}, "a system has at most 20 tags"),
    ],
)
def test_a_run_import_refuses_a_text_over_its_cap(media_root, options, problem):
    with pytest.raises(services.ImportRejected) as refused:
        services.import_run(
            **{"source": OTHER_RUN, "filename": "dense.run", "system": "dense"} | options
        )

    assert str(refused.value) == f"dense.run: {problem}."
    assert not Run.objects.exists() and not System.objects.exists()


def test_a_run_named_after_a_long_file_name_is_refused_not_cut(media_root):
    name = "r" * 120 + ".run"
    with pytest.raises(services.ImportRejected, match="the run name is longer than 100"):
        services.import_run(source=OTHER_RUN, filename=name, system="dense")


def test_a_qrels_import_refuses_a_long_name_or_description(media_root):
    for options, problem in (
        ({"name": "q" * 101}, "the name is longer than 100 characters"),
        ({"name": "dl", "description": LONG}, "the description is longer than 10,000 characters"),
    ):
        with pytest.raises(services.ImportRejected) as refused:
            services.import_qrels(source=QRELS, filename="dl.qrels", **options)
        assert str(refused.value) == f"dl.qrels: {problem}."
    assert not QrelsVersion.objects.exists()


def test_the_api_refuses_long_descriptions_of_systems_runs_and_qrels(api, world):
    engineer = api(world.users["engineer"])

    system = engineer.post(
        "/api/v1/systems/", {"name": "dense", "description": LONG}, format="json"
    )
    patched = engineer.patch(
        f"/api/v1/systems/{world.system.pk}/", {"description": LONG}, format="json"
    )
    run = engineer.post(
        "/api/v1/runs/",
        {"file": upload("dense.run", OTHER_RUN), "system": "dense", "description": LONG},
        format="multipart",
    )
    qrels = engineer.post(
        "/api/v1/qrels/",
        {"file": upload("new.qrels", QRELS), "name": "new", "description": LONG},
        format="multipart",
    )

    for response in (system, patched, run, qrels):
        assert response.status_code == 400, response.content
        assert "10000 characters" in response.json()["description"][0]
    assert not System.objects.filter(name="dense").exists()
    assert not QrelsVersion.objects.filter(name="new").exists()
    world.system.refresh_from_db()
    assert world.system.description == ""
