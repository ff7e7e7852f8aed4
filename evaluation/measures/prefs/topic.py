"""One topic's preference counts (form_prefs_counts.c) and each prefs measure from them."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from .counts import _Group, _pairs_within, _ratio, _recount_classes, _recount_subgroups


class _Topic:
    """The counts of form_prefs_counts.c for one topic, and each measure from them."""

    def __init__(self, qid: str, rows: pl.DataFrame, judged_ret: int, version: int) -> None:
        self.qid = qid
        self.judged_ret = judged_ret
        docid = rows.get_column("docid").to_numpy()
        self.num_judged = int(docid.max()) + 1 if docid.size else 0
        jg = rows.get_column("jg").to_numpy()
        jsg = rows.get_column("jsg").to_numpy()
        level = rows.get_column("level").to_numpy()
        docno = rows.get_column("docno").to_numpy()
        bounds = np.flatnonzero(np.r_[True, jg[1:] != jg[:-1], True]) if jg.size else [0]
        self.groups = [
            self._group(jg[a], jsg[a:b], level[a:b], docid[a:b], docno[a:b])
            for a, b in itertools.pairwise(bounds)
        ]
        self.jg_counts = [group.counts() for group in self.groups]
        self._pref_counts: np.ndarray | None = None
        self._cache: dict[str, float] = {}

    def pref_counts(self) -> np.ndarray:
        """counts[i, j]: how many judgment groups prefer docid i to docid j (trec_eval's
        counts array); only the pair measures of a topic with several groups need it."""
        if self._pref_counts is None:
            n = self.num_judged
            self._pref_counts = np.zeros((n, n), dtype=np.int32)
            for group in self.groups:
                self._pref_counts[np.ix_(group.docid, group.docid)] += group.preference_matrix()
        return self._pref_counts

    # --- building each judgment group ------------------------------------------------------

    def _group(self, jg, jsg, level, docid, docno) -> _Group:
        docs, local = np.unique(docid, return_inverse=True)
        m = docs.size
        retrieved = int(np.searchsorted(docs, self.judged_ret))
        final = np.empty(m)
        final[local] = level  # later rows win, as trec_eval's rel_array
        starts = np.flatnonzero(np.r_[True, jsg[1:] != jsg[:-1]])
        if starts.size == 1:
            # One subgroup: equivalence classes by level, every document once.
            ec = np.zeros(m, dtype=np.int64)
            ec[local] = np.cumsum(np.r_[False, level[1:] != level[:-1]])
            return _Group(docs, None, final, ec, retrieved)
        self._check_zero_levels(jg, level, local, docno)
        prefers = np.zeros((m, m), dtype=bool)
        sizes = np.diff(np.r_[starts, jsg.size])
        if starts.size > 64:  # many small subgroups (pairwise preferences): all pairs at once
            first, second = _pairs_within(starts, sizes)
            above = level[first] > level[second]
            prefers[local[first[above]], local[second[above]]] = True
        else:
            for start, size in zip(starts, sizes, strict=True):
                rows = slice(start, start + size)
                prefers[np.ix_(local[rows], local[rows])] |= (
                    level[rows][:, None] > level[rows][None, :]
                )
        prefers = self._closure(jg, prefers, docno, local)
        return _Group(docs, prefers, final, None, retrieved)

    def _check_zero_levels(self, jg, level, local, docno) -> None:
        # trec_eval checks each row against the level last given to its document.
        order = np.argsort(local, kind="stable")
        same = local[order][1:] == local[order][:-1]
        before, after = level[order][:-1], level[order][1:]
        clash = same & (((before > 0) & (after == 0)) | ((before == 0) & (after > 0)))
        if clash.any():
            name = docno[order][1:][clash][0]
            raise ValueError(
                f"prefs: topic {self.qid!r}, judgment group {jg!r}: document {name!r} has "
                "level 0 in one subgroup and a level above 0 in another"
            )

    def _closure(self, jg, prefers, docno, local) -> np.ndarray:
        m = prefers.shape[0]
        reach = prefers | np.eye(m, dtype=bool)
        while True:
            wider = (reach.astype(np.float32) @ reach.astype(np.float32)) > 0
            if np.array_equal(wider, reach):
                break
            reach = wider
        np.fill_diagonal(reach, False)
        both = reach & reach.T
        if both.any():
            a, b = np.argwhere(both)[0]
            names = {int(i): str(n) for i, n in zip(local, docno, strict=True)}
            raise ValueError(
                f"prefs: topic {self.qid!r}, judgment group {jg!r}: the preferences contradict "
                f"each other: {names[a]!r} and {names[b]!r} are each preferred to the other "
                "(directly or through other documents)"
            )
        return reach

    # --- measures ------------------------------------------------------------------------------

    def value(self, name: str) -> float:
        if name not in self._cache:
            self._cache[name] = float(getattr(self, f"_{name}")())
        return self._cache[name]

    def _total(self, *fields: str) -> int:
        return sum(int(counts[field]) for counts in self.jg_counts for field in fields)

    def _num_q(self):
        return 1.0

    def _prefs_num_prefs_poss(self):
        return self._total("poss_ret", "poss_imp", "notoccur")

    def _prefs_num_prefs_ful(self):
        return self._total("ful_ret", "ful_imp")

    def _prefs_num_prefs_ful_ret(self):
        return self._total("ful_ret")

    def _simp(self, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
        possible = self._total(*poss)
        return self._total(*ful) / possible if possible else 0.0

    def _prefs_simp(self):
        return self._simp(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp", "notoccur"))

    def _prefs_simp_ret(self):
        return self._simp(("ful_ret",), ("poss_ret",))

    def _prefs_simp_imp(self):
        return self._simp(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp"))

    def _avgjg(self, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
        total = 0.0
        for counts in self.jg_counts:
            possible = sum(int(counts[f]) for f in poss)
            if possible:
                total += sum(int(counts[f]) for f in ful) / possible
        return total / len(self.groups) if total > 0.0 else 0.0

    def _prefs_avgjg(self):
        return self._avgjg(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp", "notoccur"))

    def _prefs_avgjg_ret(self):
        return self._avgjg(("ful_ret",), ("poss_ret",))

    def _prefs_avgjg_imp(self):
        return self._avgjg(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp"))

    def _pair(self, blocks: tuple[str, ...]) -> float:
        """Mean over document pairs (i < j in docid order) with a preference either way of
        counts[i, j] / (counts[i, j] + counts[j, i]), the pairs taken block by block."""
        if len(self.groups) == 1:
            # One group: each pair scores 1 when fulfilled and 0 otherwise, so the mean over
            # pairs is prefs_simp's ratio (sums of ones and zeros are exact in any order).
            ful = {"ret": ("ful_ret",), "imp": ("ful_imp",), "notoccur": ()}
            poss = {"ret": ("poss_ret",), "imp": ("poss_imp",), "notoccur": ("notoccur",)}
            return self._simp(
                tuple(f for b in blocks for f in ful[b]), tuple(f for b in blocks for f in poss[b])
            )
        k, n = self.judged_ret, self.num_judged
        c = self.pref_counts()
        ratios, pairs = [], 0
        spans = {"ret": (0, k, None), "imp": (0, k, (k, n)), "notoccur": (k, n, None)}
        for block in blocks:
            low, high, columns = spans[block]
            if columns is None:
                upper = np.triu(np.ones((high - low, high - low), dtype=bool), 1)
                forward, backward = c[low:high, low:high], c[low:high, low:high].T
                present = upper & ((forward > 0) | (backward > 0))
            else:
                forward = c[low:high, columns[0] : columns[1]]
                backward = c[columns[0] : columns[1], low:high].T
                present = (forward > 0) | (backward > 0)
            pairs += int(present.sum())
            if block != "notoccur":
                ratios.append(forward[present] / (forward[present] + backward[present]))
        if not pairs:
            return 0.0
        total = np.concatenate(ratios) if ratios else np.zeros(0)
        return (float(np.cumsum(total)[-1]) if total.size else 0.0) / pairs

    def _prefs_pair(self):
        return self._pair(("ret", "imp", "notoccur"))

    def _prefs_pair_ret(self):
        return self._pair(("ret",))

    def _prefs_pair_imp(self):
        return self._pair(("ret", "imp"))

    def _prefs_avgjg_Rnonrel(self):
        return self._rnonrel(retrieved_only=False)

    def _prefs_avgjg_Rnonrel_ret(self):
        return self._rnonrel(retrieved_only=True)

    def _rnonrel(self, *, retrieved_only: bool) -> float:
        total = 0.0
        for group, counts in zip(self.groups, self.jg_counts, strict=True):
            k = group.retrieved
            relevant = group.level > 0
            nonrel = group.level <= 0 if group.ec is not None else group.level == 0
            num_rel, num_rel_ret = int(relevant.sum()), int(relevant[:k].sum())
            if retrieved_only:
                big_r, big_n = num_rel_ret, int(nonrel[:k].sum())
            else:
                big_r, big_n = num_rel, int(nonrel.sum())
            if big_r >= big_n:
                if retrieved_only:
                    ful = int(counts["ful_ret"])
                    poss = int(counts["poss_ret"])
                else:
                    ful = int(counts["ful_ret"] + counts["ful_imp"])
                    poss = int(counts["poss_ret"] + counts["poss_imp"] + counts["notoccur"])
                ful += num_rel_ret * (big_r - big_n)
                poss += num_rel * (big_r - big_n)
            elif group.ec is not None:
                ful, poss = _recount_classes(group, num_rel, num_rel_ret, retrieved_only)
            else:
                ful, poss = _recount_subgroups(group, num_rel, retrieved_only)
            total += _ratio(ful, poss)
        # A NaN sum (a 0/0 ratio) is not > 0, so the topic scores 0, as in trec_eval.
        return total / len(self.groups) if total > 0.0 else 0.0
