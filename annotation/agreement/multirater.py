"""Agreement over all judges at once: Fleiss' kappa, Krippendorff's alpha (ordinal and
interval, missing judgments allowed) and observed agreement. Pure: numpy and scipy only.

Notation for item (pair) i: c_i[g] judges gave it grade g, m_i = sum_g c_i[g].

Fleiss' kappa (Fleiss 1971) needs every item graded by the same number m of judges. Here it
is computed over the items graded by the most common m >= 2 (the larger m on a tie), and the
note says how many items were left out (statsmodels' fleiss_kappa on those items' table):
    P_i = (sum_g c_i[g]^2 - m) / (m (m - 1)),  p_g = sum_i c_i[g] / (m N)
    kappa = (mean_i P_i - sum_g p_g^2) / (1 - sum_g p_g^2)

Krippendorff's alpha (Krippendorff 2004) uses every item with m_i >= 2 (the krippendorff
package's alpha with value_domain=<scale>):
    o[g, h] = sum_i (c_i[g] c_i[h] - [g = h] c_i[g]) / (m_i - 1)   coincidences
    n_g = sum_h o[g, h],  n = sum_g n_g
    e[g, h] = (n_g n_h - [g = h] n_g) / (n - 1)                      expected coincidences
    alpha = 1 - sum(o * d) / sum(e * d)
with d[g, h] = (value_g - value_h)^2 (interval) or, over scale positions g <= h,
(sum_{k=g..h} n_k - (n_g + n_h) / 2)^2 (ordinal).

Observed agreement: of all pairs of judgments made on the same item, the share whose grades
are equal (or at most ``within`` scale steps apart, e.g. 1 for "within one").
"""

import numpy as np
from scipy import sparse

from .core import RESAMPLES, Block, Ratings, Statistic, check_bootstrap, finish, run_blocks

LEVELS = ("ordinal", "interval")


def modal_judges(judgments_per_item: np.ndarray) -> int | None:
    """The most common number (>= 2) of judges per item, the larger on a tie; None if no
    item has two judges."""
    several = judgments_per_item[judgments_per_item >= 2]
    if not len(several):
        return None
    tally = np.bincount(several)
    return int(np.flatnonzero(tally == tally.max())[-1])


def binary_counts(ratings: Ratings) -> np.ndarray:
    """items x 2: judges who found the item not relevant / relevant."""
    t = ratings.relevant_from
    counts = ratings.counts
    return np.stack([counts[:, :t].sum(axis=1), counts[:, t:].sum(axis=1)], axis=1)


# --- Fleiss ----------------------------------------------------------------------------


def fleiss_block(counts: np.ndarray, m: int, kind: np.ndarray | None = None) -> Block:
    eligible = (counts.sum(axis=1) == m).astype(np.float64)[:, None]
    agreeing = (counts**2).sum(axis=1, keepdims=True) - m
    features = np.hstack([np.ones((len(counts), 1)), agreeing, counts]) * eligible

    def evaluate(sums: np.ndarray) -> np.ndarray:
        items = sums[:, 0]
        p_mean = sums[:, 1] / (m * (m - 1.0)) / items
        p_cat = sums[:, 2:] / (m * items)[:, None]
        p_expected = (p_cat * p_cat).sum(axis=1)
        kappa = (p_mean - p_expected) / (1 - p_expected)
        return np.where((items > 0) & (p_expected < 1), kappa, np.nan)

    return Block(sparse.csr_matrix(features), evaluate, kind)


def nobody_to_compare(ratings: Ratings) -> str:
    if not len(ratings.judges):
        return "there are no judgments yet"
    if len(ratings.judges) == 1:
        return "only one judge has graded pairs, so there is nothing to agree on"
    return "no pair has been graded by two or more judges yet"


def _fleiss_reason(ratings: Ratings, counts: np.ndarray, m: int | None, binary: bool) -> str:
    if m is None:
        return nobody_to_compare(ratings)
    used = np.flatnonzero(counts[counts.sum(axis=1) == m].sum(axis=0))
    if len(used) != 1:
        return ""
    if binary:
        side = "relevant" if used[0] == 1 else "not relevant"
        return (
            f"every judge called every pair {side} at threshold {ratings.threshold}, "
            "so Fleiss' kappa at the threshold is undefined"
        )
    return (
        f"every judge gave every pair the same grade ({ratings.scale[used[0]]}), "
        "so Fleiss' kappa is undefined"
    )


def _fleiss_note(counts: np.ndarray, m: int) -> str:
    per_item = counts.sum(axis=1)
    left_out = int((per_item != m).sum())
    if not left_out:
        return ""
    return (
        f"computed over the {int((per_item == m).sum())} pairs graded by {m} judges each; "
        f"{left_out} pairs graded by another number of judges were left out"
    )


def fleiss_parts(ratings: Ratings, *, binary: bool = False):
    """(block or None, pairs it covers, reason function, note) for Fleiss' kappa."""
    counts = binary_counts(ratings) if binary else ratings.counts
    m = modal_judges(counts.sum(axis=1))
    n = 0 if m is None else int((counts.sum(axis=1) == m).sum())
    block = None if m is None else fleiss_block(counts, m, ratings.kinds)
    note = "" if m is None else _fleiss_note(counts, m)
    return block, n, (lambda: _fleiss_reason(ratings, counts, m, binary)), note


