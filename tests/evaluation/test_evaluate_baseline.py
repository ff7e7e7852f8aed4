"""`manage.py evaluate RUN --baseline BASE [--fail-if-worse]`: the comparison a CI pipeline
gates on. Its numbers are evaluation.analysis.significance's on the topics both runs have, and the
ones the comparison page and API show for the same stored runs."""

import contextlib
import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluation import dashboards, measures, services, trec
from evaluation.analysis import significance
from evaluation.collection import synthetic
from tests.evaluation.dashboard_data import small_world

ROOT = Path(__file__).resolve().parents[2]
SPECS = ["ndcg_cut.10", "P.5", "map"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Demo qrels (40 topics) and three runs: strong, weak, and strong again but renamed."""
    folder = tmp_path_factory.mktemp("gate")
    qrels = synthetic.make_qrels_text(topics=40)
    (folder / "qrels.txt").write_text(qrels)
    for name, strength in (("strong", 0.9), ("weak", 0.2)):
        text = synthetic.make_run_text(qrels, tag=name, strength=strength, noise=1.0, depth=50)
        (folder / f"{name}.run").write_text(text)
    return folder


def manage(*args):
    """`manage.py evaluate ARGS` in a process of its own: for the exit status the gate gives."""
    return subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args], cwd=ROOT, capture_output=True, text=True
    )


@pytest.fixture
def evaluate(capsys):
    """`evaluate ARGS` through call_command, without a process's ~2 s of Django start-up: what
    manage.py would give, its exit status and output (a CommandError's message ends stderr,
    as manage.py prints it; --help's SystemExit gives its status)."""

    def run(*args) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try:
            call_command("evaluate", *args)
            code, error = 0, ""
        except CommandError as failure:
            code, error = failure.returncode, f"CommandError: {failure}\n"
        except SystemExit as exit_:
            code, error = exit_.code, ""
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["evaluate", *args], code, out, err + error)

    return run


def measure_args():
    return [arg for spec in SPECS for arg in ("-m", spec)]


def test_a_significantly_worse_run_fails_the_gate(files):
    result = manage(
        str(files / "qrels.txt"),
        str(files / "weak.run"),
        *measure_args(),
        "--baseline",
        str(files / "strong.run"),
        "--fail-if-worse",
    )

    assert result.returncode == 1, result.stderr
    assert "is significantly worse than the baseline" in result.stderr
    assert "ndcg_cut_10" in result.stderr.splitlines()[-1]
    assert "significantly worse" in result.stdout


def test_a_better_run_passes_the_gate_and_the_trec_output_is_unchanged(files, evaluate):
    plain = evaluate(str(files / "qrels.txt"), str(files / "strong.run"), *measure_args())
    gated = evaluate(
        str(files / "qrels.txt"),
        str(files / "strong.run"),
        *measure_args(),
        "--baseline",
        str(files / "weak.run"),
        "--fail-if-worse",
    )

    assert gated.returncode == 0, gated.stderr
    assert gated.stdout.startswith(plain.stdout + "\n")
    table = gated.stdout[len(plain.stdout) + 1 :].splitlines()
    assert table[0].startswith("Compared with the baseline") and "on 40 topics" in table[0]
    assert "Holm-adjusted over them" in table[2]
    assert [line.split()[0] for line in table[4:]] == ["map", "P_5", "ndcg_cut_10"]
    assert all(line.endswith("significantly better") for line in table[4:])


def test_the_json_comparison_is_significance_on_the_common_topics(files, evaluate):
    out = evaluate(
        str(files / "qrels.txt"),
        str(files / "weak.run"),
        *measure_args(),
        "--baseline",
        str(files / "strong.run"),
        "--format",
        "json",
    )

    document = json.loads(out.stdout)
    qrels = trec.read_qrels(files / "qrels.txt")
    weak = measures.evaluate(qrels, trec.read_run(files / "weak.run"), SPECS).per_topic
    strong = measures.evaluate(qrels, trec.read_run(files / "strong.run"), SPECS).per_topic
    comparison = document["comparison"]
    assert (comparison["topics"], comparison["left_out"], comparison["permutations"]) == (
        40,
        0,
        10_000,
    )
    for row in comparison["measures"]:
        name = row["measure"]
        expected = significance.compare(strong[name].to_numpy(), weak[name].to_numpy())
        assert row["mean_delta"] == expected.mean_delta
        assert row["delta_interval"] == [expected.delta_interval.low, expected.delta_interval.high]
        assert row["randomisation_p"] == expected.randomisation.p_value
        assert row["t_test_p"] == expected.t_test.p_value
        assert row["wilcoxon_p"] == expected.wilcoxon.p_value
        assert row["cohens_d"] == expected.cohens_d
        assert row["gated"] is True
        assert row["verdict"] == "worse"
    holm = significance.adjust_holm([row["randomisation_p"] for row in comparison["measures"]])
    assert [row["randomisation_p_holm"] for row in comparison["measures"]] == holm
    assert comparison["gated"] == ["map", "P_5", "ndcg_cut_10"]
    assert document["all"] == {
        k: v
        for k, v in json.loads(
            evaluate(
                str(files / "qrels.txt"),
                str(files / "weak.run"),
                *measure_args(),
                "--format",
                "json",
            ).stdout
        )["all"].items()
    }


def test_the_csv_comparison_is_a_second_block(files, evaluate):
    out = evaluate(
        str(files / "qrels.txt"),
        str(files / "weak.run"),
        "-m",
        "map",
        "--baseline",
        str(files / "strong.run"),
        "--format",
        "csv",
    ).stdout

    first, second = out.split("\n\n")
    assert first.startswith("qid,map") and second.startswith("measure,mean_baseline")
    assert second.splitlines()[1].startswith("map,") and second.rstrip().endswith(",worse")


def test_fail_if_worse_needs_a_baseline(files, evaluate):
    result = evaluate(str(files / "qrels.txt"), str(files / "weak.run"), "--fail-if-worse")

    assert result.returncode == 1 and "--fail-if-worse needs --baseline" in result.stderr


def test_topics_only_one_run_has_are_left_out(files, tmp_path, evaluate):
    lines = (files / "weak.run").read_text().splitlines(keepends=True)
    first_topic = lines[0].split()[0]
    (tmp_path / "fewer.run").write_text(
        "".join(line for line in lines if line.split()[0] != first_topic)
    )

    out = evaluate(
        str(files / "qrels.txt"),
        str(tmp_path / "fewer.run"),
        "-m",
        "map",
        "--baseline",
        str(files / "strong.run"),
    ).stdout

    assert "on 39 topics; 1 only one of them has are left out." in out


@pytest.mark.django_db
def test_stored_runs_compare_with_the_numbers_of_the_comparison_page(media_root):
    qrels, bm25, dense = small_world()
    out = io.StringIO()
    args = ["evaluate", "dl@1", "dense/dense", "--baseline", "bm25/bm25", "--format", "json"]
    for spec in services.DASHBOARD_MEASURES:
        args += ["-m", spec]

    with contextlib.redirect_stdout(out):
        call_command(*args)

    rows = {row["measure"]: row for row in json.loads(out.getvalue())["comparison"]["measures"]}
    scoring = dashboards.make_scoring(qrels=qrels)
    for name in ("ndcg_cut_10", "P_5", "map", "judged_10"):
        [contrast] = dashboards.build_comparison(scoring, bm25, [dense], measure=name).contrasts
        c = contrast.comparison
        assert rows[name]["mean_baseline"] == c.mean_a and rows[name]["mean_run"] == c.mean_b
        assert rows[name]["mean_delta"] == c.mean_delta
        assert rows[name]["delta_interval"] == [c.delta_interval.low, c.delta_interval.high]
        assert rows[name]["randomisation_p"] == c.randomisation.p_value
        assert rows[name]["t_test_p"] == c.t_test.p_value
        assert rows[name]["verdict"] == contrast.verdict


@pytest.mark.django_db
def test_stored_runs_go_through_the_gate_with_call_command(media_root):
    small_world()
    code = ["evaluate", "dl", "bm25/bm25", "-m", "P.5", "--baseline", "bm25/bm25"]

    with contextlib.redirect_stdout(io.StringIO()) as out:
        call_command(*code, "--fail-if-worse")  # a run is never worse than itself

    assert out.getvalue().rstrip().endswith("no significant difference")
    with pytest.raises(CommandError, match="--alpha 2"):
        call_command(*code, "--alpha", "2")


def test_comparisons_pair_topics_in_byte_order():
    """The page and the CLI pair the same topics in the same order, so seeded resamples and
    sign flips give the same numbers: qids sorted as bytes ("10" < "9")."""
    from evaluation.cli.gate import compare_evaluations

    qrels = measures.qrels_frame({"9": {"a": 1}, "10": {"b": 1}, "100": {"c": 1}})
    run_a = measures.run_frame({"9": {"a": 1.0}, "10": {"x": 1.0}, "100": {"c": 1.0}})
    run_b = measures.run_frame({"9": {"x": 1.0}, "10": {"b": 1.0}, "100": {"c": 1.0}})
    a = measures.evaluate(qrels, run_a, ["P.1"])
    b = measures.evaluate(qrels, run_b, ["P.1"])

    gate = compare_evaluations(a, b, permutations=100, seed=0)

    expected = significance.compare(
        np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0]), permutations=100
    )
    # One gated measure: Holm over one p-value is the p-value itself.
    assert gate.comparisons["P_1"] == dataclasses.replace(
        expected,
        randomisation=dataclasses.replace(
            expected.randomisation, p_adjusted=expected.randomisation.p_value
        ),
    )


