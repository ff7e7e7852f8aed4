"""The worked nDCG examples of the seed notes (/work/shared/seeds/*.txt), checked three ways.

Every example is scored by the formula written out term by term, by pytrec_eval (trec_eval
9.0.8 inside) and by our `evaluate`; all three must agree to 1e-12. Separately, every number a
note states is compared with the formula: right ones must lie within the note's rounding, and
the ones the notes get wrong are pinned as wrong, with the true value beside them.

trec_eval's nDCG, which the formulas below follow:
    DCG@k  = sum over ranks i = 1..k of gain(rel_i) / log2(i + 1)   (rank 1 is divided by
             log2(2) = 1, so it is undiscounted without a special case)
    IDCG@k = the same over the grades of ALL judged documents of the topic, retrieved or not,
             sorted descending
    nDCG@k = DCG@k / IDCG@k
with gain(g) = g (linear, trec_eval's default) or 2^g - 1 (exponential, Options(gain="exp")).
Every note uses the log2(i + 1) discount for every rank, so no discount variant needed
reconciling. Note 001 mentions a "traditional" 1/log2(position) discount in prose only (and
wrongly says it is infinite at position 1: that variant leaves rank 1 undiscounted); none of
its numbers use it.

Each example's qrels hold exactly the documents its ideal ranking uses, so trec_eval's ideal
(all judged documents) is the note's ideal; the run gives them distinct descending scores in
the note's order, so the ranking is unambiguous.

Left out: note 001's Cumulative Gain (3 + 2 + 0 + 1 + 2 = 8, right) because neither trec_eval
nor our app has a CG measure, so there is nothing to check it against.
"""

import math
from dataclasses import dataclass
from math import log2

import polars as pl
import pytest
import pytrec_eval

from evaluation.measures import Options, evaluate


@dataclass(frozen=True)
class SeedExample:
    """One worked example: the note's ranked list, its cutoff, its gain and the formula's value.

    `ranking` is (docno, grade) in the order the note's system returns them; `unretrieved` are
    judged documents the run does not return but the note's ideal ranking uses.
    """

    ranking: tuple[tuple[str, int], ...]
    k: int
    gain: str
    expected: float
    unretrieved: tuple[tuple[str, int], ...] = ()
    qid: str = "1"

    @property
    def measure(self) -> str:
        return f"ndcg_cut.{self.k}"

    @property
    def column(self) -> str:
        return f"ndcg_cut_{self.k}"

    def qrels(self) -> dict[str, dict[str, int]]:
        return {self.qid: dict(self.ranking + self.unretrieved)}

    def run(self) -> dict[str, dict[str, float]]:
        n = len(self.ranking)
        return {self.qid: {docno: float(n - i) for i, (docno, _) in enumerate(self.ranking)}}


def exp_gain(grade: int) -> int:
    return 2**grade - 1


# Note 000 (chunks C A E B D, grades 0-3, linear gain). Ideal [A, B, D, C, E] = [3, 2, 2, 1, 0].
NOTE000_DCG = 1 / log2(2) + 3 / log2(3) + 0 / log2(4) + 2 / log2(5) + 2 / log2(6)
NOTE000_IDCG = 3 / log2(2) + 2 / log2(3) + 2 / log2(4) + 1 / log2(5) + 0 / log2(6)

# Note 001 (list [3, 2, 0, 1, 2], linear gain). Ideal [3, 2, 2, 1, 0].
NOTE001_DCG = 3 / log2(2) + 2 / log2(3) + 0 / log2(4) + 1 / log2(5) + 2 / log2(6)
NOTE001_IDCG = 3 / log2(2) + 2 / log2(3) + 2 / log2(4) + 1 / log2(5) + 0 / log2(6)