def fleiss_kappa(
    ratings: Ratings,
    *,
    at_threshold: bool = False,
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Statistic:
    """Fleiss' kappa over all judges (on relevant / not relevant when ``at_threshold``),
    with a percentile bootstrap interval over pairs."""
    check_bootstrap(resamples, confidence)
    block, n, reason, note = fleiss_parts(ratings, binary=at_threshold)
    if block is None:
        return Statistic(value=None, reason=reason(), n=n)
    [(point, samples)] = run_blocks([block], resamples=resamples, seed=seed)
    return finish(point, n=n, samples=samples, confidence=confidence, reason=reason, note=note)


# --- Krippendorff ----------------------------------------------------------------------


def coincidences(counts: np.ndarray) -> np.ndarray:
    """items x k x k: each item's contribution to the coincidence matrix (0 if m_i < 2)."""
    c = counts.astype(np.float64)
    m = c.sum(axis=1)
    pairs = c[:, :, None] * c[:, None, :]
    k = c.shape[1]
    pairs[:, np.arange(k), np.arange(k)] -= c
    scale = np.divide(1.0, m - 1, out=np.zeros_like(m), where=m >= 2)
    return pairs * scale[:, None, None]


def _distances(n_v: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """(R, k, k) distances for resamples with value totals n_v of shape (R, k)."""
    k = len(values)
    if level == "interval":
        d = np.subtract.outer(values, values).astype(np.float64) ** 2
        return np.broadcast_to(d, (len(n_v), k, k))
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    cum = np.cumsum(n_v, axis=1)
    between = cum[:, hi] - cum[:, lo] + n_v[:, lo]
    return (between - (n_v[:, :, None] + n_v[:, None, :]) / 2) ** 2


def alpha_block(
    counts: np.ndarray, values: np.ndarray, level: str, kind: np.ndarray | None = None
) -> Block:
    k = counts.shape[1]

    def evaluate(sums: np.ndarray) -> np.ndarray:
        o = sums.reshape(-1, k, k)
        n_v = o.sum(axis=1)
        n = n_v.sum(axis=1)
        e = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(k)) / (n - 1)[
            :, None, None
        ]
        d = _distances(n_v, values, level)
        expected = (e * d).sum(axis=(1, 2))
        alpha = 1 - (o * d).sum(axis=(1, 2)) / expected
        return np.where((n > 1) & (expected > 0), alpha, np.nan)

    features = sparse.csr_matrix(coincidences(counts).reshape(len(counts), k * k))
    return Block(features, evaluate, kind)


def alpha_reason(ratings: Ratings) -> str:
    counts = ratings.counts[ratings.judgments_per_item >= 2]
    if not len(counts):
        return nobody_to_compare(ratings)
    used = np.flatnonzero(counts.sum(axis=0))
    if len(used) != 1:
        return ""
    return (
        f"every judgment of the pairs graded by two or more judges is grade "
        f"{ratings.scale[used[0]]}, so alpha is undefined: there is no variation to agree on"
    )


def krippendorff_alpha(
    ratings: Ratings,
    *,
    level: str = "ordinal",
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Statistic:
    """Krippendorff's alpha at ``level`` "ordinal" or "interval", over every pair graded by
    two or more judges, with a percentile bootstrap interval over pairs."""
    check_bootstrap(resamples, confidence)
    if level not in LEVELS:
        raise ValueError(f"level must be 'ordinal' or 'interval', got {level!r}")
    n = int((ratings.judgments_per_item >= 2).sum())
    if n == 0:
        return Statistic(value=None, reason=alpha_reason(ratings), n=0)
    block = alpha_block(ratings.counts, np.asarray(ratings.scale), level, ratings.kinds)
    [(point, samples)] = run_blocks([block], resamples=resamples, seed=seed)
    return finish(
        point, n=n, samples=samples, confidence=confidence, reason=lambda: alpha_reason(ratings)
    )


# --- observed agreement ----------------------------------------------------------------


def observed_block(counts: np.ndarray, within: int, kind: np.ndarray | None = None) -> Block:
    k = counts.shape[1]
    near = (np.abs(np.subtract.outer(np.arange(k), np.arange(k))) <= within).astype(np.float64)
    c = counts.astype(np.float64)
    m = c.sum(axis=1)
    close = np.einsum("ig,gh,ih->i", c, near, c) - m
    features = np.stack([close, m * (m - 1)], axis=1)

    def evaluate(sums: np.ndarray) -> np.ndarray:
        return np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], np.nan)

    return Block(sparse.csr_matrix(features), evaluate, kind)


def observed_agreement(
    ratings: Ratings,
    *,
    within: int = 0,
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Statistic:
    """Share of pairs of judgments on the same item that agree exactly (``within`` = 0) or
    are at most ``within`` scale steps apart, with a percentile bootstrap interval."""
    check_bootstrap(resamples, confidence)
    if within < 0:
        raise ValueError(f"within must be 0 or more, got {within}")
    n = int((ratings.judgments_per_item >= 2).sum())
    if n == 0:
        return Statistic(value=None, reason=nobody_to_compare(ratings), n=0)
    [(point, samples)] = run_blocks(
        [observed_block(ratings.counts, within, ratings.kinds)], resamples=resamples, seed=seed
    )
    return finish(point, n=n, samples=samples, confidence=confidence, reason=lambda: "")
