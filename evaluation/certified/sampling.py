"""Which pairs humans judge when a machine has graded the whole pool: three designs, each
with the inclusion probabilities the certified means need. Pure: numpy only.

The budget is a number of pairs (an int) or a share of the pool (a float in (0, 1]).
Every design is seeded (``numpy.random.default_rng(seed)``): the same pool, grades, budget
and seed choose the same pairs.

- ``sample_uniform``: simple random sampling without replacement, exactly the budget;
  every pair's probability is budget / pool size.
- ``sample_stratified``: strata are the cells topic x machine grade; each cell gets
  min(2, its size) pairs (two are needed to estimate its spread), the rest of the budget
  is shared in proportion to what the cells have left (largest remainders, ties to the
  earlier cell), and each cell is sampled without replacement. A pair's probability is its
  cell's n_h / N_h. When the budget cannot give every cell its two, the strata are the
  machine grades alone, and when it cannot even do that, the design is uniform; ``strata``
  says which was used. Cells the machine sorted well (most of its "0"s are 0) then cost
  little, and no topic goes unsampled.
- ``sample_active``: in the spirit of LARA (Takehi et al., arXiv 2411.06877), humans
  look where the machine's grade matters most and is least sure: a pair's probability is
  proportional to ``influence_scores`` (how far its grade can move the comparisons between
  runs, times the machine's uncertainty when it states one), never below ``floor`` times
  the uniform rate and at most 1, scaled so that the probabilities sum to the budget.
  Pairs are drawn independently (Poisson sampling), so the number chosen varies around
  the budget (its standard deviation is below sqrt(budget)); the floor keeps every
  probability positive, which the estimator's validity needs.
"""

from dataclasses import dataclass

import numpy as np

from .pool import Pool, check_grades, dcg, grade_counts, ideal_dcg

__all__ = [
    "Sample",
    "budget_count",
    "influence_scores",
    "sample_active",
    "sample_stratified",
    "sample_uniform",
]

UNIFORM, STRATIFIED, ACTIVE = "uniform", "stratified", "active"
STRATA_CELLS, STRATA_GRADES, STRATA_NONE = "topic x machine grade", "machine grade", "none"
PER_STRATUM = 2  # pairs each stratum needs for its spread to be estimated
FLOOR = 0.5  # the active design's least probability, as a share of the uniform rate


@dataclass(frozen=True, eq=False)
class Sample:
    """A design and its draw.

    probability: per pool pair, its inclusion probability (all > 0);
    chosen: the indices of the pairs drawn, ascending (the pairs humans must judge);
    stratum: per pool pair its stratum when each stratum is sampled without replacement to
        a fixed size (uniform: one stratum), None when pairs are drawn independently
        (Poisson: the active design);
    strata: which strata were used (``STRATA_*``).
    """

    strategy: str
    probability: np.ndarray
    chosen: np.ndarray
    stratum: np.ndarray | None
    strata: str = STRATA_NONE

    @property
    def expected_size(self) -> float:
        return float(self.probability.sum())


def budget_count(pool_size: int, budget: int | float) -> int:
    """The number of pairs a budget means: an int is a count (1..pool size), a float a
    share of the pool in (0, 1] (rounded, at least 1)."""
    if pool_size < 1:
        raise ValueError("the pool is empty")
    if isinstance(budget, bool) or not isinstance(budget, int | float | np.integer | np.floating):
        raise ValueError(f"the budget must be a count or a share of the pool, got {budget!r}")
    if isinstance(budget, int | np.integer):
        if not 1 <= budget <= pool_size:
            raise ValueError(f"a budget of {budget} pairs is outside 1..{pool_size}")
        return int(budget)
    if not 0.0 < budget <= 1.0:
        raise ValueError(f"a share of the pool must be in (0, 1], got {budget}")
    return max(1, round(budget * pool_size))


def sample_uniform(pool_size: int, budget: int | float, *, seed: int = 0) -> Sample:
    n = budget_count(pool_size, budget)
    chosen = np.sort(np.random.default_rng(seed).choice(pool_size, size=n, replace=False))
    probability = np.full(pool_size, n / pool_size)
    return Sample(UNIFORM, probability, chosen, np.zeros(pool_size, dtype=np.int64))


