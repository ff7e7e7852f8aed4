"""Cohen's kappa for two judges over the pairs both graded, its analytic standard error,
and the binary kappa at the relevance threshold. Pure: numpy and scipy only.

With O the confusion matrix of counts (rows judge A's grade, columns judge B's, over every
grade of the scale), n its total, E[i, j] = (row total i) x (column total j) / n the counts
expected if the judges graded independently, and w a disagreement weight over scale
positions (unweighted: 1 off the diagonal; linear: |i - j|; quadratic: (i - j)^2):

    kappa = 1 - sum(w * O) / sum(w * E)

which is Cohen's (1960, 1968) kappa and equals scikit-learn's cohen_kappa_score with
labels=<the scale>. Unweighted it is (p_o - p_e) / (1 - p_e). Kappa is undefined when the
judges share fewer than 2 pairs, or when sum(w * E) = 0, which happens exactly when both
judges gave every shared pair one and the same grade.
"""

from collections.abc import Sequence

import numpy as np

from .core import (
    RESAMPLES,
    Block,
    Statistic,
    check_bootstrap,
    check_scale,
    check_weights,
    encode,
    finish,
    item_rows,
    run_blocks,
)

MIN_SHARED = 2


def weight_matrix(k: int, weights: str | None) -> np.ndarray:
    """Disagreement weights over k scale positions, as scikit-learn defines them."""
    check_weights(weights)
    steps = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
    if weights is None:
        return (steps > 0).astype(np.float64)
    return steps if weights == "linear" else steps**2


def threshold_weights(k: int, relevant_from: int) -> np.ndarray:
    """Disagreement weights of the binary kappa at the threshold, over k scale positions:
    1 where one grade is relevant and the other not. Kappa with these weights on the full
    confusion equals unweighted kappa on the collapsed 2 x 2 one (the weights are constant
    on its blocks)."""
    relevant = np.arange(k) >= relevant_from
    return np.not_equal.outer(relevant, relevant).astype(np.float64)


