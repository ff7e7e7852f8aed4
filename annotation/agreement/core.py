"""The pieces every agreement statistic shares: the Statistic value object, the Ratings
structure built from (pair, judge, grade) triples, interpretation bands, and the seeded
bootstrap over pairs. Pure: numpy and scipy only.

A statistic is computed from sums over pairs ("items") of per-item features. The point
estimate uses every item once; a bootstrap resample uses each item as many times as it was
drawn, so one sparse product gives every statistic for a whole batch of resamples.
"""

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

# The bootstrap resamples of every agreement interval unless a caller asks for others: the
# product's one number (evaluation.analysis.significance), so every interval shown is made alike.
from evaluation.analysis.significance import RESAMPLES as RESAMPLES

Item = Hashable
Judge = Hashable
WEIGHTS = (None, "linear", "quadratic")
NOT_GRADED = -1
_CHUNK = 250  # resamples drawn at a time: bounds memory at ~250 x items counts
_SUMS_BUDGET = 2**23  # resample sums evaluated at a time (64 MB of float64): see run_blocks


@dataclass(frozen=True)
class Statistic:
    """One agreement number, or why there is none.

    value: the estimate, or None when it is undefined for these grades (never NaN).
    reason: when value is None, why, in plain words.
    low, high: the bootstrap percentile interval (None without resamples or value).
    n: how many pairs (items) the value is computed over.
    se: the analytic standard error, where one is known (unweighted Cohen's kappa).
    note: a caveat about a defined value, e.g. pairs left out or resamples without a value.
    """

    value: float | None
    reason: str = ""
    low: float | None = None
    high: float | None = None
    n: int = 0
    se: float | None = None
    note: str = ""

    @property
    def defined(self) -> bool:
        return self.value is not None


def undefined(reason: str, n: int = 0) -> Statistic:
    return Statistic(value=None, reason=reason, n=n)


def landis_koch(value: float | None) -> str:
    """Landis & Koch's (1977) words for a kappa: below 0 poor, up to 0.20 slight, 0.40 fair,
    0.60 moderate, 0.80 substantial, above 0.80 almost perfect (upper bounds inclusive)."""
    if value is None:
        return "undefined"
    if value < 0:
        return "poor"
    for bound, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if value <= bound:
            return word
    return "almost perfect"


def krippendorff_band(value: float | None) -> str:
    """Krippendorff's (2004) guidance for alpha: >= 0.800 reliable, >= 0.667 tentative
    conclusions only, below that unreliable."""
    if value is None:
        return "undefined"
    if value >= 0.8:
        return "reliable"
    return "tentative conclusions only" if value >= 0.667 else "unreliable"


def check_scale(scale: Sequence[int]) -> tuple[int, ...]:
    """The scale as a tuple of strictly increasing integer grades; ValueError otherwise."""
    grades = tuple(scale)
    if len(grades) < 2:
        raise ValueError("a scale needs at least two grades")
    if any(not is_grade(g) for g in grades):
        raise ValueError(f"scale grades must be integers, got {list(grades)!r}")
    if any(b <= a for a, b in itertools.pairwise(grades)):
        raise ValueError(f"scale grades must increase strictly, got {list(grades)!r}")
    return tuple(int(g) for g in grades)


