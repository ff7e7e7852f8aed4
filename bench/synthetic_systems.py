"""Seeded synthetic systems for the judging-cost benchmark: many correlated runs over graded
qrels (the judging-side companion of synthetic.py, which makes one run for the scoring
benchmark). numpy only.

How the data is made (the same seed gives the same data):

- Topics: each has ``candidates`` documents (300) that some system could retrieve. The number
  of relevant ones is log-normal (median 25, clipped to 2..candidates/2), so some topics have
  a handful and some a hundred; a relevant document is grade 1, 2 or 3 with probability
  0.5, 0.3, 0.2 (TREC Deep Learning's 0-3 scale). Each topic has a difficulty that scales
  how well every system separates relevant from non-relevant documents on it.
- Systems: ``systems`` runs (32) in ``families`` (8) of related systems (think BM25
  variants, one dense model fine-tuned four ways, rerankers of one first stage). A family has
  a quality drawn uniformly in [0.4, 1.6]; each member varies it by N(0, 0.12); each topic
  varies each system's quality by a log-normal factor (sd 0.3), so the best system is not best
  on every topic.
- Scores: ``quality x grade + 0.8 common + 0.6 family + 0.5 own``, the last three standard
  normal noises: ``common`` is shared by every system (documents that look relevant to any
  ranker), ``family`` by the members of a family (their shared model), ``own`` by nobody.
  That makes runs correlated the way real submissions are: families retrieve nearly the same
  documents, and all systems agree on some non-relevant ones.
- Runs: each system's top ``depth`` (100) documents per topic by score (no ties).

Two named settings (``PROFILES``). ``default`` (above; every judging-cost table before
2026-11-26 evening) makes every run a good one: over seeds 0-9 at 50 topics the weakest run's
MAP (top 100) is 0.17 on average and the best's 0.66, and 23% of a depth-20 pool is relevant.
TREC ad hoc submissions spread far wider (TREC-8: runs' MAP from under 0.05 to over 0.3;
86,830 documents judged in its depth-100 pools of 50 topics, about 1,700 a topic, of which only
a few percent relevant). ``trec-like`` draws family quality from [0, 1.2]
and gives each topic 1,000 candidates: the weakest run's MAP is then 0.01, the median 0.12, the
best 0.40 (0.32 to 0.49 by seed), 10.5% of a depth-20 pool and 5.5% of a depth-100 pool
relevant. The relevant counts, grades, noises and families are drawn as above.
"""

from dataclasses import dataclass

import numpy as np

# Named settings of generate_collection (the module's docstring says what each gives).
PROFILES = {
    "default": {},
    "trec-like": {"candidates": 1000, "quality_range": (0.0, 1.2)},
}


@dataclass(frozen=True)
class Collection:
    qrels: dict  # qid -> docno -> grade, every candidate document
    runs: dict  # run -> qid -> docnos, best first
    quality: dict  # run -> its mean quality (for the README's description)


def generate_collection(
    *,
    topics: int,
    seed: int,
    systems: int = 32,
    families: int = 8,
    candidates: int = 300,
    depth: int = 100,
    quality_range: tuple[float, float] = (0.4, 1.6),
) -> Collection:
    if systems < 2 or families < 1 or families > systems:
        raise ValueError("need at least 2 systems and between 1 and `systems` families")
    if depth > candidates:
        raise ValueError(f"run depth {depth} exceeds the {candidates} candidate documents")
    rng = np.random.default_rng(seed)
    qids = [f"{1000 + t}" for t in range(topics)]

    n_relevant = np.clip(
        np.rint(rng.lognormal(np.log(25), 0.8, size=topics)), 2, candidates // 2
    ).astype(int)
    grades = np.zeros((topics, candidates), dtype=np.int64)
    for t in range(topics):
        rel = rng.choice(candidates, size=n_relevant[t], replace=False)
        grades[t, rel] = rng.choice([1, 2, 3], size=n_relevant[t], p=[0.5, 0.3, 0.2])
    difficulty = np.exp(rng.normal(0, 0.35, size=topics))

    family_of = np.arange(systems) % families
    family_quality = rng.uniform(*quality_range, size=families)
    quality = np.maximum(family_quality[family_of] + rng.normal(0, 0.12, size=systems), 0.0)
    per_topic = (
        quality[None, :] * np.exp(rng.normal(0, 0.3, size=(topics, systems))) * difficulty[:, None]
    )

    common = rng.standard_normal((topics, candidates))
    family_noise = rng.standard_normal((families, topics, candidates))
    runs: dict[str, dict[str, list[str]]] = {}
    docnos = np.array([f"D{i:04d}" for i in range(candidates)])
    for s in range(systems):
        score = (
            per_topic[:, s, None] * grades
            + 0.8 * common
            + 0.6 * family_noise[family_of[s]]
            + 0.5 * rng.standard_normal((topics, candidates))
        )
        top = np.argsort(-score, axis=1, kind="stable")[:, :depth]
        name = f"sys{s:02d}-f{family_of[s]}"
        runs[name] = {qid: [f"{qid}-{d}" for d in docnos[top[t]]] for t, qid in enumerate(qids)}
    qrels = {
        qid: {f"{qid}-{docnos[i]}": int(grades[t, i]) for i in range(candidates)}
        for t, qid in enumerate(qids)
    }
    names = sorted(runs)
    return Collection(qrels, runs, {name: float(quality[i]) for i, name in enumerate(names)})