def unjudged_instead_of_judged_nonrelevant(folder):
    """40 topics; the baseline ranks r (grade 2) among judged non-relevant documents, the run
    ranks r at the same place among documents nobody judged. Same effectiveness on every
    topic; judged@10 far lower for the run."""
    qrels, baseline, run = [], [], []
    for topic in range(1, 41):
        place = topic % 10  # where r sits in the top 10, varying by topic
        qrels.append(f"{topic} 0 r{topic} 2\n")
        qrels += [f"{topic} 0 n{topic}-{i} 0\n" for i in range(9)]
        others = iter(range(9))
        for rank in range(10):
            if rank == place:
                docno = base_docno = f"r{topic}"
            else:
                i = next(others)
                base_docno, docno = f"n{topic}-{i}", f"u{topic}-{i}"
            baseline.append(f"{topic} Q0 {base_docno} {rank + 1} {10 - rank} base\n")
            run.append(f"{topic} Q0 {docno} {rank + 1} {10 - rank} new\n")
    for name, lines in (("qrels.txt", qrels), ("base.run", baseline), ("new.run", run)):
        (folder / name).write_text("".join(lines))


def test_a_run_with_many_unjudged_documents_but_equal_effectiveness_passes_the_gate(
    tmp_path, evaluate
):
    unjudged_instead_of_judged_nonrelevant(tmp_path)
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / "new.run")]
    args += ["-m", "ndcg_cut.10", "-m", "P.5", "-m", "map", "-m", "judged.10"]
    args += ["--baseline", str(tmp_path / "base.run"), "--fail-if-worse"]

    result = evaluate(*args)
    as_json = json.loads(evaluate(*args[:-1], "--format", "json").stdout)

    assert result.returncode == 0, (
        "judged@10 must not gate: a run retrieving unjudged documents is not worse\n"
        + result.stderr
    )
    rows = {row["measure"]: row for row in as_json["comparison"]["measures"]}
    # The run is far lower on judged@10 (10% against 100%), significantly so...
    assert rows["judged_10"]["mean_run"] == 0.1 and rows["judged_10"]["mean_baseline"] == 1.0
    assert rows["judged_10"]["randomisation_p"] < 0.05 and rows["judged_10"]["verdict"] == "worse"
    # ...but judged@10 is not gated, and on every gated measure the two runs are equal.
    assert rows["judged_10"]["gated"] is False and rows["judged_10"]["randomisation_p_holm"] is None
    assert as_json["comparison"]["gated"] == ["map", "P_5", "ndcg_cut_10"]
    for name in as_json["comparison"]["gated"]:
        assert rows[name]["mean_delta"] == 0.0 and rows[name]["verdict"] == "same", name
    assert "judged_10" in result.stdout
    assert "significantly worse (not gated)" in result.stdout


