"""Binary qrels: every grade becomes 1 (relevant, grade >= the relevance threshold) or 0.

One rule for the qrels page's download, the API (``?binary=1``) and ``manage.py export_qrels
--binary``: the threshold asked for, else the one frozen on the publication when a campaign
published the version (annotation.Publication.relevance_threshold, so the binary file of a
published version never changes when the campaign's threshold does later), else 1, the
lowest grade trec_eval counts as relevant.
"""

from __future__ import annotations

import polars as pl
from django.core.exceptions import ObjectDoesNotExist

DEFAULT_THRESHOLD = 1


def binary_threshold(qrels, requested: int | None = None) -> int:
    """The threshold the binary form of ``qrels`` (a QrelsVersion) uses."""
    if requested is not None:
        return requested
    try:
        return qrels.publication.relevance_threshold
    except ObjectDoesNotExist:  # imported, not published from a campaign
        return DEFAULT_THRESHOLD


def binarise(frame: pl.DataFrame, threshold: int) -> pl.DataFrame:
    """``frame`` (qid, docno, grade) with grade 1 where grade >= threshold, else 0."""
    return frame.with_columns((pl.col("grade") >= threshold).cast(pl.Int64).alias("grade"))