# Note 002 (nDCG@10, exponential gain 2^rel - 1, top 10 grades [3, 2, 3, 0, 1, 2, 0, 1, 0, 2]).
# The note stops after four DCG terms and eight IDCG terms and never states nDCG@10.
# Its ideal table [3, 3, 3, 2, 2, 2, 1, 1, 0, 0] has three 3s although the listed top 10 has
# two, and its prose says the ideal is the listed grades sorted ([3, 3, 2, 2, 2, 1, 1, 0, 0, 0]).
# A careful reader can take either: the prose (qrels = the ten listed documents) or the table,
# which is exactly trec_eval's ideal when the topic has one more grade-3 document that the run
# does not retrieve (ten listed + that one sorted, cut at 10). Both are tested.
NOTE002_DCG = (
    (2**3 - 1) / log2(2)
    + (2**2 - 1) / log2(3)
    + (2**3 - 1) / log2(4)
    + (2**0 - 1) / log2(5)
    + (2**1 - 1) / log2(6)
    + (2**2 - 1) / log2(7)
    + (2**0 - 1) / log2(8)
    + (2**1 - 1) / log2(9)
    + (2**0 - 1) / log2(10)
    + (2**2 - 1) / log2(11)
)
NOTE002_IDCG_LISTED_SORTED = (
    (2**3 - 1) / log2(2)
    + (2**3 - 1) / log2(3)
    + (2**2 - 1) / log2(4)
    + (2**2 - 1) / log2(5)
    + (2**2 - 1) / log2(6)
    + (2**1 - 1) / log2(7)
    + (2**1 - 1) / log2(8)
    + (2**0 - 1) / log2(9)
    + (2**0 - 1) / log2(10)
    + (2**0 - 1) / log2(11)
)
NOTE002_IDCG_AS_TABLED = (
    (2**3 - 1) / log2(2)
    + (2**3 - 1) / log2(3)
    + (2**3 - 1) / log2(4)
    + (2**2 - 1) / log2(5)
    + (2**2 - 1) / log2(6)
    + (2**2 - 1) / log2(7)
    + (2**1 - 1) / log2(8)
    + (2**1 - 1) / log2(9)
    + (2**0 - 1) / log2(10)
    + (2**0 - 1) / log2(11)
)

# Note 003 (documents 1-5 with grades [3, 2, 3, 0, 1], linear gain). Ideal [3, 3, 2, 1, 0].
NOTE003_DCG = 3 / log2(2) + 2 / log2(3) + 3 / log2(4) + 0 / log2(5) + 1 / log2(6)
NOTE003_IDCG = 3 / log2(2) + 3 / log2(3) + 2 / log2(4) + 1 / log2(5) + 0 / log2(6)

# Note 004 (pizza recipes graded 0-5, linear gain). Its prose takes the ideal from the retrieved
# documents only; trec_eval takes all judged ones. In the pizza examples every judged document
# is retrieved, so the two agree. Ideal [4, 3, 2, 1, 1] for both orderings.
NOTE004_IDCG = 4 / log2(2) + 3 / log2(3) + 2 / log2(4) + 1 / log2(5) + 1 / log2(6)
NOTE004_DCG_IDEAL_ORDER = 4 / log2(2) + 3 / log2(3) + 2 / log2(4) + 1 / log2(5) + 1 / log2(6)
NOTE004_DCG_DOUGH_FIRST = 2 / log2(2) + 4 / log2(3) + 1 / log2(4) + 3 / log2(5) + 1 / log2(6)
# Its FAQ example states no value: ranks 1-3 retrieve grades [4, 2, 5] and the ideal "of all
# available documents" is [5, 4, 3], so the topic has a judged grade-3 document the run misses.
NOTE004_FAQ_DCG = 4 / log2(2) + 2 / log2(3) + 5 / log2(4)
NOTE004_FAQ_IDCG = 5 / log2(2) + 4 / log2(3) + 3 / log2(4)

PIZZA = {"margherita": 4, "deep-dish": 3, "dough": 2, "vegan": 1, "sauce": 1}

