"""A seeded synthetic campaign backup for the leads benchmark (bench/leads_bench.py).

    .venv/bin/python bench/leads_data.py --pairs 20000 -o campaign.json.gz

The campaign of issue 18: ``--pairs`` pairs over ``--topics`` topics (200), each pair graded by
``--overlap`` (3) of ``--judges`` (12) judges on the 0-3 scale, so 20,000 pairs give 60,000
judgments and 200,000 give 600,000. Each topic goes to its own seeded choice of judges (the
app assigns whole topics at a time), so every judge pair shares some pairs. A pair has a
hidden true grade (70% 0, 15% 1, 10% 2, 5% 3, like TREC pools); a judge gives it with
probability 0.7 and a neighbouring grade otherwise, so about half of the pairs are disputed
and about a fifth straddle the relevance threshold (2). Every judgment has its "graded" entry
in the history, as the app writes it. Written in the format of ``manage.py export_campaign``
(annotation/backup/), so ``manage.py import_campaign`` reads it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
from pathlib import Path

import numpy as np

SCALE = [
    {"grade": 0, "label": "Irrelevant", "definition": "Nothing to do with the query."},
    {"grade": 1, "label": "Related", "definition": "On the topic, does not answer it."},
    {"grade": 2, "label": "Highly relevant", "definition": "Answers part of the query."},
    {"grade": 3, "label": "Perfectly relevant", "definition": "Answers the query."},
]
TRUE_GRADES = [0.70, 0.15, 0.10, 0.05]
SAME_GRADE = 0.7


def _time(base: dt.datetime, seconds: float) -> str:
    return (base + dt.timedelta(seconds=float(seconds))).isoformat()


def build_backup(
    *, pairs: int, topics: int = 200, judges: int = 12, overlap: int = 3, seed: int = 18
) -> dict:
    rng = np.random.default_rng(seed)
    base = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    lead = "bench-lead"
    names = [f"judge{j:02d}" for j in range(judges)]
    users = [
        {"username": lead, "first_name": "", "last_name": "", "email": "", "roles": ["lead"]}
    ] + [
        {"username": n, "first_name": "", "last_name": "", "email": "", "roles": ["judge"]}
        for n in names
    ]
    topic_rows = [
        {
            "qid": f"{1000 + t}",
            "query": f"synthetic query number {t} about topic {t % 17}",
            "description": "",
            "narrative": "",
        }
        for t in range(topics)
    ]
    topic_of = np.arange(pairs) % topics
    true = rng.choice(len(TRUE_GRADES), size=pairs, p=TRUE_GRADES)
    panel = [rng.choice(judges, size=overlap, replace=False) for _ in range(topics)]
    documents, pair_rows, assignments, judgments, changes = [], [], [], [], []
    positions: dict[tuple[int, int], int] = {}
    for p in range(pairs):
        t = int(topic_of[p])
        qid, docno = topic_rows[t]["qid"], f"doc{p:07d}"
        documents.append(
            {
                "docno": docno,
                "title": f"Document {p}",
                "text": f"Synthetic passage {p} for topic {qid}. " * 4,
                "url": "",
            }
        )
        added = _time(base, p * 0.01)
        pair_rows.append(
            {
                "qid": qid,
                "docno": docno,
                "source": "imported",
                "gold_grade": None,
                "added_at": added,
            }
        )
        noise = rng.random(overlap)
        step = np.where(rng.random(overlap) < 0.5, -1, 1)
        for slot, j in enumerate(panel[t], start=1):
            judge = names[int(j)]
            grade = int(true[p]) if noise[slot - 1] < SAME_GRADE else int(true[p] + step[slot - 1])
            grade = min(max(grade, 0), len(SCALE) - 1)
            position = positions.get((t, int(j)), 0)
            positions[(t, int(j))] = position + 1
            assignments.append(
                {
                    "qid": qid,
                    "docno": docno,
                    "judge": judge,
                    "slot": slot,
                    "overlap": overlap,
                    "position": position,
                    "status": "done",
                    "created_at": added,
                }
            )
            at = _time(base, 86400 + p * 3 + slot)
            seconds = round(float(rng.gamma(2.0, 6.0)), 1)
            judgments.append(
                {
                    "qid": qid,
                    "docno": docno,
                    "judge": judge,
                    "grade": grade,
                    "skip_reason": "",
                    "note": "",
                    "seconds": seconds,
                    "last_request": None,
                    "created_at": at,
                    "updated_at": at,
                }
            )
            changes.append(
                {
                    "qid": qid,
                    "docno": docno,
                    "judge": judge,
                    "action": "graded",
                    "old_grade": None,
                    "new_grade": grade,
                    "note": "",
                    "changed_by": judge,
                    "changed_at": at,
                }
            )
    return {
        "format": "relevance-studio-campaign",
        "version": 1,
        "exported_at": _time(base, 30 * 86400),
        "campaign": {
            "name": f"Bench {pairs * overlap} judgments",
            "description": "Synthetic campaign of bench/leads_data.py.",
            "scale": SCALE,
            "guidelines": "",
            "overlap": overlap,
            "relevance_threshold": 2,
            "seed": seed,
            "adjudication_rule": "majority",
            "gold_min_accuracy": 0.7,
            "created_at": _time(base, 0),
            "lead": lead,
        },
        "users": users,
        "judges": [{"username": n, "added_at": _time(base, 1)} for n in names],
        "topics": topic_rows,
        "documents": documents,
        "pairs": pair_rows,
        "assignments": assignments,
        "judgments": judgments,
        "changes": changes,
        "decisions": [],
        "publications": [],
    }


def write_backup(path: Path, **shape) -> Path:
    """Write the backup once; a file already there with the same shape is reused."""
    path = Path(path)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(build_backup(**shape), separators=(",", ":")).encode()
    partial = path.with_suffix(".partial")
    with gzip.open(partial, "wb", compresslevel=3) as out:
        out.write(data)
    partial.rename(path)
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--judges", type=int, default=12)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    path = write_backup(
        Path(args.output),
        pairs=args.pairs,
        topics=args.topics,
        judges=args.judges,
        overlap=args.overlap,
        seed=args.seed,
    )
    print(path, file=sys.stderr)


if __name__ == "__main__":
    main()
