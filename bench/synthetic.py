"""Seeded synthetic TREC qrels and runs for the benchmark, built with numpy, written by polars.

The data imitates an MS MARCO-style evaluation: numeric topic and document ids, one ranked list
of a fixed depth per topic, graded judgments (0-3) for a pool of documents that is mostly the
run's top ranks plus some documents the run did not retrieve. Scores are written with six
decimals and are built so that

- about 5% of run lines share their exact score with another line of the topic (a tie that
  trec_eval breaks by docno), and
- about 1% more sit 1e-6 below their neighbour, which float32 (trec_eval 9.0.8) sometimes
  rounds to the same value and float64 never does.

Files are cached in ``<data_dir>/<scale>-seed<seed>/`` and reused while GENERATOR_VERSION and
the scale's shape are unchanged. Run as a script it prints the dataset's paths and summary as
JSON; evaluate_bench.py calls it that way so that its own process stays small (see README.md).
"""

import argparse
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl

# Bump when the generated data changes, so cached files are rebuilt.
GENERATOR_VERSION = 1

CORPUS_SIZE = 8_841_823  # MS MARCO passage collection
TIE_RATE = 0.025  # share of lines given the previous line's score; ~2x as many lines end up tied
NEAR_TIE_RATE = 0.01  # share of lines 1e-6 below the previous line
UNRETRIEVED_RATE = 0.2  # share of judged documents the run does not retrieve
MAX_UNRETRIEVED = 60


@dataclass(frozen=True)
class Scale:
    topics: int
    depth: int  # documents per topic in the run
    judged: tuple[int, int]  # judged documents per topic, inclusive range
    # Generated and written this many topics at a time (each block its own seed and its own
    # range of topic ids), so that making a 70M-line run never holds it whole.
    block: int | None = None


SCALES = {
    "small": Scale(topics=50, depth=100, judged=(20, 60)),
    "1m": Scale(topics=1_000, depth=1_000, judged=(50, 200)),
    "7m": Scale(topics=6_980, depth=1_000, judged=(50, 200)),
    # Ten times MS MARCO dev, with its sparse judgments (1-3 a topic): for peak memory
    # (bounded by reading and scoring in chunks); a 2.7 GB run file.
    "70m": Scale(topics=69_800, depth=1_000, judged=(1, 3), block=6_980),
}
QID_RANGE = 1_200_000  # topic ids are drawn below this (plus QID_RANGE * block number)


@dataclass(frozen=True)
class Dataset:
    scale: str
    seed: int
    qrels_path: Path
    run_path: Path
    summary: dict


