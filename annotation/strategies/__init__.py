"""Pool-ordering strategies: which pair of a campaign's pool to judge next.

Four strategies share one contract (``annotation.strategies.base.Strategy``): built from the
pool and the runs' ranked lists, ``take()`` hands out each pair once and ``record(pair,
grade)`` feeds grades back. ``plan_order`` is what a campaign stores: the order of the pairs
still to judge given the grades so far. Pure: stdlib and numpy, no Django.
"""

from collections.abc import Iterable, Mapping, Sequence

from annotation.strategies.bandit import Bandit
from annotation.strategies.base import Pair, Rankings, Strategy
from annotation.strategies.discriminative import Discriminative
from annotation.strategies.move_to_front import MoveToFront
from annotation.strategies.random_order import RandomOrder

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (RandomOrder, MoveToFront, Bandit, Discriminative)
}


def make_strategy(name: str, pairs: Sequence[Pair], rankings: Rankings | None = None, **options):
    """The strategy called ``name`` over the pool; unknown names are refused."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"unknown ordering strategy {name!r}; choose from {', '.join(STRATEGIES)}"
        ) from None
    return cls(pairs, rankings, **options)


def plan_order(
    name: str,
    pairs: Sequence[Pair],
    rankings: Rankings | None = None,
    *,
    grades: Iterable[tuple[Pair, int]] | Mapping[Pair, int] = (),
    **options,
) -> list[Pair]:
    """The pairs without a grade, in the order the strategy would judge them next.

    ``grades`` are (pair, grade) in the order they were given (adaptive strategies learn in
    that order); a mapping is read in its iteration order.
    """
    strategy = make_strategy(name, pairs, rankings, **options)
    items = grades.items() if isinstance(grades, Mapping) else grades
    for pair, grade in items:
        strategy.record(pair, grade)
    return strategy.order()


__all__ = [
    "STRATEGIES",
    "Bandit",
    "Discriminative",
    "MoveToFront",
    "Pair",
    "RandomOrder",
    "Rankings",
    "Strategy",
    "make_strategy",
    "plan_order",
]
