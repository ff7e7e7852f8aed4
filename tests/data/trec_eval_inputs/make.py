"""Writes the seeded input files of this folder (python make.py [SEED] [DIR]); tests also call
``write_inputs`` to make fresh data for the live comparisons with trec_eval.

Files: run.txt (every topic), run_partial.txt (some topics left out, for -c), prefs.txt (-R
prefs: judgment groups with one subgroup and with several, consistent by construction),
qrels.txt (graded, some negative grades), qrels_prefs.txt (the same without them),
qrels_jg.txt (-R qrels_jg), zscores.txt (-Z, for the official measures, a topic and some of
the other pairs left out, some deviations 0), zscores_nan.txt (the same with some values nan
or inf), zscores_other.txt (-Z for the preference and judgment-group measures).
"""

import sys
from pathlib import Path

import numpy as np

OFFICIAL = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref"]
OFFICIAL += ["recip_rank", "num_q"] + [f"iprec_at_recall_{p / 10:3.2f}" for p in range(11)]
OFFICIAL += [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


def write_inputs(seed: int, folder: Path, topics: int = 8) -> None:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    qids = [f"{100 + t}" for t in range(topics)]
    pools = {q: [f"D{q}-{i:03d}" for i in range(int(rng.integers(6, 30)))] for q in qids}
    run, partial = [], []
    for t, q in enumerate(qids):
        docs = rng.permutation(pools[q])[: int(rng.integers(1, len(pools[q]) + 1))]
        # Few distinct scores, so ties (and their docno order) matter.
        scores = np.round(rng.uniform(0, 3, docs.size), int(rng.integers(0, 3)))
        lines = [
            f"{q} Q0 {d} {i + 1} {s:g} sys{seed}"
            for i, (d, s) in enumerate(zip(docs, scores, strict=True))
        ]
        run += lines
        if t % 3 != 1:
            partial += lines
    run.append(f"999 Q0 X 1 1 sys{seed}")  # a topic nobody judged
    (folder / "run.txt").write_text("\n".join(run) + "\n")
    (folder / "run_partial.txt").write_text("\n".join(partial) + "\n")

    prefs = []
    for q in qids:
        for g in range(int(rng.integers(1, 4))):
            jg = f"u{g}"
            docs = rng.permutation(pools[q])[: int(rng.integers(1, 9))]
            if rng.random() < 0.5:  # one subgroup: levels, 0 = not relevant
                levels = rng.choice([0, 0, 1, 2, 3, 5.5], docs.size)
                prefs += [f"{q} {jg} s {d} {lv:g}" for d, lv in zip(docs, levels, strict=True)]
                continue
            # Several subgroups drawn from one hidden order: consistent, with transitives.
            worth = {d: float(rng.integers(0, 5)) for d in docs}
            for s in range(int(rng.integers(2, 4))):
                members = rng.permutation(docs)[: int(rng.integers(2, docs.size + 2))]
                prefs += [f"{q} {jg} s{s} {d} {worth[d]:g}" for d in members]
    (folder / "prefs.txt").write_text("\n".join(prefs) + "\n")

    qrels, qrels_jg = [], []
    for q in qids:
        docs = rng.permutation(pools[q])[: int(rng.integers(1, len(pools[q]) + 1))]
        grades = rng.choice([-1, 0, 0, 1, 2, 3], docs.size)
        grades[0] = max(grades[0], 0)  # trec_eval fails on a topic judged only negatively
        qrels += [f"{q} 0 {d} {int(g)}" for d, g in zip(docs, grades, strict=True)]
        for g in range(int(rng.integers(1, 4))):
            mine = rng.permutation(pools[q])[: int(rng.integers(1, len(pools[q]) + 1))]
            qrels_jg += [f"{q} j{g} {d} {int(rng.choice([-1, 0, 0, 1, 2]))}" for d in mine]
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    # Read as preferences, a negative grade can make trec_eval read past an array
    # (prefs_avgjg_Rnonrel, see evaluation.measures.prefs): those lines are left out here.
    kept = [line for line in qrels if not line.endswith("-1")]
    (folder / "qrels_prefs.txt").write_text("\n".join(kept) + "\n")
    (folder / "qrels_jg.txt").write_text("\n".join(qrels_jg) + "\n")

    # trec_eval's binary searches read past their arrays (and may crash) when a topic or a
    # measure missing from the file sorts after all present ones: only middle ones go missing.
    zscores = []
    last_name = max(OFFICIAL)
    for q in qids[:3] + qids[4:]:  # the fourth topic has no line at all
        for name in OFFICIAL:
            if name != last_name and rng.random() < 0.1:
                continue
            mean = round(float(rng.uniform(0, 1)), 4)
            stddev = 0.0 if rng.random() < 0.1 else round(float(rng.uniform(0.05, 0.5)), 4)
            zscores.append(f"{q} {name} {mean:g} {stddev:g}")
    (folder / "zscores.txt").write_text("\n".join(zscores) + "\n")
    # The same with some means and deviations nan or inf, as printf writes a statistic of
    # values that hold one (trec_eval 9.0.8's own test/zscores_file has "nan").
    odd = np.random.default_rng(seed + 2000)
    spellings = ["nan", "-nan", "inf", "-inf", "NaN", "Infinity"]
    with_nan = []
    for line in zscores:
        q, name, mean, stddev = line.split()
        if odd.random() < 0.15:
            mean = spellings[odd.integers(len(spellings))]
        if odd.random() < 0.15:
            stddev = spellings[odd.integers(len(spellings))]
        with_nan.append(f"{q} {name} {mean} {stddev}")
    (folder / "zscores_nan.txt").write_text("\n".join(with_nan) + "\n")

    # Means and deviations of the preference and judgment-group measures, for -Z with -R.
    other = np.random.default_rng(seed + 1000)
    names = ["num_q", "map_avgjg"] + [f"P_avgjg_{k}" for k in (5, 10, 15, 20, 30, 100)]
    names += [f"P_avgjg_{k}" for k in (200, 500, 1000)]
    names += [f"Rprec_mult_avgjg_{x / 10:3.2f}" for x in range(2, 21, 2)]
    names += ["prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"]
    for kind in ("simp", "pair", "avgjg", "avgjg_Rnonrel"):
        names += [f"prefs_{kind}", f"prefs_{kind}_ret"] + [f"prefs_{kind}_imp"] * (
            kind != "avgjg_Rnonrel"
        )
    zscores = []
    for q in qids:
        for name in sorted(set(names)):
            stddev = 0.0 if other.random() < 0.1 else round(float(other.uniform(0.1, 0.5)), 3)
            zscores.append(f"{q} {name} {round(float(other.uniform(0, 1)), 3):g} {stddev:g}")
    (folder / "zscores_other.txt").write_text("\n".join(zscores) + "\n")


if __name__ == "__main__":
    write_inputs(
        int(sys.argv[1]) if len(sys.argv) > 1 else 11,
        Path(sys.argv[2] if len(sys.argv) > 2 else "."),
    )
