"""Who judges what: every pair goes to ``overlap`` distinct judges, balanced by load, whole
topics at a time so a judge works through one topic before the next. Pure: stdlib only.

Balancing is greedy longest-processing-time scheduling: topics largest first, each given to
the ``overlap`` judges with the least work so far (ties broken by a seeded shuffle, so the
result is reproducible). With T topics of sizes s_i this keeps every judge's load within
max(s_i) of the mean, which is as good as topic-granular assignment can promise.
"""

import random
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence

Judge = Hashable
Pair = Hashable


def assign_topics(
    topics: Mapping[str, Sequence[Pair]],
    judges: Sequence[Judge],
    *,
    overlap: int,
    load: Mapping[Judge, int] | None = None,
    already: Mapping[Pair, Iterable[Judge]] | None = None,
    seed: int = 0,
) -> dict[Judge, list[Pair]]:
    """Give each pair of each topic to judges until it has ``overlap`` of them.

    ``load`` is each judge's current number of open assignments; ``already`` the judges a
    pair already has (they are never given it twice, and count toward ``overlap``). Returns
    the new pairs per judge.
    """
    if overlap < 1:
        raise ValueError(f"overlap must be at least 1, got {overlap}")
    if len(set(judges)) != len(judges):
        raise ValueError("judges must be distinct")
    if len(judges) < overlap:
        raise ValueError(
            f"overlap {overlap} needs at least {overlap} judges, the campaign has {len(judges)}"
        )
    rng = random.Random(seed)
    tiebreak = {judge: rng.random() for judge in judges}
    work = {judge: (load or {}).get(judge, 0) for judge in judges}
    have = {pair: set(js) for pair, js in (already or {}).items()}
    given: dict[Judge, list[Pair]] = defaultdict(list)

    for qid in sorted(topics, key=lambda q: (-len(topics[q]), q)):
        pairs = topics[qid]
        # Judges already on this topic finish it first: fewer topic switches for everyone.
        on_topic = {j for pair in pairs for j in have.get(pair, ()) if j in work}
        for pair in pairs:
            # Every holder counts, a judge since removed too: their grade stays on the pair
            # (and so does their slot), as the docstring promises.
            needed = overlap - len(have.get(pair, set()))
            if needed <= 0:
                continue
            candidates = sorted(
                (j for j in judges if j not in have.get(pair, set())),
                key=lambda j: (j not in on_topic, work[j], tiebreak[j]),
            )
            for judge in candidates[:needed]:
                given[judge].append(pair)
                have.setdefault(pair, set()).add(judge)
                on_topic.add(judge)
                work[judge] += 1
    return dict(given)


def shuffled_order(items: Sequence[Pair], *, seed: Hashable) -> list[Pair]:
    """A reproducible random order of ``items`` for one judge (seeded by e.g. campaign, judge
    and topic), so judges see documents in different orders and never in rank order."""
    order = list(items)
    random.Random(str(seed)).shuffle(order)
    return order


def interleave(existing: Sequence[Pair], new: Sequence[Pair], *, seed: Hashable) -> list[Pair]:
    """``existing`` and ``new`` merged, each keeping its own order, with the places of the
    new items among the old drawn at random (seeded, so the result is reproducible): every
    interleaving is equally likely. Pairs added to a topic a judge is working through,
    calibration pairs above all, land anywhere among the pairs still to do rather than
    always after them, where their position would give them away."""
    total = len(existing) + len(new)
    slots = set(random.Random(str(seed)).sample(range(total), len(new)))
    old, fresh = iter(existing), iter(new)
    return [next(fresh) if index in slots else next(old) for index in range(total)]
