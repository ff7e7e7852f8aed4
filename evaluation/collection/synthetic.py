"""Seeded synthetic data for benchmarks and tests: graded qrels and runs of systems of
different quality, at any size. Pure (no Django). The demo uses a real collection instead
(evaluation/collection).
"""

import numpy as np

SYSTEMS = {
    # name: (how strongly the score follows the grade, noise)
    "bm25": (0.45, 1.0),
    "bm25-rm3": (0.55, 1.0),
    "dense-retriever": (0.8, 1.0),
}


def make_qrels_text(*, topics: int = 40, judged: int = 60, seed: int = 7) -> str:
    rng = np.random.default_rng(seed)
    lines = []
    for t in range(topics):
        qid = str(1001 + t)
        grades = rng.choice([0, 1, 2, 3], size=judged, p=[0.55, 0.22, 0.15, 0.08])
        lines.extend(f"{qid} 0 D{t:03d}-{d:04d} {g}" for d, g in enumerate(grades))
    return "\n".join(lines) + "\n"


def make_run_text(
    qrels_text: str, *, tag: str, strength: float, noise: float, depth: int = 100, seed: int = 11
) -> str:
    """A run whose scores follow the qrels grades with the given strength, plus unjudged
    documents, so systems differ in quality and in how much of their top k is judged."""
    rng = np.random.default_rng([seed, sum(tag.encode())])
    grades: dict[str, dict[str, int]] = {}
    for line in qrels_text.splitlines():
        qid, _, docno, grade = line.split()
        grades.setdefault(qid, {})[docno] = int(grade)
    lines = []
    for qid, judged in grades.items():
        docnos = list(judged) + [f"U{qid}-{i:04d}" for i in range(depth)]
        signal = np.array([judged.get(d, 0) for d in docnos], dtype=float)
        scores = strength * signal + noise * rng.standard_normal(len(docnos))
        order = np.argsort(-scores, kind="stable")[:depth]
        lines.extend(
            f"{qid} Q0 {docnos[i]} {rank} {scores[i]:.6f} {tag}"
            for rank, i in enumerate(order, start=1)
        )
    return "\n".join(lines) + "\n"
