"""trec_eval's `-J` (judged documents only), as form_res_rels.c applies it. Pure.

After the ranking is cut at `-M`, every document that is not judged with a grade >= 0 is
dropped (unjudged ones and those judged with a negative grade, "in the pool but not
judged"), and the remaining ones are ranked 1, 2, ... in their order; num_ret becomes their
count. Every measure computed from the ranking then sees only judged documents, which
trec_eval's help calls easy to misread: a run scored with -J is not comparable to one
scored without.
"""

import numpy as np

from .ranking import JudgedRanking

__all__ = ["keep_judged_only"]


def keep_judged_only(ranking: JudgedRanking) -> JudgedRanking:
    """The ranking of the judged documents alone, re-ranked from 1 within each topic."""
    kept = ranking.grade >= 0
    topic, grade = ranking.topic[kept], ranking.grade[kept]
    num_ret = np.bincount(topic, minlength=ranking.num_ret.size).astype(ranking.num_ret.dtype)
    start = np.cumsum(num_ret) - num_ret
    rank = np.arange(topic.size, dtype=ranking.rank.dtype) - start[topic] + 1
    return JudgedRanking(num_ret, topic, rank, grade)
