"""`evaluate` with trec_eval's other inputs (-R prefs, -R qrels_prefs, -R qrels_jg, -Z) and
flags (-J, -N, -n), byte for byte against trec_eval.

The inputs in tests/data/trec_eval_inputs/ were written by its make.py (seed 11); the expected
outputs next to them were printed by trec_eval 10.0 (``expected/NAME.v10.txt``) and 9.0.8
(``expected/NAME.v9.txt``) for the command lines in CASES, run in that folder:
``python tests/evaluation/test_trec_eval_inputs.py`` with TREC_EVAL and TREC_EVAL_9 set
rewrites them. With those variables set, the tests also compare fresh seeded data with the
binaries themselves.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.cli import main as cli

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval_inputs"
sys.path.insert(0, str(DATA))
from make import write_inputs  # noqa: E402

CASES = {
    "prefs": ["-q", "-m", "all_prefs", "-R", "prefs", "prefs.txt", "run.txt"],
    "prefs_complete_depth": [
        *("-q", "-c", "-M", "5", "-m", "all_prefs", "-R", "prefs"),
        *("prefs.txt", "run_partial.txt"),
    ],
    "qrels_prefs": ["-q", "-m", "all_prefs", "-R", "qrels_prefs", "qrels_prefs.txt", "run.txt"],
    "qrels_jg": ["-q", "-m", "qrels_jg", "-R", "qrels_jg", "qrels_jg.txt", "run.txt"],
    "qrels_jg_judged_level": [
        *("-q", "-J", "-l", "2", "-m", "qrels_jg", "-m", "P_avgjg.3,7"),
        *("-m", "Rprec_mult_avgjg.0.5,1.5", "-R", "qrels_jg", "qrels_jg.txt", "run.txt"),
    ],
    "qrels_jg_complete": [
        *("-q", "-c", "-m", "qrels_jg", "-R", "qrels_jg", "qrels_jg.txt", "run_partial.txt"),
    ],
    "zscores": ["-q", "-m", "official", "-Z", "zscores.txt", "qrels.txt", "run.txt"],
    "zscores_complete": [
        *("-q", "-c", "-m", "map", "-m", "gm_map", "-m", "P.5,10", "-m", "num_ret"),
        *("-Z", "zscores.txt", "qrels.txt", "run_partial.txt"),
    ],
    "zscores_nan": ["-q", "-m", "official", "-Z", "zscores_nan.txt", "qrels.txt", "run.txt"],
    "prefs_zscores_complete": [
        *("-q", "-c", "-m", "all_prefs", "-R", "prefs", "-Z", "zscores_other.txt"),
        *("prefs.txt", "run_partial.txt"),
    ],
    "qrels_jg_zscores": [
        *("-q", "-m", "qrels_jg", "-R", "qrels_jg", "-Z", "zscores_other.txt"),
        *("qrels_jg.txt", "run.txt"),
    ],
    "judged_only_all_trec": ["-q", "-J", "-m", "all_trec", "qrels.txt", "run.txt"],
    "collection_size": [
        *("-q", "-N", "1000", "-m", "utility.1,-1,0,1", "-m", "utility"),
        *("qrels.txt", "run.txt"),
    ],
    "judged_only": ["-q", "-J", "-m", "official", "-m", "ndcg_cut.5,10", "qrels.txt", "run.txt"],
    "judged_only_depth_no_summary": [
        *("-q", "-n", "-J", "-M", "4", "-m", "official", "qrels.txt", "run.txt"),
    ],
}
VERSIONS = {10: "TREC_EVAL", 9: "TREC_EVAL_9"}


def ours(args: list[str], folder: Path, version: int, capsys, monkeypatch) -> str:
    monkeypatch.chdir(folder)
    capsys.readouterr()
    code = cli.main(["--trec-eval-version", str(version), *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def theirs(binary: str, args: list[str], folder: Path) -> str:
    done = subprocess.run([binary, *args], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_output_equals_trec_eval_on_committed_inputs(case, version, capsys, monkeypatch):
    expected = (DATA / "expected" / f"{case}.v{version}.txt").read_text()
    got = ours(CASES[case], DATA, version, capsys, monkeypatch)
    assert got == expected, (
        f"evaluate {' '.join(CASES[case])} differs from trec_eval {version}'s output in "
        f"tests/data/trec_eval_inputs/expected/{case}.v{version}.txt"
    )


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("version", VERSIONS)
def test_output_equals_live_trec_eval_on_fresh_data(seed, version, tmp_path, capsys, monkeypatch):
    binary = os.environ.get(VERSIONS[version])
    if not binary:
        pytest.skip(f"set {VERSIONS[version]} to a trec_eval {version} binary")
    write_inputs(seed, tmp_path)
    for case, args in CASES.items():
        got = ours(args, tmp_path, version, capsys, monkeypatch)
        assert got == theirs(binary, args, tmp_path), f"seed {seed}, case {case}"


if __name__ == "__main__":
    for version, variable in VERSIONS.items():
        for case, args in CASES.items():
            output = theirs(os.environ[variable], args, DATA)
            (DATA / "expected").mkdir(exist_ok=True)
            (DATA / "expected" / f"{case}.v{version}.txt").write_text(output)


# --- the command line --------------------------------------------------------------------


def run_main(args: list[str], folder: Path, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.chdir(folder)
    capsys.readouterr()
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_without_measures_each_input_scores_its_own_nickname(capsys, monkeypatch):
    _, prefs_out, _ = run_main(["-R", "prefs", "prefs.txt", "run.txt"], DATA, capsys, monkeypatch)
    assert [line.split()[0] for line in prefs_out.splitlines()] == [
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
    ]
    _, jg_out, _ = run_main(
        ["-R", "qrels_jg", "qrels_jg.txt", "run.txt"], DATA, capsys, monkeypatch
    )
    assert jg_out.splitlines()[2].startswith("map_avgjg")


def test_a_measure_the_input_cannot_compute_is_a_usage_error(capsys, monkeypatch):
    code, out, err = run_main(
        ["-R", "prefs", "-m", "map", "prefs.txt", "run.txt"], DATA, capsys, monkeypatch
    )
    assert (code, out) == (1, "")
    assert "measure 'map' needs -R qrels; with -R prefs use -m prefs or -m all_prefs" in err


def test_a_bad_preference_line_is_reported_with_file_and_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "p.txt").write_text("q u s d 1\nq u s d\n")
    (tmp_path / "r.txt").write_text("q Q0 d 1 1.0 t\n")
    code, out, err = run_main(["-R", "prefs", "p.txt", "r.txt"], tmp_path, capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "p.txt:2: expected 5 fields (qid jg jsg docno level), found 4" in err


def test_a_negative_collection_size_is_a_usage_error(capsys, monkeypatch):
    code, out, err = run_main(["-N", "-5", "qrels.txt", "run.txt"], DATA, capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "-N -5: a collection cannot hold fewer than 0 documents" in err


def test_no_summary_prints_only_per_topic_lines(capsys, monkeypatch):
    _, out, _ = run_main(
        ["-q", "-n", "-m", "map", "qrels.txt", "run.txt"], DATA, capsys, monkeypatch
    )
    assert out and all("\tall\t" not in line for line in out.splitlines())


def test_the_django_command_reads_the_same_inputs(capsys, monkeypatch):
    from django.core.management import CommandError, call_command

    monkeypatch.chdir(DATA)
    args = ["-q", "-m", "all_prefs", "-R", "prefs", "prefs.txt", "run.txt"]
    capsys.readouterr()
    call_command("evaluate", "--trec-eval-version", "10", "--baseline", "run.txt", *args)
    out = capsys.readouterr().out
    assert out.startswith((DATA / "expected" / "prefs.v10.txt").read_text())
    with pytest.raises(CommandError, match="not a file"):
        call_command("evaluate", "-R", "qrels_jg", "stored@1", "run.txt")
