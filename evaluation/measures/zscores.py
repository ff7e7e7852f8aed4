"""trec_eval's `-Z zscores_file`: each per-topic value as a z-score (convert_zscores.c). Pure.

For topic q and printed measure name m (P_10, num_ret, iprec_at_recall_0.10, ...) the file
gives mean(q, m) and stddev(q, m); the value v becomes

    (v - mean) / stddev      when stddev != 0
    0                        when stddev == 0 and v == mean
    -1000000                 when stddev == 0 and v != mean, or when the file has no line
                             for (q, m) (trec_eval's MISSING_ZSCORE_VALUE)

A mean or stddev of nan in the file (trec_eval reads it with atof) follows C's arithmetic as
trec_eval's does: a NaN stddev is not 0, so the z-score is NaN (printed "nan"), and nothing
equals a NaN mean.

Values are converted per topic, before they are averaged, so the "all" line is the mean
(counts: the sum) of the z-scores; num_q still counts topics. Every measure the evaluation
holds is converted the same way, whatever engine computed it; trec_eval prints the converted
lines with a "Z" before the name and counts with %6.4f.
"""

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

__all__ = ["MISSING_ZSCORE_VALUE", "convert_to_zscores"]

MISSING_ZSCORE_VALUE = -1000000.0


def convert_to_zscores(
    qids: Sequence[str] | pl.Series,
    columns: Mapping[str, np.ndarray],
    zscores: pl.DataFrame,
    evaluated: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """``columns`` (measure name -> one value per topic of ``qids``) as z-scores, from a frame
    with columns qid, measure, mean, stddev (evaluation.trec.read_zscores). Topics where
    ``evaluated`` is False (9.0.8 never evaluates a topic missing from the run) keep their
    values."""
    qids = pl.Series("qid", qids, dtype=pl.String)
    names = list(columns)
    if not names or qids.len() == 0:
        return {name: np.asarray(values, dtype=np.float64) for name, values in columns.items()}
    if zscores.select(pl.struct("qid", "measure").is_duplicated().any()).item():
        raise ValueError("zscores: a (topic, measure) pair appears twice")
    n = qids.len()
    long = pl.DataFrame(
        {
            "row": np.arange(n * len(names), dtype=np.int64),
            "qid": pl.concat([qids] * len(names)),
            "measure": np.repeat(np.array(names, dtype=object), n).astype(str),
            "value": np.concatenate(
                [np.asarray(columns[name], dtype=np.float64) for name in names]
            ),
        }
    )
    table = zscores.select("qid", "measure", "mean", "stddev")
    joined = long.join(table, on=["qid", "measure"], how="left", maintain_order="left").sort("row")
    value = joined.get_column("value").to_numpy()
    # A measure's NaN stands for trec_eval's 0/0, which x86 makes with the sign bit set; the
    # arithmetic below carries that sign (or a file's nan's) into the z-score, as C's does.
    value = np.where(np.isnan(value), -np.nan, value)
    # Null where the file has no line; a NaN the file holds is a value (see the docstring).
    found = joined.get_column("mean").is_not_null().to_numpy()
    mean = joined.get_column("mean").fill_null(0.0).to_numpy()
    stddev = joined.get_column("stddev").fill_null(0.0).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = (value - mean) / stddev
    converted = np.where(
        found,
        np.where(stddev != 0, scaled, np.where(value == mean, 0.0, MISSING_ZSCORE_VALUE)),
        MISSING_ZSCORE_VALUE,
    )
    keep = np.ones(n, dtype=bool) if evaluated is None else np.asarray(evaluated, dtype=bool)
    result = {}
    for i, name in enumerate(names):
        block = converted[i * n : (i + 1) * n]
        result[name] = np.where(keep, block, np.asarray(columns[name], dtype=np.float64))
    return result
