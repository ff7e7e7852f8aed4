"""How settled a ranking of systems is: Kendall's tau between two scorings of the same
systems. Pure: numpy only.
"""

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
