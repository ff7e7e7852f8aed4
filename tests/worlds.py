"""A test world made once per module instead of once per test.

Most database tests start from a small world (a campaign, its judges, runs, qrels) that
costs 0.3-2 s to make, more than the test itself. ``made_once(build)`` gives a module a
``world_made`` fixture that calls ``build()`` once, inside a transaction held open until the
module's last test and then rolled back; the ``world_copy`` fixture (tests/conftest.py)
gives each test that world as it was made: pytest-django rolls each test's transaction back
to it, the test gets its own copy of the world's objects (what it changes on them stays in
its copy), and a copy of the world's files in its own MEDIA_ROOT. A module opts in with

    world_made = made_once(small_world)

    @pytest.fixture
    def world(world_copy):
        return world_copy

Only for modules whose tests need no transaction of their own (``transaction=True`` would
flush the world away); from the first test that asks for the world on, the module's other
tests meet its rows too.
"""

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Made:
    world: Any
    media: Path


def made_once(build):
    """The module fixture ``world_made``: ``build()``, made once for the module."""

    @pytest.fixture(scope="module", name="world_made")
    def world_made(django_db_setup, django_db_blocker, tmp_path_factory):
        from django.db import transaction
        from django.test import override_settings

        folder = tmp_path_factory.mktemp("media")
        made_here = override_settings(MEDIA_ROOT=folder)
        with django_db_blocker.unblock(), made_here, transaction.atomic():
            yield Made(build(), folder)
            transaction.set_rollback(True)

    return world_made


def copy_of(made: Made, media_root: Path):
    """The world as it was made, for one test: its files copied into the test's MEDIA_ROOT
    and its objects copied."""
    shutil.copytree(made.media, media_root, dirs_exist_ok=True)
    return copy.deepcopy(made.world)
