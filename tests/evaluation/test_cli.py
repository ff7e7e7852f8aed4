"""`manage.py evaluate` on two plain files runs without setting Django up (evaluation.cli.main)."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.cli import start as cli_start

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


# Topic 3 is judged but not in the run, topic 4 judged non-relevant only and not in the run,
# topic 5 only in the run; topic 1 has ties (d2, d5, d6 at 2.0) and a near-tie beyond float32,
# topic 2 ties written in scientific notation.
MISSING_QRELS = QRELS + "1 0 d5 1\n1 0 d6 0\n3 0 d7 2\n3 0 d8 1\n4 0 d9 0\n"
MISSING_RUN = (
    "1 Q0 d1 1 3.0 t\n1 Q0 d6 2 2.0 t\n1 Q0 d2 3 2.0 t\n1 Q0 d5 4 2.0 t\n"
    "1 Q0 d9 5 1.0000000001 t\n1 Q0 d3 6 1.0 t\n2 Q0 d4 1 5.5 t\n2 Q0 d9 2 5.5E0 t\n"
    "2 Q0 d5 3 55e-1 t\n2 Q0 d1 4 -1.5e-3 t\n5 Q0 d1 1 1.0 t\n"
)
EVERY_FAMILY = [
    "nDCG@10", "nDCG", "P@2", "P(rel=2)@5", "R@3", "AP", "AP@2", "RR", "RR@2", "Rprec",
    "Bpref", "infAP", "Success@1", "IPrec@0.5", "Judged@2", "Judged", "NumQ", "NumRet",
    "NumRel", "NumRet(rel=1)", "SetP", "SetR", "SetF", "RBP(rel=1)", "RBP(rel=2,p=0.5)",
]  # fmt: skip


@pytest.mark.parametrize("per_topic", [False, True])
def test_ir_measures_format_scores_every_qrels_topic_as_ir_measures_does(tmp_path, per_topic):
    """Topics the run lacks print ir_measures' 0 and count in every mean, ties are broken as
    each measure's provider breaks them, and --places 12 prints what its --places 12 does."""
    (tmp_path / "q").write_text(MISSING_QRELS)
    (tmp_path / "r").write_text(MISSING_RUN)
    files = (tmp_path / "q", tmp_path / "r")
    flags = ["--format", "ir_measures", "--places", "12"] + (["-q"] if per_topic else [])
    ours = manage("evaluate", *files, *[f"-m{n}" for n in EVERY_FAMILY], *flags)
    assert ours.returncode == 0, ours.stderr
    theirs = ir_measures_cli(*files, *EVERY_FAMILY, "--places", "12", per_topic=per_topic)
    assert sorted(ours.stdout.splitlines()) == sorted(theirs.splitlines())
    if per_topic:
        assert "3\tP@2\t0.000000000000" in ours.stdout.splitlines()


def test_places_full_prints_every_digit_and_a_bad_value_is_refused(files):
    full = manage("evaluate", *files, "-m", "ndcg_cut.10", "--places", "full")
    assert full.stdout == f"ndcg_cut_10           \tall\t{(2 / (2 + 1 / math.log2(3)) + 1) / 2!r}\n"
    six = manage("evaluate", *files, "-m", "P.5", "-m", "num_ret", "-q", "--places", "6")
    assert six.stdout.splitlines()[:2] == [
        "num_ret               \t1\t3",
        "P_5                   \t1\t0.200000",
    ]
    bad = manage("evaluate", *files, "--places", "18", settings="no.such.settings")
    assert bad.returncode != 0
    assert "'18' is not a number of decimals from 0 to 17, nor 'full'" in bad.stderr


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
