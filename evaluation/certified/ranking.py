"""The certified leaderboard's order: each run's certified estimate shrunk towards the nDCG of
the filled-in qrels when its correction is mostly noise (empirical Bayes). Pure: numpy only.

Why. The certified estimate is unbiased for the all-human mean to first order, but with a
few human grades a topic its correction is noisy, and noise reorders runs whose all-human
means are close. The filled-in qrels (the humans' grades where they judged, the machine's
elsewhere; "filling holes", arXiv 2405.04727) are not noisy but are biased; what matters for
the order is only how that bias differs from run to run. So the order uses the best guess of
each run's all-human mean given both: the corrections C_r = estimate_r - filled_r are
modelled as

    C = mu 1 + delta + noise,   delta ~ N(0, tau^2 I),   noise ~ N(0, Sigma)

(mu: the bias every run shares; delta: each run's own bias, the part that can reorder runs;
Sigma: the estimates' covariance, from the sample). tau^2 is chosen by restricted maximum
likelihood over a grid, mu by generalised least squares, and each run's *ranking score* is

    filled + mu^ + tau^2 (tau^2 I + Sigma)^-1 (C - mu^ 1)

When the sample shows large run-specific corrections (tau^2 large against Sigma), the score
is the certified estimate; when it shows none, the score is the filled-in qrels' value plus
the shared correction. With every pair sampled Sigma is 0 and the score is the estimate,
the all-human value.

What it is not. The ranking score is a point estimate for ordering only; it carries no
interval. The intervals and the settled pairs stay those of the certified estimate (valid
whatever the order uses), so a run's ranking score can lie outside its own interval when the
interval is wide. bench/README.md measures the choice of target (the calibrated prediction,
the raw machine, the filled-in qrels).
"""

import numpy as np

__all__ = ["shrink_corrections"]

GRID = np.concatenate([[0.0], np.geomspace(1e-4, 1e4, 81)])  # tau^2 / mean noise variance


def shrink_corrections(corrections: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """The corrections C (one per run) shrunk as the module says: mu^ + delta^ per run."""
    corrections = np.asarray(corrections, dtype=np.float64)
    runs = corrections.size
    if runs < 3:
        return corrections.copy()  # two runs cannot tell a shared bias from their own
    noise = float(np.trace(covariance)) / runs
    if not np.isfinite(noise) or noise <= 1e-18:
        return corrections.copy()  # no noise: the corrections are exact
    # A ridge keeps V invertible when the sample leaves Sigma singular.
    sigma = covariance + np.eye(runs) * noise * 1e-6
    ones = np.ones(runs)
    best, best_fit = -np.inf, None
    for ratio in GRID:
        v = sigma + np.eye(runs) * ratio * noise
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
    return mu + tau2 * v_centred
