"""Real rankers over a collection's passages, each giving a TREC run of every topic.

Seven systems, six of them BM25 as the bm25s library computes it (its "lucene" variant) and
one outside engine:

- ``bm25-body``: BM25 (k1 1.5, b 0.75: bm25s' defaults) on the passage text alone;
- ``bm25-title-body``: the same on title and text;
- ``bm25-body-k0.9-b0.4``: BM25 on the text with Anserini's MS MARCO parameters;
- ``bm25-stem``: title and text with the Snowball English stemmer (PyStemmer);
- ``bm25-stem-rm3``: bm25-stem with RM3 pseudo-relevance feedback (see ``_rm3``);
- ``rrf-body-stem``: reciprocal rank fusion (k 60) of bm25-body and bm25-stem;
- ``sqlite-fts5``: SQLite's FTS5 full-text index and its bm25() (the standard library's
  sqlite3; title and text columns, unicode61 tokens, any query word may match).

All tokenise alike (bm25s' word pattern, lower case, English stop words removed). A run holds
for every topic the passages with a positive score, at most DEPTH, best first; equal scores
(after rounding to the 6 decimals written) are ordered as trec_eval orders them, by docno
from last to first, so the rank field agrees with every evaluator. The same passages and topics
always give the same bytes.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from .passages import Passage
from .topics import Topic

__all__ = ["DEPTH", "DESCRIPTIONS", "RANKERS", "run_rankers", "run_text"]

DEPTH = 100
RRF_K = 60
# RM3: feedback from the FEEDBACK_DOCS best passages, the FEEDBACK_TERMS heaviest terms, the
# original query keeping weight ORIGINAL_WEIGHT (Anserini's defaults: 10, 10, 0.5).
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 10
ORIGINAL_WEIGHT = 0.5

# name -> what it is, in a sentence (the demo's systems carry it as their description)
DESCRIPTIONS = {
    "bm25-body": "BM25 (bm25s, k1 1.5, b 0.75) on the passage text alone.",
    "bm25-title-body": "BM25 (bm25s, k1 1.5, b 0.75) on title and text.",
    "bm25-body-k0.9-b0.4": "BM25 (bm25s) on the text with Anserini's MS MARCO parameters "
    "(k1 0.9, b 0.4).",
    "bm25-stem": "BM25 (bm25s) on title and text, Snowball English stemmer (PyStemmer).",
    "bm25-stem-rm3": "bm25-stem with RM3 pseudo-relevance feedback (10 passages, 10 terms, "
    "original query weight 0.5).",
    "rrf-body-stem": "Reciprocal rank fusion (k 60) of bm25-body and bm25-stem.",
    "sqlite-fts5": "SQLite's FTS5 full-text index and its bm25() on title and text.",
}
RANKERS = tuple(DESCRIPTIONS)

Ranking = dict[str, dict[str, float]]  # qid -> docno -> score


def run_rankers(
    passages: Sequence[Passage], topics: Sequence[Topic], names: Sequence[str] = RANKERS
) -> dict[str, str]:
    """name -> TREC run text, for each ranker of ``names`` (in RANKERS' order)."""
    unknown = [name for name in names if name not in RANKERS]
    if unknown:
        raise ValueError(f"unknown ranker {unknown[0]!r} (expected one of {', '.join(RANKERS)})")
    docnos = [p.docno for p in passages]
    body = [p.text for p in passages]
    both = [f"{p.title}\n{p.text}" for p in passages]
    queries = {topic.qid: topic.query for topic in topics}
    made: dict[str, Ranking] = {}

    def ranking(name: str) -> Ranking:
        if name not in made:
            made[name] = _RANKINGS[name](docnos, body, both, queries, ranking)
        return made[name]

    return {name: run_text(ranking(name), name) for name in RANKERS if name in names}


def run_text(ranking: Ranking, tag: str, depth: int = DEPTH) -> str:
    """``qid Q0 docno rank score tag`` lines, topics in qid order (see the module)."""
    lines = []
    for qid in sorted(ranking):
        scored = [(round(score, 6), docno) for docno, score in ranking[qid].items() if score > 0]
        scored.sort(key=lambda pair: (pair[0], pair[1]), reverse=True)
        for rank, (score, docno) in enumerate(scored[:depth], start=1):
            lines.append(f"{qid} Q0 {docno} {rank} {score:.6f} {tag}\n")
    return "".join(lines)


# --- BM25 with bm25s --------------------------------------------------------------------------


class _Index:
    def __init__(self, texts: list[str], *, k1=1.5, b=0.75, stem=False):
        import bm25s

        # bm25s logs each index it builds at DEBUG, which a command's output would show.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.stemmer = None
        if stem:
            import Stemmer

            self.stemmer = Stemmer.Stemmer("english")
        self.bm25s = bm25s
        tokens = self.tokens(texts)
        self.retriever = bm25s.BM25(k1=k1, b=b)
        self.retriever.index(tokens, show_progress=False)
        self.docs = tokens  # kept for RM3's term counts

    def tokens(self, texts: list[str]) -> list[list[str]]:
        return self.bm25s.tokenize(
            texts,
            stopwords="en",
            stemmer=self.stemmer,
            return_ids=False,
            show_progress=False,
        )

    def scores(self, terms: dict[str, float]) -> np.ndarray:
        """Each passage's score for weighted query terms (sum of weight x term score)."""
        vocab = self.retriever.vocab_dict
        total = np.zeros(self.retriever.scores["num_docs"], dtype=np.float64)
        for term, weight in terms.items():
            if term in vocab:
                total += weight * self.retriever.get_scores([term])
        return total


def _rank(index: _Index, docnos, queries) -> Ranking:
    ranking = {}
    for qid, query in queries.items():
        terms = Counter(index.tokens([query])[0])
        ranking[qid] = _top(docnos, index.scores(terms))
    return ranking


def _top(docnos: list[str], scores: np.ndarray, depth: int = DEPTH) -> dict[str, float]:
    """The best ``depth`` positive scores (a few more where scores tie at the cut: run_text
    orders and cuts them)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > depth:
        cut = np.partition(scores[positive], -depth)[-depth]
        positive = positive[scores[positive] >= cut]
    return {docnos[i]: float(scores[i]) for i in positive}


def _bm25_body(docnos, body, both, queries, _):
    return _rank(_Index(body), docnos, queries)


def _bm25_title_body(docnos, body, both, queries, _):
    return _rank(_Index(both), docnos, queries)


def _bm25_body_anserini(docnos, body, both, queries, _):
    return _rank(_Index(body, k1=0.9, b=0.4), docnos, queries)


def _bm25_stem(docnos, body, both, queries, _):
    return _rank(_Index(both, stem=True), docnos, queries)


def _bm25_stem_rm3(docnos, body, both, queries, _):
    return _rm3(_Index(both, stem=True), docnos, queries)


def _rm3(index: _Index, docnos, queries) -> Ranking:
    """RM3 (Lavrenko and Croft's relevance model, mixed with the query as in Anserini):

    1. score every passage for the query (BM25);
    2. from the FEEDBACK_DOCS best, weigh each term w by sum over those passages d of
       P(w|d) x P(d|q), with P(w|d) = tf(w, d) / |d| and P(d|q) = the passage's score over the
       sum of the feedback passages' scores;
    3. keep the FEEDBACK_TERMS heaviest terms, normalised to sum 1, and mix them with the
       query's own terms (each 1/|q|): ORIGINAL_WEIGHT x query + (1 - ORIGINAL_WEIGHT) x
       feedback;
    4. score every passage again with the mixed, weighted query.
    """
    ranking = {}
    for qid, query in queries.items():
        query_terms = index.tokens([query])[0]
        if not query_terms:
            ranking[qid] = {}
            continue
        first = index.scores(Counter(query_terms))
        order = sorted(np.flatnonzero(first > 0), key=lambda i: (-first[i], docnos[i]))
        feedback = order[:FEEDBACK_DOCS]
        total = float(sum(first[i] for i in feedback))
        weights: Counter[str] = Counter()
        for i in feedback:
            counts, length = Counter(index.docs[i]), len(index.docs[i])
            for term, tf in counts.items():
                weights[term] += (tf / length) * (first[i] / total)
        best = sorted(weights.items(), key=lambda item: (-item[1], item[0]))[:FEEDBACK_TERMS]
        norm = sum(weight for _, weight in best) or 1.0
        mixed: Counter[str] = Counter()
        for term in query_terms:
            mixed[term] += ORIGINAL_WEIGHT / len(query_terms)
        for term, weight in best:
            mixed[term] += (1 - ORIGINAL_WEIGHT) * weight / norm
        ranking[qid] = _top(docnos, index.scores(mixed))
    return ranking


def _rrf(docnos, body, both, queries, ranking: Callable[[str], Ranking]) -> Ranking:
    """Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): sum of 1 / (RRF_K + rank)
    over bm25-body's and bm25-stem's rankings (ranks as their runs order them)."""
    fused: Ranking = {}
    for name in ("bm25-body", "bm25-stem"):
        for qid, scores in ranking(name).items():
            for rank, (docno, _) in enumerate(_trec_order(scores)[:DEPTH], start=1):
                fused.setdefault(qid, {}).setdefault(docno, 0.0)
                fused[qid][docno] += 1 / (RRF_K + rank)
    for qid in queries:
        fused.setdefault(qid, {})
    return fused


def _trec_order(scores: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(
        ((docno, score) for docno, score in scores.items() if score > 0),
        key=lambda item: (round(item[1], 6), item[0]),
        reverse=True,
    )


# --- SQLite FTS5 ------------------------------------------------------------------------------

_WORD = re.compile(r"(?u)\b\w\w+\b")


def _fts5(docnos, body, both, queries, _) -> Ranking:
    import bm25s.stopwords

    stop = set(bm25s.stopwords.STOPWORDS_EN)
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE passage USING fts5(title, body)")
        connection.executemany(
            "INSERT INTO passage (rowid, title, body) VALUES (?, ?, ?)",
            [
                (i, text.split("\n", 1)[0], b)
                for i, (text, b) in enumerate(zip(both, body, strict=True))
            ],
        )
        ranking = {}
        for qid, query in queries.items():
            words = sorted({w for w in _WORD.findall(query.lower()) if w not in stop})
            if not words:
                ranking[qid] = {}
                continue
            match = " OR ".join(f'"{w}"' for w in words)
            rows = connection.execute(
                "SELECT rowid, bm25(passage) FROM passage WHERE passage MATCH ? "
                "ORDER BY bm25(passage) LIMIT ?",
                (match, DEPTH * 2),
            ).fetchall()
            # bm25() is lower for better matches: its negation is the score.
            ranking[qid] = {docnos[row]: -score for row, score in rows if -score > 0}
        return ranking
    finally:
        connection.close()


_RANKINGS = {
    "bm25-body": _bm25_body,
    "bm25-title-body": _bm25_title_body,
    "bm25-body-k0.9-b0.4": _bm25_body_anserini,
    "bm25-stem": _bm25_stem,
    "bm25-stem-rm3": _bm25_stem_rm3,
    "rrf-body-stem": _rrf,
    "sqlite-fts5": _fts5,
}
assert set(_RANKINGS) == set(RANKERS)
