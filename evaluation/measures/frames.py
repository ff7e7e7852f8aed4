"""Mappings (the pytrec_eval / ranx / ir_measures shape) as the frames `evaluate` takes."""

from collections.abc import Mapping

import polars as pl

__all__ = ["qrels_frame", "run_frame"]


def qrels_frame(qrels: Mapping[str, Mapping[str, int]]) -> pl.DataFrame:
    """{qid: {docno: grade}} as a frame with columns qid, docno, grade (Int64)."""
    rows = [(qid, docno, grade) for qid, docs in qrels.items() for docno, grade in docs.items()]
    schema = {"qid": pl.String, "docno": pl.String, "grade": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def run_frame(run: Mapping[str, Mapping[str, float]]) -> pl.DataFrame:
    """{qid: {docno: score}} as a frame with columns qid, docno, score (Float64)."""
    rows = [
        (qid, docno, float(score)) for qid, docs in run.items() for docno, score in docs.items()
    ]
    schema = {"qid": pl.String, "docno": pl.String, "score": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")