def ensure_dataset(scale, seed, data_dir):
    """Return the dataset for (scale, seed), generating and caching it on first use."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose from {', '.join(SCALES)}")
    directory = Path(data_dir) / f"{scale}-seed{seed}"
    qrels_path, run_path, meta_path = (
        directory / "qrels.txt",
        directory / "run.txt",
        directory / "meta.json",
    )
    expected = {"generator_version": GENERATOR_VERSION, "scale": asdict(SCALES[scale])}
    if meta_path.exists() and qrels_path.exists() and run_path.exists():
        meta = json.loads(meta_path.read_text())
        if {key: meta.get(key) for key in expected} == json.loads(json.dumps(expected)):
            return Dataset(scale, seed, qrels_path, run_path, meta["summary"])

    directory.mkdir(parents=True, exist_ok=True)
    if SCALES[scale].block is None:
        qrels, run, summary = generate_frames(SCALES[scale], seed)
        _write(qrels, qrels_path)
        _write(run, run_path)
    else:
        summary = _generate_in_blocks(SCALES[scale], seed, qrels_path, run_path)
    meta_path.write_text(json.dumps({**expected, "summary": summary}, indent=2) + "\n")
    return Dataset(scale, seed, qrels_path, run_path, summary)


def generate_frames(scale, seed):
    """Build (qrels, run, summary) for a scale; same seed, same data.

    qrels columns: qid, iter, docno, grade. run columns: qid, q0, docno, rank, score, tag,
    ordered by topic and then by score descending (rank 1 first; ties in random docno order).
    The summary holds counts that show the data has the intended shape.
    """
    rng = np.random.default_rng(seed)
    topics, depth = scale.topics, scale.depth
    qids = np.sort(rng.choice(QID_RANGE, size=topics, replace=False))

    # Distinct documents per topic: a random walk with positive steps over the corpus, then
    # shuffled. The first `depth` go into the run, the rest may be judged but not retrieved.
    width = depth + MAX_UNRETRIEVED
    steps = rng.integers(1, 2 * CORPUS_SIZE // width, size=(topics, width))
    documents = rng.permuted(np.cumsum(steps, axis=1), axis=1)
    retrieved, unretrieved = documents[:, :depth], documents[:, depth:]

    # Scores in millionths: a descending walk from 20-30, exact ties and 1e-6 near-ties mixed in.
    start = rng.integers(20_000_000, 30_000_000, size=(topics, 1))
    drops = np.maximum(2, np.rint(rng.exponential(15e6 / depth, size=(topics, depth))))
    draw = rng.random((topics, depth))
    drops[draw < TIE_RATE + NEAR_TIE_RATE] = 1
    drops[draw < TIE_RATE] = 0
    drops[:, 0] = 0
    scores = (start - np.cumsum(drops, axis=1).astype(np.int64)) / 1e6

    # Judged pool: weighted sampling without replacement (Efraimidis-Spirakis keys u^(1/w)),
    # top ranks far more likely to be judged, as in a pooled assessment.
    judged = rng.integers(scale.judged[0], scale.judged[1] + 1, size=topics)
    n_unretrieved = np.minimum(rng.binomial(judged, UNRETRIEVED_RATE), MAX_UNRETRIEVED)
    n_retrieved = np.clip(judged - n_unretrieved, 1, depth)
    ranks = np.arange(depth)
    keys = rng.random((topics, depth)) ** (1 + ranks / 30)
    threshold = -np.sort(-keys, axis=1)[np.arange(topics), n_retrieved - 1]
    judged_retrieved = keys >= threshold[:, None]
    judged_unretrieved = np.arange(MAX_UNRETRIEVED) < n_unretrieved[:, None]

    # Grades: relevance is likelier near the top; unretrieved judged documents are relevant
    # a quarter of the time.
    p_relevant = np.broadcast_to(0.15 + 0.55 * np.exp(-ranks / (depth / 10)), (topics, depth))
    qrels_topic = np.concatenate(
        [np.nonzero(judged_retrieved)[0], np.nonzero(judged_unretrieved)[0]]
    )
    qrels_docno = np.concatenate([retrieved[judged_retrieved], unretrieved[judged_unretrieved]])
    p = np.concatenate([p_relevant[judged_retrieved], np.full(judged_unretrieved.sum(), 0.25)])
    relevant = rng.random(len(p)) < p
    grades = np.where(relevant, rng.choice([1, 2, 3], size=len(p), p=[0.5, 0.3, 0.2]), 0)
    order = np.lexsort((qrels_docno, qrels_topic))

    qrels = pl.DataFrame(
        {
            "qid": qids[qrels_topic[order]],
            "iter": np.zeros(len(order), dtype=np.int64),
            "docno": qrels_docno[order],
            "grade": grades[order],
        }
    )
    run = pl.DataFrame(
        {
            "qid": np.repeat(qids, depth),
            "docno": retrieved.ravel(),
            "rank": np.tile(ranks + 1, topics),
            "score": scores.ravel(),
        }
    ).select(
        "qid", pl.lit("Q0").alias("q0"), "docno", "rank", "score", pl.lit("bench").alias("tag")
    )
    per_topic = np.bincount(qrels_topic, minlength=topics)
    summary = {
        "topics": topics,
        "run_lines": run.height,
        "qrels_lines": qrels.height,
        "judged_per_topic": [int(per_topic.min()), int(per_topic.max())],
        "grades": {str(g): int((grades == g).sum()) for g in range(4)},
        "run_lines_judged": round(float(judged_retrieved.mean()), 4),
        "judged_not_retrieved": int(n_unretrieved.sum()),
        "tied_lines": _tied_share(scores),
        "tied_lines_float32": _tied_share(scores.astype(np.float32)),
    }
    return qrels, run, summary


def _generate_in_blocks(scale, seed, qrels_path, run_path):
    """Write a scale's files block by block (see Scale.block); the summary's counts are
    summed over blocks and its shares are averages over blocks (they have equal sizes)."""
    block = Scale(topics=scale.block, depth=scale.depth, judged=scale.judged)
    n_blocks = -(-scale.topics // scale.block)
    summaries = []
    temporaries = [path.with_name(path.name + ".tmp") for path in (qrels_path, run_path)]
    with open(temporaries[0], "wb") as qrels_file, open(temporaries[1], "wb") as run_file:
        for number in range(n_blocks):
            qrels, run, summary = generate_frames(block, seed * 1_000 + number)
            offset = pl.col("qid") + number * QID_RANGE
            for frame, file in ((qrels, qrels_file), (run, run_file)):
                frame.with_columns(offset).write_csv(
                    file,
                    separator=" ",
                    include_header=False,
                    quote_style="never",
                    float_precision=6,
                )
            summaries.append(summary)
            del qrels, run
    for temporary, path in zip(temporaries, (qrels_path, run_path), strict=True):
        os.replace(temporary, path)
    summary = {"topics": scale.topics}
    for key in ("run_lines", "qrels_lines", "judged_not_retrieved"):
        summary[key] = sum(s[key] for s in summaries)
    summary["judged_per_topic"] = [
        min(s["judged_per_topic"][0] for s in summaries),
        max(s["judged_per_topic"][1] for s in summaries),
    ]
    summary["grades"] = {g: sum(s["grades"][g] for s in summaries) for g in summaries[0]["grades"]}
    for key in ("run_lines_judged", "tied_lines", "tied_lines_float32"):
        summary[key] = round(sum(s[key] for s in summaries) / len(summaries), 4)
    return summary


def _tied_share(scores):
    """Share of entries equal to a neighbour in their row (rows are sorted descending)."""
    equal = scores[:, 1:] == scores[:, :-1]
    tied = np.zeros(scores.shape, dtype=bool)
    tied[:, 1:] |= equal
    tied[:, :-1] |= equal
    return round(float(tied.mean()), 4)


def _write(frame, path):
    temporary = path.with_name(path.name + ".tmp")
    frame.write_csv(
        temporary, separator=" ", include_header=False, quote_style="never", float_precision=6
    )
    os.replace(temporary, path)


def write_untied(run_path, untied_path):
    """Write a copy of a run whose scores are all distinct but whose ranking is unchanged.

    Documents keep trec_eval 9.0.8's order (score rounded to float32, descending; ties by docno
    descending in byte order) and get the scores depth, depth - 1, ..., 1. Tools that break
    ties differently must agree with trec_eval on this copy; see bench/README.md.
    """
    columns = ["qid", "q0", "docno", "rank", "score", "tag"]
    run = pl.read_csv(
        run_path,
        separator=" ",
        has_header=False,
        new_columns=columns,
        schema_overrides={"qid": pl.String, "docno": pl.String, "score": pl.Float64},
    )
    untied = (
        run.with_columns(pl.col("score").cast(pl.Float32).alias("score32"))
        .sort(["qid", "score32", "docno"], descending=[False, True, True])
        .with_columns(
            pl.int_range(pl.len(), 0, -1).over("qid").cast(pl.Float64).alias("score"),
            pl.int_range(1, pl.len() + 1).over("qid").alias("rank"),
        )
        .select(columns)
    )
    _write(untied, untied_path)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Generate or reuse a benchmark dataset; print its paths and summary as JSON."
    )
    parser.add_argument("scale", choices=SCALES)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parent / "data")
    parser.add_argument(
        "--untied", action="store_true", help="also write run-untied.txt (see write_untied)"
    )
    args = parser.parse_args(argv)
    dataset = ensure_dataset(args.scale, args.seed, args.data_dir)
    paths = {"qrels": str(dataset.qrels_path), "run": str(dataset.run_path)}
    if args.untied:
        untied = dataset.run_path.with_name("run-untied.txt")
        if not untied.exists() or untied.stat().st_mtime < dataset.run_path.stat().st_mtime:
            write_untied(dataset.run_path, untied)
        paths["untied_run"] = str(untied)
    print(json.dumps({**paths, "summary": dataset.summary}))


if __name__ == "__main__":
    main()
