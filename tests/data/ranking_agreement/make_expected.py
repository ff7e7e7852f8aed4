"""Writes expected.json: autojudge-evaluate 1.1's tauap_b and tau_gap on generated
leaderboards, the reference for evaluation.analysis.ranking_agreement (tests/evaluation/
test_ranking_agreement.py). Not run by the tests; kept to say how the file was made.

    pip download "autojudge-evaluate==1.1.*" --no-deps -d /tmp/aje
    unzip /tmp/aje/autojudge_evaluate-1.1.0-py3-none-any.whl -d /tmp/aje/src
    .venv/bin/python tests/data/ranking_agreement/make_expected.py /tmp/aje/src

Its package cannot be imported offline (autojudge-base fetches NLTK data when imported), so
this loads its two self-contained modules, ``pyircore.py`` (tauap_b) and ``tau_gap.py``, by
path, and calls them as its ``LeaderboardEvaluator._compute_single_correlation`` does:
systems aligned in sorted name order, the reference (truth) first; "@k" keeps the k systems
the reference ranks first, ties at the edge broken by name as evaluation.analysis.ranking_agreement
breaks them (autojudge-evaluate's own cut keeps its dict order there), so the file checks
the coefficients, not the cut."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def load(source: Path, name: str):
    spec = importlib.util.spec_from_file_location(
        name, source / "autojudge_evaluate" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def boards(seed: int):
    """A reference leaderboard and a noisy other one; some with ties (scores rounded)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 31))
    truth = rng.uniform(0.1, 0.7, n)
    other = truth + rng.normal(0, [0.0, 0.02, 0.1, 0.4][seed % 4], n)
    if seed % 3 == 0:  # ties in both
        truth, other = np.round(truth, 1), np.round(other, 1)
    if seed % 5 == 0:  # reversed
        other = -other
    names = [f"run{i:02d}" for i in rng.permutation(n)]
    return (
        dict(zip(names, truth.round(6).tolist(), strict=True)),
        dict(zip(names, other.round(6).tolist(), strict=True)),
    )


def top(reference, k):
    return set(sorted(reference, key=lambda n: (-reference[n], n))[:k])


def main(source: Path) -> None:
    pyircore, gap = load(source, "pyircore"), load(source, "tau_gap")
    cases = []
    for seed in range(60):
        reference, other = boards(seed)
        row = {"seed": seed, "reference": reference, "other": other}
        for k in (None, 5, 10):
            keep = set(reference) if k is None else top(reference, k)
            names = sorted(keep)
            a = [reference[n] for n in names]
            b = [other[n] for n in names]
            suffix = "" if k is None else f"@{k}"
            if len(names) < 3:
                continue
            row["tauap_b" + suffix] = float(pyircore.tauap_b(a, b))
            row["tau_gap" + suffix] = float(gap.tau_gap(a, b))
        cases.append(row)
    made = (
        "autojudge-evaluate 1.1.0 (pyircore.tauap_b, tau_gap.tau_gap) via "
        "tests/data/ranking_agreement/make_expected.py"
    )
    (HERE / "expected.json").write_text(json.dumps({"made_by": made, "cases": cases}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
