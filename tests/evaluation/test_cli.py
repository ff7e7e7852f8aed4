"""`manage.py evaluate` on two plain files runs without setting Django up (evaluation.cli)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation import cli_start

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
    assert cli_start.files_only([a.format(q=q, r=r) for a in argv]) is expected


def ir_measures_cli(qrels, run, *names, per_topic=False):
    """What ir_measures' own command prints (its default providers, 4 decimals)."""
    args = [sys.executable, "-W", "ignore", "-m", "ir_measures", str(qrels), str(run), *names]
    result = subprocess.run(args + (["-q"] if per_topic else []), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_ir_measures_format_prints_what_ir_measures_prints(files):
    names = ["nDCG@10", "P(rel=2)@5", "AP", "RR@10", "NumQ", "Judged@10", "ERR@20"]
    for per_topic in (False, True):
        flags = ["--format", "ir_measures"] + (["-q"] if per_topic else [])
        ours = manage("evaluate", *files, *[f"-m{n}" for n in names], *flags)
        assert ours.returncode == 0, ours.stderr
        theirs = ir_measures_cli(*files, *names, per_topic=per_topic)
        # Same lines; ir_measures lists topics in its providers' order, we in topic order.
        assert sorted(ours.stdout.splitlines()) == sorted(theirs.splitlines())


def test_the_dialects_mix_and_trec_format_keeps_trec_eval_names(files):
    result = manage("evaluate", *files, "-m", "P.5", "-m", "nDCG@10", "-m", "P(rel=2)@5")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "P_5                   \tall\t0.2000\n"
        "ndcg_cut_10           \tall\t0.8801\n"  # (2 / (2 + 1 / log2(3)) + 1) / 2
        "P(rel=2)@5            \tall\t0.2000\n"
    )


def test_a_bad_ir_measures_name_is_a_usage_error(files):
    result = manage("evaluate", *files, "-m", "nDCG@ten", settings="no.such.settings")
    assert result.returncode == 1
    assert (
        result.stderr == "CommandError: 'nDCG@ten': the cutoff 'ten' is not a whole number >= 1\n"
    )


def test_options_are_refused_with_the_shared_readers_words(files):
    from evaluation.measures.specs import MESSAGES

    result = manage("evaluate", *files, "-l", "x", settings="no.such.settings")
    assert result.returncode == 1
    assert result.stderr == f"CommandError: {MESSAGES['relevance_level'].format(value=repr('x'))}\n"
    result = manage("evaluate", *files, "-M", "0", settings="no.such.settings")
    assert result.stderr == f"CommandError: {MESSAGES['depth'].format(value=repr('0'))}\n"


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