EXAMPLES = [
    pytest.param(
        SeedExample(
            ranking=(("C", 1), ("A", 3), ("E", 0), ("B", 2), ("D", 2)),
            k=5,
            gain="linear",
            # The note says 0.794: it divides its rounded DCG 4.52 by 5.69. The formula gives
            # 4.5278... / 5.6925... = 0.7954...
            expected=NOTE000_DCG / NOTE000_IDCG,
        ),
        id="note000-ndcg5-linear",
    ),
    pytest.param(
        SeedExample(
            ranking=(("d1", 3), ("d2", 2), ("d3", 0), ("d4", 1), ("d5", 2)),
            k=5,
            gain="linear",
            # The note says 5.46 / 6.39 = 0.85. Its DCG is truncated (5.4662...), and its IDCG
            # fits neither linear nor exponential gain: [3, 2, 2, 1, 0] gives 5.6925..., so
            # nDCG@5 = 0.9602...
            expected=NOTE001_DCG / NOTE001_IDCG,
        ),
        id="note001-ndcg5-linear",
    ),
    pytest.param(
        SeedExample(
            ranking=tuple((f"r{i}", g) for i, g in enumerate([3, 2, 3, 0, 1, 2, 0, 1, 0, 2], 1)),
            k=10,
            gain="exp",
            expected=NOTE002_DCG / NOTE002_IDCG_LISTED_SORTED,
        ),
        id="note002-ndcg10-exp-ideal-from-listed-grades",
    ),
    pytest.param(
        SeedExample(
            ranking=tuple((f"r{i}", g) for i, g in enumerate([3, 2, 3, 0, 1, 2, 0, 1, 0, 2], 1)),
            unretrieved=(("unretrieved", 3),),
            k=10,
            gain="exp",
            expected=NOTE002_DCG / NOTE002_IDCG_AS_TABLED,
        ),
        id="note002-ndcg10-exp-ideal-from-note-table",
    ),
    pytest.param(
        SeedExample(
            ranking=(("doc1", 3), ("doc2", 2), ("doc3", 3), ("doc4", 0), ("doc5", 1)),
            k=5,
            gain="linear",
            expected=NOTE003_DCG / NOTE003_IDCG,
        ),
        id="note003-ndcg5-linear",
    ),
    pytest.param(
        SeedExample(
            ranking=tuple(
                (d, PIZZA[d]) for d in ["margherita", "deep-dish", "dough", "vegan", "sauce"]
            ),
            k=5,
            gain="linear",
            expected=NOTE004_DCG_IDEAL_ORDER / NOTE004_IDCG,
        ),
        id="note004-ndcg5-linear-ideal-order",
    ),
    pytest.param(
        SeedExample(
            ranking=tuple(
                (d, PIZZA[d]) for d in ["dough", "margherita", "sauce", "deep-dish", "vegan"]
            ),
            k=5,
            gain="linear",
            expected=NOTE004_DCG_DOUGH_FIRST / NOTE004_IDCG,
        ),
        id="note004-ndcg5-linear-dough-first",
    ),
    pytest.param(
        SeedExample(
            ranking=(("a", 4), ("b", 2), ("c", 5)),
            unretrieved=(("d", 3),),
            k=3,
            gain="linear",
            expected=NOTE004_FAQ_DCG / NOTE004_FAQ_IDCG,
        ),
        id="note004-ndcg3-linear-faq-unretrieved-grade3",
    ),
]


def half_unit(places: int) -> float:
    """The largest error a value printed with `places` decimals can carry from rounding."""
    return 0.5 * 10**-places


EXACT = 1e-12