def gate_of(**deltas):
    """A Gate over 10 topics at 0.5 for the baseline and 0.5 + delta for the run."""
    from evaluation.cli.gate import Gate

    baseline = np.full(10, 0.5)
    comparisons = {
        name: significance.compare(baseline, baseline + np.array(d)) for name, d in deltas.items()
    }
    return Gate(10, 0, comparisons, 10_000, 0)


# A loss on 8 of 10 topics: with 2^10 sign patterns enumerated, p = 38/1024 exactly.
LOSS = [-0.3, -0.2, -0.2, -0.1, -0.1, -0.1, -0.1, 0.1, 0.05, -0.05]
NOISE = [0.1, -0.1, 0.2, -0.2, 0.05, -0.05, 0.1, -0.1, 0.3, -0.3]  # mean 0: p = 1


def test_the_gate_holm_adjusts_randomisation_p_values_across_gated_measures():
    gate = gate_of(ndcg_cut_10=LOSS, map=NOISE, judged_10=LOSS)

    ndcg = gate.comparisons["ndcg_cut_10"].randomisation
    assert ndcg.p_value == 38 / 1024  # below 0.05: alone it would fail the gate
    # Holm over the two gated measures (judged_10 is not one): the smallest p doubles.
    assert gate.gated == ["ndcg_cut_10", "map"]
    assert ndcg.p_adjusted == 2 * 38 / 1024
    assert gate.comparisons["map"].randomisation.p_adjusted == 1.0
    assert gate.comparisons["judged_10"].randomisation.p_adjusted is None
    assert gate.worse(0.05) == []
    assert gate.worse(0.1) == ["ndcg_cut_10"]


