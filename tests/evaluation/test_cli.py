"""`manage.py evaluate` on two plain files runs without setting Django up (evaluation.cli)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation import cli

ROOT = Path(__file__).resolve().parents[2]
QRELS = "1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d4 3\n"
RUN = "1 Q0 d1 1 3.0 t\n1 Q0 d2 2 2.0 t\n1 Q0 d9 3 1.0 t\n2 Q0 d4 1 5.5 last\n"


def manage(*args, settings="config.settings"):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings}
    return subprocess.run(
        [sys.executable, "manage.py", *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    return tmp_path / "q", tmp_path / "r"


def test_plain_files_are_scored_without_django(files):
    # A settings module that does not exist: any Django start-up would fail.
    result = manage(
        "evaluate", *files, "-q", "-m", "P.5", "-m", "runid", settings="no.such.settings"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "P_5                   \t1\t0.2000\n"
        "P_5                   \t2\t0.2000\n"
        "runid                 \tall\tlast\n"
        "P_5                   \tall\t0.2000\n"
    )


def test_the_fast_path_prints_what_the_django_command_prints(files, capsys):
    from django.core.management import call_command

    for flags in (
        ["-q"],
        ["-c", "-m", "ndcg_cut.5,10"],
        ["--format", "json", "-q"],
        ["--format", "csv"],
    ):
        fast = manage("evaluate", *files, *flags, settings="no.such.settings")
        call_command("evaluate", *map(str, files), *flags)
        assert fast.stdout == capsys.readouterr().out, flags


def test_a_bad_file_fails_with_its_line_and_status_1(files, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text(RUN + "2 Q0 d5 2 2.5abc t\n")
    result = manage("evaluate", files[0], bad, settings="no.such.settings")
    assert result.returncode == 1
    assert result.stderr == f"CommandError: {bad}:5: score '2.5abc' is not a number\n"


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["{q}", "{r}"], True),
        (["{q}", "{r}", "--save"], False),  # storing needs the database
        (["{q}", "bm25/run1"], False),  # a stored run needs the database
        (["{q}", "{r}", "--settings", "x"], False),  # a Django option
        (["{q}"], False),  # a usage error is reported by Django's command
    ],
)
def test_files_only_decides_when_django_is_not_needed(files, argv, expected):
    q, r = files
    assert cli.files_only([a.format(q=q, r=r) for a in argv]) is expected


def test_a_run_with_extra_fields_and_odd_ranks_is_scored_with_notices_on_stderr(tmp_path):
    (tmp_path / "q").write_text(QRELS)
    plain, extras = tmp_path / "plain", tmp_path / "extras"
    plain.write_text(RUN)
    # trec_eval ignores fields after the sixth and never reads the rank.
    extras.write_text(
        "1 Q0 d1 NaN-rank 3.0 t reserved\n1 Q0 d2 2 2.0 t\n1 Q0 d9 3 1.0 t x y\n"
        "2 Q0 d4 1 5.5 last\n"
    )
    expected = manage("evaluate", tmp_path / "q", plain, "-q", settings="no.such.settings")
    result = manage("evaluate", tmp_path / "q", extras, "-q", settings="no.such.settings")
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected.stdout
    assert result.stderr.splitlines() == [
        f"notice: {extras}: 2 lines have more than 6 fields: the fields after the sixth are "
        "ignored, as trec_eval ignores them (lines 1, 3)",
        f"notice: {extras}: 1 line has a rank that is not an integer: the rank field is never "
        "read (documents are ranked by score, as trec_eval ranks them) (line 1)",
    ]