# (true value by the formula, the note's number, the note's rounding error bound)
STATED_RIGHT = [
    pytest.param(NOTE000_IDCG, 5.69, half_unit(2), id="note000-idcg5"),
    pytest.param((2**3 - 1) / log2(2), 7, EXACT, id="note002-dcg-term-rank1"),
    pytest.param((2**2 - 1) / log2(3), 1.89, half_unit(2), id="note002-dcg-term-rank2"),
    pytest.param((2**3 - 1) / log2(4), 3.5, EXACT, id="note002-dcg-term-rank3"),
    pytest.param((2**0 - 1) / log2(5), 0, EXACT, id="note002-dcg-term-rank4"),
    # The IDCG terms are compared with the note's own ideal table [3, 3, 3, 2, 2, 2, 1, 1, ...].
    pytest.param((2**3 - 1) / log2(2), 7, EXACT, id="note002-idcg-term-rank1"),
    pytest.param((2**3 - 1) / log2(4), 3.5, EXACT, id="note002-idcg-term-rank3"),
    pytest.param((2**2 - 1) / log2(7), 1.07, half_unit(2), id="note002-idcg-term-rank6"),
    # The note's code prints these; its hand calculation is off (see STATED_WRONG).
    pytest.param(NOTE003_DCG, 6.149, half_unit(3), id="note003-dcg5-printed"),
    pytest.param(NOTE003_IDCG, 6.323, half_unit(3), id="note003-idcg5-printed"),
    pytest.param(NOTE003_DCG / NOTE003_IDCG, 0.972, half_unit(3), id="note003-ndcg5"),
    pytest.param(NOTE004_DCG_IDEAL_ORDER, 7.71, half_unit(2), id="note004-dcg5-ideal-order"),
    pytest.param(NOTE004_IDCG, 7.71, half_unit(2), id="note004-idcg5"),
    pytest.param(
        NOTE004_DCG_IDEAL_ORDER / NOTE004_IDCG, 1.00, half_unit(2), id="note004-ndcg5-ideal-order"
    ),
    # Right despite the slipped DCG below: 6.7026... / 7.7103... = 0.8693..., which is 0.87.
    pytest.param(
        NOTE004_DCG_DOUGH_FIRST / NOTE004_IDCG, 0.87, half_unit(2), id="note004-ndcg5-dough-first"
    ),
]

STATED_WRONG = [
    # Each term is right to 2 decimals, but their rounding adds up: 4.5278... is 4.53.
    pytest.param(NOTE000_DCG, 4.52, half_unit(2), id="note000-dcg5"),
    # 4.52 / 5.69 = 0.7944; the formula gives 0.7954...
    pytest.param(NOTE000_DCG / NOTE000_IDCG, 0.794, half_unit(3), id="note000-ndcg5"),
    # Truncated, not rounded: 5.4662... is 5.47.
    pytest.param(NOTE001_DCG, 5.46, half_unit(2), id="note001-dcg5"),
    # Ideal [3, 2, 2, 1, 0] gives 5.6925...; 6.39 fits no gain or discount the note mentions.
    pytest.param(NOTE001_IDCG, 6.39, half_unit(2), id="note001-idcg5"),
    # Follows from the wrong IDCG: the formula gives 0.9602...
    pytest.param(NOTE001_DCG / NOTE001_IDCG, 0.85, half_unit(2), id="note001-ndcg5"),
    # The note writes 3.5 (7 / log2(4), the rank-3 term); 7 / log2(3) = 4.4165...
    pytest.param((2**3 - 1) / log2(3), 3.5, half_unit(1), id="note002-idcg-term-rank2"),
    # The note writes 1.89 (3 / log2(3)); 3 / log2(5) = 1.2920...
    pytest.param((2**2 - 1) / log2(5), 1.89, half_unit(2), id="note002-idcg-term-rank4"),
    # The note writes 1.07 (3 / log2(7)); 3 / log2(6) = 1.1605...
    pytest.param((2**2 - 1) / log2(6), 1.07, half_unit(2), id="note002-idcg-term-rank5"),
    # The note writes 0.387 (1 / log2(6)); 1 / log2(8) = 1/3.
    pytest.param((2**1 - 1) / log2(8), 0.387, half_unit(3), id="note002-idcg-term-rank7"),
    # The note writes 0.316; 1 / log2(9) = 0.31546..., which is 0.315.
    pytest.param((2**1 - 1) / log2(9), 0.316, half_unit(3), id="note002-idcg-term-rank8"),
    # The note writes 2 / 1.585 = 1.263; it is 1.2618... (1.262).
    pytest.param(2 / log2(3), 1.263, half_unit(3), id="note003-dcg-term-rank2"),
    # The slipped term above carries into the hand total: 6.1487... is 6.149 (as its code prints).
    pytest.param(NOTE003_DCG, 6.150, half_unit(3), id="note003-dcg5-by-hand"),
    # The note writes 3 / 1.585 = 1.894; it is 1.8927... (1.893).
    pytest.param(3 / log2(3), 1.894, half_unit(3), id="note003-idcg-term-rank2"),
    # Carries the slip above: 6.3234... is 6.323 (as its code prints).
    pytest.param(NOTE003_IDCG, 6.325, half_unit(3), id="note003-idcg5-by-hand"),
    # The note divides by log2(3) rounded to 1.58: 4 / 1.58 = 2.53, but 4 / log2(3) = 2.5237...
    pytest.param(4 / log2(3), 2.53, half_unit(2), id="note004-dcg-term-rank2-dough-first"),
    # Carries the slip above: 6.7026... is 6.70.
    pytest.param(NOTE004_DCG_DOUGH_FIRST, 6.71, half_unit(2), id="note004-dcg5-dough-first"),
]


