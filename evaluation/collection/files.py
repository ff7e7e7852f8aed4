"""A collection written as files that anyone (and this product's own importers) can read.

    OUT_DIR/documents.jsonl   {"docno", "title", "text", "url"} a line: the campaign documents
                              import's JSONL
    OUT_DIR/topics.jsonl      {"qid", "query", "description", "narrative"} a line: the
                              campaign topics import's JSONL
    OUT_DIR/qrels.txt         TREC qrels: qid 0 docno grade
    OUT_DIR/runs/NAME.txt     one TREC run per ranker: qid Q0 docno rank score tag
    OUT_DIR/collection.json   where it comes from (sources, licences), counts, nDCG@10 of each run

Written all or nothing: everything goes to a hidden folder inside OUT_DIR first and is moved
into place when complete, so a failure leaves OUT_DIR as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from evaluation import trec
from evaluation.measures import evaluate

from . import Collection

__all__ = ["qrels_text", "score_runs", "write_collection"]

MEASURE = "ndcg_cut.10"


def qrels_text(qrels: dict[str, dict[str, int]]) -> str:
    return "".join(
        f"{qid} 0 {docno} {grade}\n"
        for qid in sorted(qrels)
        for docno, grade in sorted(qrels[qid].items())
    )


def score_runs(collection: Collection, runs: dict[str, str]) -> dict[str, float]:
    """name -> mean nDCG@10 (trec_eval's ndcg_cut.10, by evaluation.measures) over the
    collection's topics; a topic a run does not answer counts 0."""
    qrels = trec.read_qrels(qrels_text(collection.qrels).encode(), name="qrels.txt")
    means = {}
    for name, text in runs.items():
        run = trec.read_run(text.encode(), name=f"runs/{name}.txt")
        per_topic = evaluate(qrels, run, [MEASURE]).per_topic
        values = dict(zip(per_topic["qid"], per_topic["ndcg_cut_10"], strict=True))
        topics = [topic.qid for topic in collection.topics]
        means[name] = sum(values.get(qid, 0.0) for qid in topics) / len(topics)
    return means


def write_collection(
    collection: Collection, runs: dict[str, str], out_dir: Path, *, about: dict | None = None
) -> list[Path]:
    """Write the files (see the module) into ``out_dir`` (made if missing); returns their
    paths. Raises OSError when ``out_dir`` cannot be made or written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".collection-", dir=out_dir))
    try:
        files = {
            "documents.jsonl": "".join(
                json.dumps(
                    {"docno": p.docno, "title": p.title, "text": p.text, "url": p.url},
                    ensure_ascii=False,
                )
                + "\n"
                for p in collection.passages
            ),
            "topics.jsonl": "".join(
                json.dumps(
                    {
                        "qid": t.qid,
                        "query": t.query,
                        "description": t.description,
                        "narrative": t.narrative,
                    },
                    ensure_ascii=False,
                )
                + "\n"
                for t in collection.topics
            ),
            "qrels.txt": qrels_text(collection.qrels),
            **{f"runs/{name}.txt": text for name, text in runs.items()},
            "collection.json": json.dumps(
                {
                    "sources": collection.sources,
                    "passages": len(collection.passages),
                    "topics": len(collection.topics),
                    "judgments": sum(len(t.answers) for t in collection.topics),
                    "runs": sorted(runs),
                    **(about or {}),
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n",
        }
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
        written = []
        for relative in files:
            target = out_dir / relative
            target.parent.mkdir(exist_ok=True)
            os.replace(staging / relative, target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
