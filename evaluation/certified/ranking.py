"""The certified leaderboard's order: each run's certified estimate shrunk towards the nDCG of
the filled-in qrels when its correction is mostly noise (empirical Bayes). Pure: numpy only.

Why. The certified estimate is unbiased for the all-human mean to first order, but with a
few human grades a topic its correction is noisy, and noise reorders runs whose all-human
means are close. The filled-in qrels (the humans' grades where they judged, the machine's
elsewhere; "filling holes", arXiv 2405.04727) are not noisy but are biased; what matters for
the order is only how that bias differs from run to run. So the order uses the best guess of
each run's all-human mean given both: the corrections C_r = estimate_r - filled_r are
modelled as

    C = mu 1 + delta + noise,   delta ~ N(0, tau^2 K),   noise ~ N(0, Sigma)

(mu: the bias every run shares; delta: each run's own bias, the part that can reorder runs;
Sigma: the estimates' covariance, from the sample). K says how the runs' own biases go
together (``shared_documents``): a run's bias is the sum, over the pairs no human judged, of
the machine's error on the pair times the pair's weight in the run's nDCG, so two runs that
rank the same unjudged documents high carry the same errors, and runs that share none carry
unrelated ones. K = A A' with A those weights (runs x unjudged pairs), scaled to a mean
variance of 1: the prior of a machine whose errors are independent from pair to pair,
whatever their size. tau^2 is chosen by restricted maximum likelihood over a grid, mu by
generalised least squares, and each run's *ranking score* is

    filled + mu^ + tau^2 K (tau^2 K + Sigma)^-1 (C - mu^ 1)

When the sample shows large run-specific corrections (tau^2 large against Sigma), the score
is the certified estimate; when it shows none, the score is the filled-in qrels' value plus
the shared correction. With every pair sampled Sigma is 0 and the score is the estimate,
the all-human value. Between the two, a run's correction borrows from those of the runs
that share its unjudged documents: a machine that favours the documents some rankers find
(rankers built like it) shifts those runs together, and the sample measures the shift on
all of them at once. Before K (K = I: the runs' biases unrelated) the same order was 0.02-0.03
of Kendall's tau lower with such a machine and the same within 0.006 with the others
(bench/README.md).

What it is not. The ranking score is a point estimate for ordering only; it carries no
interval. The intervals and the settled pairs stay those of the certified estimate (valid
whatever the order uses), so a run's ranking score can lie outside its own interval when the
interval is wide. bench/README.md measures the choice of target (the calibrated prediction,
the raw machine, the filled-in qrels) and of K.
"""

import numpy as np

from .pool import Pool, grade_counts, ideal_dcg

__all__ = ["shared_documents", "shrink_corrections"]

GRID = np.concatenate([[0.0], np.geomspace(1e-4, 1e4, 81)])  # tau^2 / mean noise variance


def shared_documents(pool: Pool, filled: np.ndarray, judged: np.ndarray) -> np.ndarray | None:
    """runs x runs: K of the module, from the pool, the filled-in grades (their ideal DCG
    normalises each topic) and the indices of the ``judged`` pairs (left out: a human grade
    carries no machine error). None when no unjudged pair weighs in any run (then every
    run's bias is 0 and K says nothing)."""
    ideal, _ = ideal_dcg(grade_counts(pool, filled), pool.k)
    counted = np.maximum(pool.scored.sum(axis=1), 1)
    # A topic with nothing relevant divides by 1, the ideal its first relevant pair would
    # give (as influence_scores does): its nDCG is 0 until then, not infinitely sensitive.
    weights = pool.weights / np.maximum(ideal, 1.0)[pool.topic][None, :] / counted[:, None]
    weights[:, judged] = 0.0
    kernel = weights @ weights.T
    scale = float(np.trace(kernel)) / kernel.shape[0]
    if not np.isfinite(scale) or scale <= 0:
        return None
    return kernel / scale


def shrink_corrections(
    corrections: np.ndarray, covariance: np.ndarray, prior: np.ndarray | None = None
) -> np.ndarray:
    """The corrections C (one per run) shrunk as the module says: mu^ + delta^ per run.
    ``prior``: K (runs x runs, symmetric, positive semi-definite); None for K = I."""
    corrections = np.asarray(corrections, dtype=np.float64)
    runs = corrections.size
    if runs < 3:
        return corrections.copy()  # two runs cannot tell a shared bias from their own
    noise = float(np.trace(covariance)) / runs
    if not np.isfinite(noise) or noise <= 1e-18:
        return corrections.copy()  # no noise: the corrections are exact
    kernel = np.eye(runs) if prior is None else np.asarray(prior, dtype=np.float64)
    if kernel.shape != (runs, runs):
        raise ValueError(f"the prior must be {runs} x {runs}, got {kernel.shape}")
    # A ridge keeps V invertible when the sample leaves Sigma singular.
    sigma = covariance + np.eye(runs) * noise * 1e-6
    ones = np.ones(runs)
    best, best_fit = -np.inf, None
    for ratio in GRID:
        v = sigma + kernel * ratio * noise
        try:
            chol = np.linalg.cholesky(v)
        except np.linalg.LinAlgError:
            continue
        solve = lambda x, c=chol: np.linalg.solve(c.T, np.linalg.solve(c, x))  # noqa: E731
        v_ones, v_c = solve(ones), solve(corrections)
        information = float(ones @ v_ones)
        mu = float(ones @ v_c) / information
        centred = corrections - mu
        # Restricted log-likelihood: -1/2 (log|V| + log(1' V^-1 1) + r' V^-1 r).
        fit = -0.5 * (
            2.0 * np.log(np.diag(chol)).sum() + np.log(information) + centred @ solve(centred)
        )
        if fit > best:
            best, best_fit = fit, (ratio * noise, mu, solve(centred))
    if best_fit is None:
        return corrections.copy()
    tau2, mu, v_centred = best_fit
    return mu + tau2 * (kernel @ v_centred)