def test_with_one_gated_measure_the_gate_is_the_plain_test():
    gate = gate_of(ndcg_cut_10=LOSS, judged_10=LOSS)

    assert gate.comparisons["ndcg_cut_10"].randomisation.p_adjusted == 38 / 1024
    assert gate.worse(0.05) == ["ndcg_cut_10"]


def test_the_gate_help_says_judged_is_not_gated_and_p_values_are_holm_adjusted(evaluate):
    result = evaluate("--help")

    help_text = " ".join(result.stdout.split())
    assert "Holm-adjusted over all the gated measures" in help_text
    assert "except judged.k" in help_text


def test_the_gate_takes_ir_measures_names_and_leaves_counts_out(files, evaluate):
    result = evaluate(
        str(files / "qrels.txt"),
        str(files / "weak.run"),
        *["-m", "nDCG@10", "-m", "P(rel=2)@5", "-m", "ERR@10", "-m", "NumRet(rel=2)"],
        "--baseline",
        str(files / "strong.run"),
        "--fail-if-worse",
        "--format",
        "json",
    )

    assert result.returncode == 1, result.stderr
    comparison = json.loads(result.stdout)["comparison"]
    # NumRet(rel=2) is a count: reported in the evaluation, never compared or gated.
    assert comparison["gated"] == ["ndcg_cut_10", "ERR@10", "P(rel=2)@5"]
    assert "ERR@10" in result.stderr.splitlines()[-1]