def kappas(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kappa of confusion matrices (..., k, k) under each of the weight matrices (m, k, k),
    shape (..., m); NaN where undefined (fewer than 2 pairs, or sum(w * E) = 0)."""
    counts = np.asarray(confusion, dtype=np.float64)
    m, k = len(weights), counts.shape[-1]
    rows, cols = counts.sum(axis=-1), counts.sum(axis=-2)
    n = rows.sum(axis=-1)[..., None]
    # matrix products (BLAS) rather than einsum: this runs on resamples x judge pairs
    observed_term = counts.reshape(*counts.shape[:-2], k * k) @ weights.reshape(m, k * k).T
    # sum(w * E) without building E: E[i, j] = cols[i] * rows[j] / n
    spread = (cols @ weights.transpose(1, 0, 2).reshape(k, m * k)).reshape(*cols.shape[:-1], m, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_term = (spread * rows[..., None, :]).sum(axis=-1) / n
        kappa = 1 - observed_term / expected_term
    return np.where((n >= MIN_SHARED) & (expected_term > 0), kappa, np.nan)


def kappa_from_confusion(confusion: np.ndarray, weights: str | None) -> np.ndarray:
    """Kappa of confusion matrices of shape (..., k, k); NaN where undefined (fewer than 2
    pairs, or both judges used one and the same grade throughout)."""
    k = np.shape(confusion)[-1]
    return kappas(confusion, weight_matrix(k, weights)[None])[..., 0]


def kappa_std_error(confusion: np.ndarray) -> float | None:
    """Large-sample standard error of unweighted kappa (Fleiss, Cohen & Everitt 1969, not
    the one under kappa = 0), as statsmodels' cohens_kappa(table).std_kappa:

        var = ( sum_i p_ii [1 - (p_i. + p_.i)(1 - k)]^2
                + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
                - [k - p_e (1 - k)]^2 ) / (n (1 - p_e)^2)

    with p the confusion as proportions, p_i. row and p_.j column proportions. None when
    kappa is undefined; 0 at perfect agreement, where rounding can leave the variance at
    -1e-17 and statsmodels then gives NaN.
    """
    counts = np.asarray(confusion, dtype=np.float64)
    n = counts.sum()
    if n < MIN_SHARED:
        return None
    p = counts / n
    p_row, p_col = counts.sum(axis=1) / n, counts.sum(axis=0) / n
    p_expected = np.diag(p_col * p_row[:, None]).sum()
    if p_expected >= 1:
        return None
    kappa = (np.diag(counts).sum() / n - p_expected) / (1 - p_expected)
    term_a = (np.diag(p) * (1 - (p_row + p_col) * (1 - kappa)) ** 2).sum()
    off = p * (p_col[:, None] + p_row) ** 2
    np.fill_diagonal(off, 0)
    term_b = (1 - kappa) ** 2 * off.sum()
    term_c = (kappa - p_expected * (1 - kappa)) ** 2
    variance = (term_a + term_b - term_c) / (1 - p_expected) ** 2 / n
    return float(np.sqrt(max(variance, 0.0)))  # rounding can leave -1e-18 at kappa = 1


def collapse(confusion: np.ndarray, relevant_from: int) -> np.ndarray:
    """The 2 x 2 confusion at the threshold: not relevant / relevant, from (..., k, k)."""
    t = relevant_from
    c = np.asarray(confusion)
    top = np.stack([c[..., :t, :t].sum((-2, -1)), c[..., :t, t:].sum((-2, -1))], axis=-1)
    bottom = np.stack([c[..., t:, :t].sum((-2, -1)), c[..., t:, t:].sum((-2, -1))], axis=-1)
    return np.stack([top, bottom], axis=-2)


def agreement_from_confusion(confusion: np.ndarray, within: int = 0) -> np.ndarray:
    """Share of pairs whose two grades are at most ``within`` scale steps apart; NaN at n=0."""
    counts = np.asarray(confusion, dtype=np.float64)
    k = counts.shape[-1]
    near = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) <= within
    with np.errstate(divide="ignore", invalid="ignore"):
        return (counts * near).sum(axis=(-2, -1)) / counts.sum(axis=(-2, -1))


def kappa_reason(
    confusion: np.ndarray,
    scale: Sequence[int],
    threshold: int | None = None,
    *,
    who: str = "the two judges",
) -> str:
    """Why kappa is undefined for this confusion matrix ('' when it is defined). With a
    threshold, ``confusion`` is the 2 x 2 matrix at that threshold; ``who`` names the two
    sides in the message."""
    counts = np.asarray(confusion)
    n = int(counts.sum())
    if n == 0:
        return f"{who} graded no pair in common, so kappa is undefined"
    if n < MIN_SHARED:
        return f"{who} graded only 1 pair in common; kappa needs at least 2"
    used = np.flatnonzero(counts.sum(axis=0) + counts.sum(axis=1))
    if len(used) > 1:
        return ""
    if threshold is None:
        return (
            f"{who} gave every shared pair the same grade ({scale[used[0]]}), "
            "so kappa is undefined: chance alone would give that agreement"
        )
    side = (
        f"relevant (grade >= {threshold})"
        if used[0] == 1
        else (f"not relevant (grade below {threshold})")
    )
    return f"{who} called every shared pair {side}, so kappa at the threshold is undefined"


def confusion_of(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """k x k counts of (a[t], b[t]) position pairs."""
    return np.bincount(a * k + b, minlength=k * k).reshape(k, k)


def kappa_block(
    rows: np.ndarray, cells: np.ndarray, n_items: int, k: int, weights: str | None
) -> Block:
    """Kappa as a bootstrap block: item rows[t] falls in confusion cell cells[t]."""
    return Block(
        features=item_rows(n_items, cells, k * k, rows=rows),
        evaluate=lambda sums: kappa_from_confusion(sums.reshape(-1, k, k), weights),
    )


def cohen_kappa(
    a: Sequence[int],
    b: Sequence[int],
    *,
    scale: Sequence[int],
    weights: str | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Statistic:
    """Cohen's kappa of two judges' grades of the same pairs (a[t] and b[t] grade pair t).

    weights: None, "linear" or "quadratic" over scale positions. The interval resamples the
    pairs (percentile bootstrap, ``resamples`` times, seeded); ``se`` is the analytic
    standard error when unweighted (see kappa_std_error).
    """
    grades = check_scale(scale)
    check_weights(weights)
    check_bootstrap(resamples, confidence)
    if len(a) != len(b):
        raise ValueError(f"the two judges' grades differ in length: {len(a)} and {len(b)}")
    k = len(grades)
    codes_a, codes_b = encode(a, grades), encode(b, grades)
    confusion = confusion_of(codes_a, codes_b, k)
    n = len(codes_a)
    if n < MIN_SHARED:
        return Statistic(value=None, reason=kappa_reason(confusion, grades), n=n)
    block = kappa_block(np.arange(n), codes_a * k + codes_b, n, k, weights)
    [(point, samples)] = run_blocks([block], resamples=resamples, seed=seed)
    return finish(
        point,
        n=n,
        samples=samples,
        confidence=confidence,
        reason=lambda: kappa_reason(confusion, grades),
        se=kappa_std_error(confusion) if weights is None else None,
    )
