"""A judgment group's preferences and their counts by area (form_prefs_counts.c), and the
recount m_prefs_avgjg_Rnonrel*.c makes with fewer non-relevant documents."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class _Group:
    """One judgment group's preferences over its own documents (local index = docid order)."""

    docid: np.ndarray  # sorted ascending
    prefers: np.ndarray | None  # subgroups: prefers[a, b] when document a is preferred to b
    level: np.ndarray  # per document: its level (subgroups: the last one assigned)
    ec: np.ndarray | None  # one subgroup: the equivalence class (0 = highest level)
    retrieved: int  # how many of its documents are retrieved (the first ones)

    def preference_matrix(self) -> np.ndarray:
        if self.prefers is not None:
            return self.prefers
        return self.ec[:, None] < self.ec[None, :]  # a higher class is preferred

    def counts(self) -> dict[str, int]:
        if self.prefers is not None:
            return _count(self.prefers, self.retrieved)
        return _count_classes(self.ec, self.retrieved)


def _ratio(ful: int, poss: int) -> float:
    if poss == 0:
        return math.nan if ful == 0 else math.copysign(math.inf, ful)
    return ful / poss


def _count(prefers: np.ndarray, k: int) -> dict[str, int]:
    """A jg's preference counts by area (form_prefs_counts.c's A1-A5); documents 0..k-1 are
    the retrieved ones, in rank order."""
    top = prefers[:k, :k]
    ful_ret = int(np.triu(top, 1).sum())
    ful_imp = int(prefers[:k, k:].sum())
    return {
        "ful_ret": ful_ret,
        "poss_ret": int(top.sum()),
        "ful_imp": ful_imp,
        "poss_imp": ful_imp + int(prefers[k:, :k].sum()),
        "notoccur": int(prefers[k:, k:].sum()),
    }


def _before(ec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For a jg with one subgroup (class ec per document, docid order): per document b, how
    many documents a < b are in a higher class (preferred to b) and in a lower one; and the
    same counting only the first k documents (the retrieved ones) as a."""
    classes = int(ec.max()) + 1 if ec.size else 1
    onehot = np.zeros((ec.size, classes), dtype=np.int64)
    onehot[np.arange(ec.size), ec] = 1
    before = np.cumsum(onehot, axis=0) - onehot
    upto = np.cumsum(before, axis=1)[np.arange(ec.size), ec]  # classes <= ec[b]
    same = before[np.arange(ec.size), ec]
    higher = upto - same
    lower = np.arange(ec.size) - upto
    in_top = np.bincount(ec[:k], minlength=classes)
    top_upto = np.cumsum(in_top)[ec]
    higher_top = top_upto - in_top[ec]
    lower_top = min(k, ec.size) - top_upto
    return higher, lower, higher_top, lower_top


def _count_classes(ec: np.ndarray, k: int) -> dict[str, int]:
    """_count for a jg with one subgroup, from its classes rather than a matrix."""
    higher, lower, higher_top, lower_top = _before(ec, k)
    ful_imp = int(higher_top[k:].sum())
    return {
        "ful_ret": int(higher[:k].sum()),
        "poss_ret": int(higher[:k].sum() + lower[:k].sum()),
        "ful_imp": ful_imp,
        "poss_imp": ful_imp + int(lower_top[k:].sum()),
        "notoccur": int((higher + lower - higher_top - lower_top)[k:].sum()),
    }


def _recount_classes(group: _Group, num_rel: int, num_rel_ret: int, retrieved_only: bool):
    """m_prefs_avgjg_Rnonrel*.c's recalculate() for a jg with one subgroup: every pair
    (a, b) with a in a higher class than b and b above the lowest class, then every pair
    (a, b) with a any document (the lowest class included, b itself too) and b among the
    first R (R_ret) documents of the lowest class; fulfilled when a comes before b and is
    retrieved. _ret: only retrieved documents, as a and as b."""
    ec, k = group.ec, group.retrieved
    last = int(ec.max())
    lowest = np.flatnonzero(ec == last)
    if retrieved_only:
        scope = k
        target = lowest[:num_rel_ret]
        target = target[target < k]
    else:
        scope = ec.size
        target = lowest[:num_rel]
    higher, _, higher_top, _ = _before(ec, k)
    # a fulfils when it comes before b and is retrieved: for b < k any a < b, else a < k.
    fulfilling = np.where(np.arange(ec.size) < k, higher, higher_top)
    above = np.flatnonzero(ec[:scope] < last)
    sizes = np.bincount(ec[:scope], minlength=last + 1)[:last]
    between = int((sizes * (np.cumsum(sizes) - sizes)).sum())
    ful = int(fulfilling[above].sum()) + int(np.minimum(target, k).sum())
    counted = between + scope * target.size
    return ful, counted


def _recount_subgroups(group: _Group, num_rel: int, retrieved_only: bool):
    """recalculate() for a jg with subgroups: non-relevant documents after the R-th one (in
    docid order; among the retrieved for _ret) are dropped, the areas counted again."""
    k = group.retrieved
    zero = group.level == 0
    scan = zero[:k] if retrieved_only else zero
    seen = np.cumsum(scan)
    beyond = np.flatnonzero(seen == num_rel + 1)
    first_dropped = beyond[0] if beyond.size else scan.size
    dropped = zero & (np.arange(zero.size) >= first_dropped)
    keep = ~dropped
    prefers = group.prefers[np.ix_(keep, keep)]
    counts = _count(prefers, int(keep[:k].sum()))
    if retrieved_only:
        return counts["ful_ret"], counts["poss_ret"]
    return (
        counts["ful_ret"] + counts["ful_imp"],
        counts["poss_ret"] + counts["poss_imp"] + counts["notoccur"],
    )


def _pairs_within(starts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j) of row indices within each group of consecutive rows."""
    squares = sizes * sizes
    group = np.repeat(np.arange(sizes.size), squares)
    offset = np.arange(int(squares.sum())) - np.repeat(np.cumsum(squares) - squares, squares)
    size = sizes[group]
    return starts[group] + offset // size, starts[group] + offset % size
