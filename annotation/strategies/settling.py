"""How settled a ranking of systems is: Kendall's tau between two scorings of the same
systems, the probability that one system beats another once the pool is judged, and the
stop rules a lead can choose (every adjacent pair settled, or the top systems settled).
Pure: numpy only.
"""

from itertools import pairwise
from math import erf, sqrt

import numpy as np


def kendall_tau(x, y) -> float:
    """Kendall's tau-b between two score vectors of the same systems (ties in either count
    against the denominator, as scipy.stats.kendalltau's default).

    tau_b = (C - D) / sqrt((n0 - t_x) (n0 - t_y)), with C and D the concordant and
    discordant pairs, n0 = n (n - 1) / 2, and t_x, t_y the pairs tied in x and in y.
    Undefined (nan) when either vector is constant or has fewer than two entries.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"kendall_tau needs two vectors of one length, got {x.shape}, {y.shape}")
    n = len(x)
    if n < 2:
        return float("nan")
    upper = np.triu_indices(n, 1)
    sx = np.sign(x[:, None] - x[None, :])[upper]
    sy = np.sign(y[:, None] - y[None, :])[upper]
    n0 = len(sx)
    tied_x, tied_y = np.count_nonzero(sx == 0), np.count_nonzero(sy == 0)
    denominator = np.sqrt(float(n0 - tied_x) * float(n0 - tied_y))
    if denominator == 0:
        return float("nan")
    return float((sx * sy).sum() / denominator)


def comparison_probability(v, weight, known, unjudged, *, gain_mean, gain_var):
    """S x S matrix: the probability that system a's mean nDCG@k beats b's once the unjudged
    documents are graded, under MTC's normal approximation (Carterette, Allan and Sitaraman
    2006): each unjudged document's grade is independent with mean ``gain_mean[d]`` and
    variance ``gain_var[d]`` (e.g. from the grades so far in its topic), so
    mean(a) - mean(b) is normal with

        mean = sum_judged w_d g_d (v_da - v_db) + sum_unjudged w_d mu_d (v_da - v_db)
        var  = sum_unjudged w_d^2 sigma_d^2 (v_da - v_db)^2

    ``v``: N x S discounts (1/log2(rank+1) within the top k, else 0); ``weight``: per
    document 1 / (IDCG_t T). A pair with no variance left is 1, 0 or 1/2 (a tie).
    """
    v = np.asarray(v, dtype=float)
    w = np.asarray(weight, dtype=float)
    graded = np.where(unjudged, gain_mean, known)
    contribution = (v * (w * graded)[:, None]).sum(axis=0)
    mean = contribution[:, None] - contribution[None, :]
    rows = np.flatnonzero(unjudged)
    scaled = v[rows] * (w[rows] * np.sqrt(np.asarray(gain_var, dtype=float)[rows]))[:, None]
    # sum_d (x_da - x_db)^2 = |x_a|^2 + |x_b|^2 - 2 x_a . x_b
    gram = scaled.T @ scaled
    squares = np.diag(gram)
    var = np.maximum(squares[:, None] + squares[None, :] - 2 * gram, 0.0)
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = mean / sd
    prob = np.vectorize(lambda x: 0.5 * (1 + erf(x / sqrt(2))))(np.nan_to_num(z))
    certain = sd == 0
    prob[certain] = np.where(mean[certain] > 0, 1.0, np.where(mean[certain] < 0, 0.0, 0.5))
    return prob


STOP_RULES = ("adjacent", "top")


def open_comparisons(scores, lower, upper, *, rule="adjacent", top=3, prob=None, confidence=0.95):
    """The comparisons a stop rule still waits for, as (a, b) index pairs with a ranked
    above b by ``scores``; the campaign may stop judging when the list is empty.

    ``rule="adjacent"``: every pair of systems next to each other in the ranking;
    ``rule="top"``: each of the ``top`` best systems against every system below it. A pair
    is settled when the bounds (``lower``/``upper`` on score(a) - score(b), every unjudged
    document irrelevant or of the top grade) exclude 0, or, given ``prob`` (P(a beats b)),
    when the probability of the current order is at least ``confidence``.
    """
    if rule not in STOP_RULES:
        raise ValueError(f"unknown stop rule {rule!r}; choose from {', '.join(STOP_RULES)}")
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must be between 0.5 and 1, got {confidence}")
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    order = list(np.argsort(-np.asarray(scores, dtype=float), kind="stable"))
    if rule == "adjacent":
        wanted = list(pairwise(order))
    else:
        wanted = [(a, b) for i, a in enumerate(order[:top]) for b in order[i + 1 :]]
    still = []
    for a, b in wanted:
        decided = lower[a][b] > 0 or upper[a][b] < 0
        likely = prob is not None and (prob[a][b] >= confidence or prob[a][b] <= 1 - confidence)
        if not (decided or likely):
            still.append((int(a), int(b)))
    return still