def is_grade(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def check_weights(weights: str | None) -> None:
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def encode(grades: Iterable[int], scale: tuple[int, ...]) -> np.ndarray:
    """Grades as positions on the scale (int64); ValueError for a grade not on it."""
    position = {g: i for i, g in enumerate(scale)}
    codes = []
    for grade in grades:
        if not is_grade(grade) or int(grade) not in position:
            raise ValueError(f"grade {grade!r} is not on the scale {list(scale)}")
        codes.append(position[int(grade)])
    return np.asarray(codes, dtype=np.int64)


def code_dtype(grades: int) -> np.dtype:
    """The smallest signed integer type that holds every position on a scale of ``grades``
    grades (0 .. grades - 1) and NOT_GRADED: int8 up to 128 grades, then int16, and so on (a
    fixed int8 overflowed at grade 128)."""
    return next(
        np.dtype(kind)
        for kind in (np.int8, np.int16, np.int32, np.int64)
        if np.iinfo(kind).max >= grades - 1
    )


def ordered(keys: Iterable[Hashable]) -> list[Hashable]:
    """Distinct keys sorted when they compare, else in first-seen order, so results (and
    bootstrap resamples) do not depend on the order the triples came in."""
    seen = list(dict.fromkeys(keys))
    try:
        return sorted(seen)
    except TypeError:
        return seen


@dataclass(frozen=True, eq=False)
class Ratings:
    """Several judges' grades of the same pairs, as an items x judges matrix.

    codes[i, j] is the position on ``scale`` of judge j's grade for item i, or -1 when
    judge j did not grade it. ``threshold``: a grade >= threshold is relevant.
    """

    scale: tuple[int, ...]
    threshold: int
    items: tuple[Item, ...]
    judges: tuple[Judge, ...]
    codes: np.ndarray

    @property
    def relevant_from(self) -> int:
        """Position on the scale of the lowest relevant grade."""
        return next(i for i, g in enumerate(self.scale) if g >= self.threshold)

    @cached_property
    def counts(self) -> np.ndarray:
        """items x grades: how many judges gave each grade to each item."""
        k = len(self.scale)
        rows, cols = np.nonzero(self.codes >= 0)
        flat = np.bincount(rows * k + self.codes[rows, cols], minlength=len(self.items) * k)
        return flat.reshape(len(self.items), k)

    @cached_property
    def kinds(self) -> np.ndarray:
        """An integer per item, the same for items with the same grade counts."""
        return item_kinds(self.counts)

    @property
    def judgments_per_item(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def subset(self, rows: np.ndarray) -> "Ratings":
        """The same campaign restricted to the items at ``rows``."""
        return Ratings(
            self.scale,
            self.threshold,
            tuple(self.items[r] for r in rows),
            self.judges,
            self.codes[rows],
        )


def build_ratings(
    triples: Iterable[tuple[Item, Judge, int]], *, scale: Sequence[int], threshold: int
) -> Ratings:
    """Ratings from (item, judge, grade) triples; ValueError for a grade not on the scale,
    a judge grading an item twice, or a threshold that leaves no grade on either side."""
    grades = check_scale(scale)
    if not is_grade(threshold) or not grades[0] < threshold <= grades[-1]:
        raise ValueError(
            f"the relevance threshold must be above the lowest grade and at most the highest "
            f"({grades[0]} < threshold <= {grades[-1]}), got {threshold!r}"
        )
    rows = list(triples)
    items = ordered(item for item, _, _ in rows)
    judges = ordered(judge for _, judge, _ in rows)
    item_index = {item: i for i, item in enumerate(items)}
    judge_index = {judge: j for j, judge in enumerate(judges)}
    codes = np.full((len(items), len(judges)), NOT_GRADED, dtype=code_dtype(len(grades)))
    positions = encode((grade for _, _, grade in rows), grades)
    for (item, judge, _), code in zip(rows, positions, strict=True):
        i, j = item_index[item], judge_index[judge]
        if codes[i, j] != NOT_GRADED:
            raise ValueError(f"judge {judge!r} graded pair {item!r} more than once")
        codes[i, j] = code
    return Ratings(grades, int(threshold), tuple(items), tuple(judges), codes)


# --- bootstrap ------------------------------------------------------------------------


def resample_items(n_items: int, *, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The bootstrap resamples every interval uses: batches of shape (b, n_items), each row
    the indices of n_items items drawn with replacement. Same seed, same resamples."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, _CHUNK):
        yield rng.integers(0, n_items, size=(min(_CHUNK, resamples - start), n_items))


@dataclass(frozen=True)
class Block:
    """A family of statistics computed from sums of per-item features.

    features: items x F (sparse); evaluate: sums of shape (R, F) -> values (R, ...), NaN
    where a resample leaves the statistic undefined. kind: optional, an integer per item
    such that items of one kind have the same features (see item_kinds), so resampling
    can count items per kind instead of summing every feature.
    """

    features: sparse.csr_matrix
    evaluate: Callable[[np.ndarray], np.ndarray]
    kind: np.ndarray | None = None


def item_kinds(counts: np.ndarray) -> np.ndarray:
    """An integer per item, the same for items with the same grade counts."""
    radix = int(counts.max(initial=0)) + 1
    if radix ** counts.shape[1] < 2**62:
        code = counts.astype(np.int64) @ (radix ** np.arange(counts.shape[1], dtype=np.int64))
        return np.unique(code, return_inverse=True)[1]
    return np.unique(counts, axis=0, return_inverse=True)[1].ravel()


def _design(blocks: Sequence[Block]) -> tuple[sparse.csr_matrix, Callable]:
    """The matrix to multiply resample weights by, and how to turn the product into the
    blocks' stacked sums. Blocks with a kind share one items x kinds indicator (one nonzero
    per item instead of one per feature); the others enter as they are."""
    typed = [b for b in blocks if b.kind is not None]
    plain = [b.features for b in blocks if b.kind is None]
    parts, per_kind = [], np.zeros((0, 0))
    if typed:
        kinds = [typed[0].kind] + [b.kind for b in typed[1:] if b.kind is not typed[0].kind]
        if len(kinds) == 1:
            _, first, kind = np.unique(kinds[0], return_index=True, return_inverse=True)
        else:
            stacked = np.stack(kinds, axis=1)
            _, first, kind = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
        n_items = len(kind)
        per_kind = sparse.hstack([b.features for b in typed], format="csr")[first].toarray()
        parts.append(
            sparse.csr_matrix(
                (np.ones(n_items), (np.arange(n_items), kind.ravel())),
                shape=(n_items, len(first)),
            )
        )
    design = sparse.hstack(parts + plain, format="csr").T.tocsr()

    def unpack(product: np.ndarray) -> list[np.ndarray]:
        typed_sums = product[:, : len(per_kind)] @ per_kind
        plain_sums = product[:, len(per_kind) :]
        out, t, p = [], 0, 0
        for block in blocks:
            width = block.features.shape[1]
            if block.kind is not None:
                out.append(typed_sums[:, t : t + width])
                t += width
            else:
                out.append(plain_sums[:, p : p + width])
                p += width
        return out

    return design, unpack


def run_blocks(
    blocks: Sequence[Block], *, resamples: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """For each block: its point values (all items once) and, with resamples, its values
    in every resample, shape (resamples, ...). All blocks share the same resamples.

    The resamples' sums are evaluated a batch at a time and only the values are kept: the
    sums of one resample have a column per feature (k x k confusion cells for every pair of
    judges), which on a 101-grade scale with ten judges is 459,000 columns, 3.7 GB for 1000
    resamples at once. A batch holds at most _SUMS_BUDGET of them."""
    with np.errstate(divide="ignore", invalid="ignore"):
        points = [block.evaluate(np.asarray(block.features.sum(axis=0)))[0] for block in blocks]
    n_items = blocks[0].features.shape[0] if blocks else 0
    if resamples <= 0 or n_items == 0:
        return [(point, None) for point in points]
    design, unpack = _design(blocks)
    # Indicator designs give integer counts, exact in float32 below 2^24, at half the
    # memory traffic of float64.
    exact32 = bool(np.all(design.data == 1)) and n_items < 2**24
    dtype = np.float32 if exact32 else np.float64
    design = design.astype(dtype)
    batch = max(1, _SUMS_BUDGET // max(design.shape[0], 1))
    values: list[list[np.ndarray]] = [[] for _ in blocks]
    for draws in resample_items(n_items, resamples=resamples, seed=seed):
        for start in range(0, len(draws), batch):
            part = draws[start : start + batch]
            drawn = np.empty((len(part), n_items), dtype=dtype)  # drawn[r, i]: times r drew i
            for r, row in enumerate(part):
                drawn[r] = np.bincount(row, minlength=n_items)
            sums = (design @ np.ascontiguousarray(drawn.T)).T.astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                for kept, block, block_sums in zip(values, blocks, unpack(sums), strict=True):
                    kept.append(block.evaluate(block_sums))
    return [(point, np.concatenate(kept)) for point, kept in zip(points, values, strict=True)]


def percentiles(samples: np.ndarray, confidence: float):
    """Percentile bounds along axis 0 over the finite values, and how many were finite;
    bounds are NaN where none is."""
    flat = samples.reshape(len(samples), -1)
    tail = (1 - confidence) / 2 * 100
    finite = np.isfinite(flat)
    defined = finite.sum(axis=0)
    bounds = np.full((2, flat.shape[1]), np.nan)
    whole = defined == len(flat)
    if whole.any():
        bounds[:, whole] = np.percentile(flat[:, whole], [tail, 100 - tail], axis=0)
    for column in np.flatnonzero(~whole & (defined > 0)):
        values = flat[finite[:, column], column]
        bounds[:, column] = np.percentile(values, [tail, 100 - tail])
    shape = samples.shape[1:]
    return bounds[0].reshape(shape), bounds[1].reshape(shape), defined.reshape(shape)


def finish(
    value: float,
    *,
    n: int,
    reason: Callable[[], str],
    samples: np.ndarray | None = None,
    confidence: float = 0.95,
    bounds: tuple[float, float, int, int] | None = None,
    se: float | None = None,
    note: str = "",
) -> Statistic:
    """A Statistic from a point value and either its resampled values (1-D) or bounds
    already computed as (low, high, resamples with a value, resamples). The interval is
    the percentile interval of the resamples where the statistic is defined; the note says
    how many were left out."""
    if not math.isfinite(value):
        return undefined(reason() or "the statistic is undefined for these grades", n)
    if samples is not None:
        low, high, defined = percentiles(samples, confidence)
        bounds = (low, high, int(defined), len(samples))
    if bounds is None:
        return Statistic(value=float(value), n=n, se=se, note=note)
    low, high, defined, total = bounds
    if defined < total:
        extra = (
            f"undefined in {total - defined} of {total} resamples; "
            f"the interval uses the other {defined}"
        )
        note = f"{note}; {extra}" if note else extra
    if not defined:
        return Statistic(value=float(value), n=n, se=se, note=note)
    return Statistic(value=float(value), low=float(low), high=float(high), n=n, se=se, note=note)


def check_bootstrap(resamples: int, confidence: float) -> None:
    if resamples < 0:
        raise ValueError(f"resamples must be 0 or more, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def item_rows(n_items: int, columns: np.ndarray, width: int, rows=None) -> sparse.csr_matrix:
    """A sparse items x width indicator: item rows[t] has a 1 at column columns[t]."""
    rows = np.arange(n_items) if rows is None else rows
    data = np.ones(len(rows))
    return sparse.csr_matrix((data, (rows, columns)), shape=(n_items, width))
