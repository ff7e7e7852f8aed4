"""`evaluate`'s trec_eval inputs beyond qrels, and the flags that go with them. Pure.

    -R FORMAT   the relevance file's format: qrels (default), prefs, qrels_prefs, qrels_jg
    -Z FILE     print z-scores against the per-topic means and deviations in FILE
    -J          judged documents only (unjudged ones leave each ranking)
    -N NUM      number of documents in the collection (used by trec_eval's utility)
    -n          no summary: only the per-topic lines of -q

evaluation.cli.start defines these flags; evaluation.cli.main calls ``read_relevance`` and
``evaluate`` here, so the plain-file path and the Django command read and score them alike.
"""

from __future__ import annotations

from pathlib import Path

from evaluation import measures, trec
from evaluation.measures.judgment_groups import evaluate_judgment_groups
from evaluation.measures.prefs import evaluate_prefs, prefs_from_qrels

__all__ = ["evaluate", "read_relevance", "read_zscores"]


def read_relevance(rel_format: str, path: Path, read_file):
    """The relevance file in ``rel_format`` as the frame its engine takes; ``read_file`` is
    evaluation.cli.main.read_file (turns format errors into usage errors)."""
    if rel_format == "prefs":
        return read_file(trec.read_prefs, path)
    if rel_format == "qrels_prefs":
        return prefs_from_qrels(read_file(trec.read_qrels_prefs, path))
    if rel_format == "qrels_jg":
        return read_file(trec.read_qrels_jg, path)
    return read_file(trec.read_qrels, path)


def read_zscores(path: str | None, read_file):
    return None if path is None else read_file(trec.read_zscores, Path(path))


def evaluate(rel_format: str, relevance, run, specs, options, zscores=None):
    """Score ``run`` against a relevance frame read by ``read_relevance``; ValueError for
    measures the format cannot compute and for bad input."""
    if rel_format in ("prefs", "qrels_prefs"):
        return evaluate_prefs(
            relevance, run, specs, options, rel_format=rel_format, zscores=zscores
        )
    if rel_format == "qrels_jg":
        return evaluate_judgment_groups(relevance, run, specs, options, zscores=zscores)
    return measures.evaluate(relevance, run, specs, options, zscores=zscores)