def sample_stratified(
    pool: Pool, machine: np.ndarray, budget: int | float, *, seed: int = 0
) -> Sample:
    """Stratified by topic and machine grade (see the module)."""
    machine = _machine(pool, machine)
    n = budget_count(pool.size, budget)
    for used, cells in (
        (STRATA_CELLS, pool.topic * (pool.top_grade + 1) + machine),
        (STRATA_GRADES, machine),
    ):
        _, stratum, sizes = np.unique(cells, return_inverse=True, return_counts=True)
        base = np.minimum(sizes, PER_STRATUM)
        if base.sum() <= n:
            strata = used
            break
    else:
        sample = sample_uniform(pool.size, n, seed=seed)
        return Sample(STRATIFIED, sample.probability, sample.chosen, sample.stratum)
    take = base + _largest_remainders(n - int(base.sum()), sizes - base)
    rng = np.random.default_rng(seed)
    order = np.argsort(stratum, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    chosen = [
        rng.choice(order[bounds[h] : bounds[h + 1]], size=int(take[h]), replace=False)
        for h in range(len(sizes))
    ]
    probability = (take / sizes)[stratum]
    return Sample(STRATIFIED, probability, np.sort(np.concatenate(chosen)), stratum, strata)


def influence_scores(
    pool: Pool, machine: np.ndarray, *, uncertainty: np.ndarray | None = None
) -> np.ndarray:
    """Per pair, how far its grade can move the leaderboard, under the machine's grades:
    its weight in the comparisons between runs (after Minimal Test Collections: the sum
    over pairs of runs (a, b) of |W[a, d] - W[b, d]|, divided by its topic's ideal DCG@k),
    plus its weight in that ideal (the slope of the ideal DCG@k at the pair's grade times
    the runs' mean DCG@k on the topic, over the ideal squared), over the topic count; times
    ``uncertainty`` (per pair, e.g. 1 minus the machine's probability of its own grade)
    when given."""
    machine = _machine(pool, machine)
    ideal, slope = ideal_dcg(grade_counts(pool, machine), pool.k)
    ideal = np.maximum(ideal, 1.0)
    runs = len(pool.runs)
    # sum over a < b of |x_a - x_b| = sum over j of (2j - runs + 1) x_(j), x sorted ascending
    ranked = np.sort(pool.weights, axis=0)
    spread = (2 * np.arange(runs) - runs + 1) @ ranked / ideal[pool.topic]
    # A pair's slope on the ideal: the slopes of the grades up to the machine's (or of
    # grade 1 for a pair the machine grades 0, which a human might find relevant).
    reach = np.maximum(machine, 1)
    cumulative = np.cumsum(slope, axis=1)[pool.topic, reach - 1]
    mean_dcg = dcg(pool, machine.astype(np.float64)).mean(axis=0)
    on_ideal = cumulative * mean_dcg[pool.topic] / ideal[pool.topic] ** 2
    score = (spread + runs * on_ideal) / max(1, len(pool.topics))
    if uncertainty is not None:
        uncertainty = np.asarray(uncertainty, dtype=np.float64)
        if uncertainty.shape != (pool.size,) or (uncertainty < 0).any():
            raise ValueError("uncertainty must give every pool pair a value >= 0")
        score = score * uncertainty
    return score


def sample_active(
    scores: np.ndarray, budget: int | float, *, seed: int = 0, floor: float = FLOOR
) -> Sample:
    """Poisson sampling with probabilities proportional to ``scores`` (see the module)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or not np.isfinite(scores).all() or (scores < 0).any():
        raise ValueError("scores must be finite and >= 0, one per pool pair")
    if not 0.0 < floor <= 1.0:
        raise ValueError(f"the floor must be in (0, 1], got {floor}")
    size = scores.size
    n = budget_count(size, budget)
    probability = _proportional(scores, n, floor * n / size)
    chosen = np.flatnonzero(np.random.default_rng(seed).random(size) < probability)
    return Sample(ACTIVE, probability, chosen, None)


def _proportional(scores: np.ndarray, n: int, least: float) -> np.ndarray:
    """min(1, max(least, c * scores)) with c chosen so that the sum is n (bisection; the sum
    is continuous and non-decreasing in c, at most size * least <= n at c = 0)."""
    if n >= scores.size:
        return np.ones(scores.size)
    if not scores.any():
        return np.full(scores.size, n / scores.size)
    positive = np.count_nonzero(scores)
    if positive + least * (scores.size - positive) <= n:
        # Even every scored pair at 1 leaves budget: the rest share it evenly.
        return np.where(scores > 0, 1.0, (n - positive) / (scores.size - positive))

    def total(c: float) -> float:
        return float(np.minimum(1.0, np.maximum(least, c * scores)).sum())

    low, high = 0.0, 1.0
    while total(high) < n:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if total(middle) < n:
            low = middle
        else:
            high = middle
    probability = np.minimum(1.0, np.maximum(least, high * scores))
    # The last rounding goes to the pairs strictly between the floor and 1 (their sum is
    # linear in c), so the probabilities add up to the budget.
    free = (probability > least) & (probability < 1.0)
    if free.any():
        probability[free] *= 1.0 + (n - probability.sum()) / probability[free].sum()
    return np.clip(probability, least, 1.0)


def _largest_remainders(extra: int, capacity: np.ndarray) -> np.ndarray:
    """``extra`` whole units shared in proportion to ``capacity`` (never above it)."""
    if extra <= 0 or capacity.sum() == 0:
        return np.zeros(capacity.size, dtype=np.int64)
    share = extra * capacity / capacity.sum()
    whole = np.floor(share).astype(np.int64)
    left = extra - int(whole.sum())
    order = np.argsort(-(share - whole), kind="stable")
    whole[order[:left]] += 1
    return np.minimum(whole, capacity)


def _machine(pool: Pool, machine: np.ndarray) -> np.ndarray:
    machine = check_grades(np.asarray(machine), pool.top_grade)
    if machine.shape != (pool.size,):
        raise ValueError(f"expected {pool.size} machine grades (one per pool pair)")
    return machine
