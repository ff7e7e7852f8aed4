"""The campaign's agreement report: every judge pair's table row and the all-judge
statistics, computed together over one shared set of bootstrap resamples. Pure.

One resampling of the campaign's pairs (items) serves every interval in the report, so a
pair's kappa interval comes from the same resamples as Fleiss' kappa and alpha; a judge
pair's kappa in a resample uses the shared items that resample drew (their number varies).
"""

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .core import (
    RESAMPLES,
    Block,
    Judge,
    Ratings,
    Statistic,
    check_bootstrap,
    check_weights,
    finish,
    percentiles,
    run_blocks,
    undefined,
)
from .kappa import (
    MIN_SHARED,
    collapse,
    confusion_of,
    kappa_reason,
    kappa_std_error,
    threshold_weights,
    weight_matrix,
)
from .multirater import (
    alpha_block,
    alpha_reason,
    fleiss_parts,
    nobody_to_compare,
    observed_block,
)

# Columns of a pair's values: kappa (chosen weights), unweighted kappa, kappa at the
# threshold, observed agreement, within-one agreement.
_PAIR_VALUES = 5


@dataclass(frozen=True)
class PairAgreement:
    """Two judges over the pairs both graded.

    confusion: counts over the scale, rows judge_a's grade, columns judge_b's.
    kappa: with the report's weights; kappa_unweighted carries the analytic ``se``.
    kappa_at_threshold: unweighted kappa of relevant (grade >= threshold) or not.
    observed / within_one: share of shared pairs graded the same / at most one step apart.
    """

    judge_a: Judge
    judge_b: Judge
    n: int
    confusion: tuple[tuple[int, ...], ...]
    kappa: Statistic
    kappa_unweighted: Statistic
    kappa_at_threshold: Statistic
    observed: Statistic
    within_one: Statistic


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of a campaign's judges; every Statistic's interval is a percentile
    bootstrap over pairs with ``resamples`` resamples from ``seed``.

    pairs: one row per two judges who graded at least one pair in common, in judge order.
    items: pairs with any judgment; multiply_judged: pairs graded by two or more judges.
    fleiss_at_threshold: Fleiss' kappa of relevant (grade >= threshold) or not, the overall
    kappa at the threshold (each pair row has its own kappa_at_threshold).
    alpha_ordinal, alpha_interval: Krippendorff's alpha over every multiply judged pair.
    observed, within_one: shares of pairs of judgments on the same pair that agree exactly
    or within one grade.
    """

    scale: tuple[int, ...]
    threshold: int
    weights: str | None
    judges: tuple[Judge, ...]
    items: int
    multiply_judged: int
    judgments: int
    pairs: tuple[PairAgreement, ...]
    fleiss: Statistic
    fleiss_at_threshold: Statistic
    alpha_ordinal: Statistic
    alpha_interval: Statistic
    observed: Statistic
    within_one: Statistic
    resamples: int
    seed: int
    confidence: float


def _pair_block(ratings: Ratings, weights: str | None) -> tuple[Block, list[tuple[int, int]]]:
    """One block for every judge pair that shares a graded item, evaluated to the five values
    of _PAIR_VALUES.

    Kappa needs, of a pair's confusion matrix, only linear sums: its weighted cells under
    each weight matrix, its two margins and its size (kappa = 1 - sum(W * C) / (sum_ij W_ij
    col_i row_j / n)). So an item gives each pair it is shared by those sums' terms, 2k + 6
    features, rather than the k x k cells: on a 101-grade scale that is 208 columns a pair,
    not 10,201, in every resample. The confusion matrices themselves are counted once, for
    the table (_pair_rows)."""
    codes = ratings.codes.astype(np.int64)
    k, t = len(ratings.scale), ratings.relevant_from
    # kappa (chosen weights), unweighted kappa, kappa at the threshold; then the shares of
    # pairs graded differently and more than one step apart, for the agreement columns.
    matrices = np.stack(
        [weight_matrix(k, weights), weight_matrix(k, None), threshold_weights(k, t)]
    )
    steps = np.abs(np.subtract.outer(np.arange(k), np.arange(k)))
    apart = np.stack([steps > 0, steps > 1]).astype(np.float64)
    width = 3 + 2 + 2 * k + 1  # weighted cells, apart, row margin, column margin, size
    graded = codes >= 0
    rows, cols, data, pairs = [], [], [], []
    for a in range(codes.shape[1]):
        for b in range(a + 1, codes.shape[1]):
            shared = np.flatnonzero(graded[:, a] & graded[:, b])
            if not len(shared):
                continue
            x, y, base = codes[shared, a], codes[shared, b], len(pairs) * width
            terms = [
                *((base + m, matrices[m, x, y]) for m in range(3)),
                *((base + 3 + d, apart[d, x, y]) for d in range(2)),
                (base + 5 + x, 1.0),
                (base + 5 + k + y, 1.0),
                (base + 5 + 2 * k, 1.0),
            ]
            for column, value in terms:
                rows.append(shared)
                cols.append(np.broadcast_to(column, shared.shape))
                data.append(np.broadcast_to(value, shared.shape))
            pairs.append((a, b))
    features = sparse.csr_matrix(
        (
            np.concatenate(data or [[]]).astype(np.float64),
            (np.concatenate(rows or [[]]), np.concatenate(cols or [[]])),
        ),
        shape=(len(codes), len(pairs) * width),
    )
    features.eliminate_zeros()
    # sum_ij W_ij col_i row_j, as matrix products: the bilinear form of each weight matrix.
    spread_by = matrices.transpose(1, 0, 2).reshape(k, 3 * k)

    def evaluate(sums: np.ndarray) -> np.ndarray:
        s = sums.reshape(len(sums), len(pairs), width)
        weighted, disagreeing = s[..., :3], s[..., 3:5]
        row, col, n = s[..., 5 : 5 + k], s[..., 5 + k : 5 + 2 * k], s[..., 5 + 2 * k :]
        # One product of contiguous 2-D arrays (BLAS): a strided 3-D operand takes numpy's
        # slow loop, 30 times slower here.
        spread = (np.ascontiguousarray(col).reshape(-1, k) @ spread_by).reshape(
            *col.shape[:-1], 3, k
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = (spread * row[..., None, :]).sum(axis=-1) / n
            kappa = np.where((n >= MIN_SHARED) & (expected > 0), 1 - weighted / expected, np.nan)
            agreeing = 1 - disagreeing / n
        return np.concatenate([kappa, agreeing], axis=-1)

    return Block(features, evaluate), pairs


def compute_agreement(
    ratings: Ratings,
    *,
    weights: str | None = "quadratic",
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementReport:
    """Every agreement statistic of ``ratings`` (see the package docstring), with pairwise
    kappa weighted by ``weights`` (None, "linear" or "quadratic"; default quadratic)."""
    check_weights(weights)
    check_bootstrap(resamples, confidence)
    per_item = ratings.judgments_per_item
    multiply_judged = int((per_item >= 2).sum())
    counts, scale = ratings.counts, np.asarray(ratings.scale)

    pair_block, pairs = _pair_block(ratings, weights)
    fleiss, fleiss_n, fleiss_reason, fleiss_note = fleiss_parts(ratings)
    binary, binary_n, binary_reason, binary_note = fleiss_parts(ratings, binary=True)
    blocks = {"pairs": pair_block}
    if fleiss is not None:
        blocks |= {"fleiss": fleiss, "binary": binary}
    if multiply_judged:
        blocks |= {
            "ordinal": alpha_block(counts, scale, "ordinal", ratings.kinds),
            "interval": alpha_block(counts, scale, "interval", ratings.kinds),
            "observed": observed_block(counts, 0, ratings.kinds),
            "within": observed_block(counts, 1, ratings.kinds),
        }
    results = dict(
        zip(blocks, run_blocks(list(blocks.values()), resamples=resamples, seed=seed), strict=True)
    )

    def stat(name: str, n: int, reason=lambda: "", note: str = "") -> Statistic:
        if name not in results:
            return undefined(nobody_to_compare(ratings), n)
        point, samples = results[name]
        return finish(point, n=n, samples=samples, confidence=confidence, reason=reason, note=note)

    why_alpha = lambda: alpha_reason(ratings)  # noqa: E731
    return AgreementReport(
        scale=ratings.scale,
        threshold=ratings.threshold,
        weights=weights,
        judges=ratings.judges,
        items=len(ratings.items),
        multiply_judged=multiply_judged,
        judgments=int(per_item.sum()),
        pairs=_pair_rows(ratings, pairs, results["pairs"], confidence),
        fleiss=stat("fleiss", fleiss_n, fleiss_reason, fleiss_note),
        fleiss_at_threshold=stat("binary", binary_n, binary_reason, binary_note),
        alpha_ordinal=stat("ordinal", multiply_judged, why_alpha),
        alpha_interval=stat("interval", multiply_judged, why_alpha),
        observed=stat("observed", multiply_judged),
        within_one=stat("within", multiply_judged),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )


def _pair_rows(ratings, pairs, result, confidence) -> tuple[PairAgreement, ...]:
    point, samples = result
    k = len(ratings.scale)
    codes, graded = ratings.codes.astype(np.int64), ratings.codes >= 0
    bounds = None if samples is None else (*percentiles(samples, confidence), len(samples))

    def value(p: int, column: int, n: int, why: str = "", se=None) -> Statistic:
        at = (p, column)
        interval = None
        if bounds is not None:
            low, high, defined, total = bounds
            interval = (low[at], high[at], int(defined[at]), total)
        return finish(point[at], n=n, bounds=interval, reason=lambda: why, se=se)

    rows = []
    for p, (a, b) in enumerate(pairs):
        shared = graded[:, a] & graded[:, b]
        confusion = confusion_of(codes[shared, a], codes[shared, b], k)
        n = int(confusion.sum())
        binary = collapse(confusion, ratings.relevant_from)
        why = kappa_reason(confusion, ratings.scale)
        rows.append(
            PairAgreement(
                judge_a=ratings.judges[a],
                judge_b=ratings.judges[b],
                n=n,
                confusion=tuple(map(tuple, confusion.tolist())),
                kappa=value(p, 0, n, why),
                kappa_unweighted=value(p, 1, n, why, se=kappa_std_error(confusion)),
                kappa_at_threshold=value(
                    p, 2, n, kappa_reason(binary, ratings.scale, ratings.threshold)
                ),
                observed=value(p, 3, n),
                within_one=value(p, 4, n),
            )
        )
    return tuple(rows)