@pytest.mark.parametrize(("true_value", "stated", "rounding"), STATED_RIGHT)
def test_note_value_is_the_formula_value_within_the_notes_rounding(true_value, stated, rounding):
    assert abs(true_value - stated) <= rounding + EXACT, (
        f"the note states {stated}, the formula gives {true_value!r}: more than {rounding} apart,"
        " so either the formula above was mistyped or the value belongs in STATED_WRONG"
    )


@pytest.mark.parametrize(("true_value", "stated", "rounding"), STATED_WRONG)
def test_note_value_marked_wrong_is_off_by_more_than_rounding(true_value, stated, rounding):
    assert abs(true_value - stated) > rounding + EXACT, (
        f"the note states {stated} and the formula gives {true_value!r}, which agree within"
        f" {rounding}: move this value to STATED_RIGHT"
    )


@pytest.mark.parametrize("example", EXAMPLES)
def test_pytrec_eval_matches_formula_on_seed_example(example):
    qrels = example.qrels()
    if example.gain == "exp":
        # pytrec_eval uses the grade itself as the gain; grades 2^g - 1 give exponential gain.
        qrels = {qid: {d: exp_gain(g) for d, g in docs.items()} for qid, docs in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {example.measure})
    got = evaluator.evaluate(example.run())[example.qid][example.column]
    assert math.isclose(got, example.expected, rel_tol=0, abs_tol=1e-12), (
        f"pytrec_eval gives {example.column} = {got!r}, the formula {example.expected!r}:"
        " the example's qrels or run do not reproduce the note's ranking and ideal"
    )


@pytest.mark.parametrize("example", EXAMPLES)
def test_evaluate_matches_formula_on_seed_example(example):
    qrels = example.qrels()[example.qid]
    run = example.run()[example.qid]
    qrels_df = pl.DataFrame(
        {"qid": [example.qid] * len(qrels), "docno": list(qrels), "grade": list(qrels.values())},
        schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64},
    )
    run_df = pl.DataFrame(
        {"qid": [example.qid] * len(run), "docno": list(run), "score": list(run.values())},
        schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64},
    )

    result = evaluate(qrels_df, run_df, [example.measure], Options(gain=example.gain))

    rows = result.per_topic.filter(pl.col("qid") == example.qid)
    assert rows.height == 1, f"expected one per-topic row for qid {example.qid}, got {rows}"
    got = rows[example.column].item()
    assert math.isclose(got, example.expected, rel_tol=0, abs_tol=1e-12), (
        f"evaluate gives {example.column} = {got!r} with gain={example.gain!r}, the formula"
        f" {example.expected!r}"
    )
