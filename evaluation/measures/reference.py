"""Every measure as people look it up (pure): its names in both dialects, its parameters and
defaults, its formula, and how ties, unjudged documents and -c affect it. What the measures
page and `evaluate --list-measures` show; the formulas are those scoring.py and cascade.py
compute (their docstrings give the same)."""

from __future__ import annotations

from dataclasses import dataclass

from . import catalog
from .dialects import FAMILIES, RBP_P

__all__ = ["MEASURES", "MeasureDoc", "available", "format_text"]

TIES = (
    "trec_eval's order: score descending, then docno descending (byte order); 9.0.8 compares "
    "scores rounded to float32, 10.0 the doubles"
)
DOUBLES_ASCENDING = (
    "score descending (compared as doubles), then docno ascending (byte order), as "
    "ir_measures' {provider} provider orders them, whatever the trec_eval version"
)
UNJUDGED_NOT_RELEVANT = "not relevant (gain 0), but each takes a rank"
MISSING_ZERO = "a topic judged but absent from the run scores 0 and counts in the mean"
RANK_CUTOFFS = "k: rank cutoff (trec_eval's default list: 5, 10, 15, 20, 30, 100, 200, 500, 1000)"
REL = "rel=N: relevant from grade N (default: the request's -l, 1)"
JUDGED_ONLY = "judged_only=True: unjudged documents are removed before ranking (trec_eval -J)"


@dataclass(frozen=True)
class MeasureDoc:
    ir: str  # ir_measures name, e.g. nDCG@k
    trec: str  # trec_eval -m name, e.g. ndcg_cut.k ("" when trec_eval has none)
    title: str
    parameters: str
    formula: str
    ties: str = TIES
    unjudged: str = UNJUDGED_NOT_RELEVANT
    complete: str = MISSING_ZERO
    family: str = ""  # the ir_measures family, to tell which exist here
    mean: bool = True  # its "all" value is the mean over topics (dashboards offer it)

    @property
    def trec_family(self) -> str:
        return self.trec.partition(".")[0]


MEASURES: tuple[MeasureDoc, ...] = (
    MeasureDoc(
        "nDCG@k",
        "ndcg_cut.k",
        "normalised discounted cumulative gain at k",
        f"{RANK_CUTOFFS}; gains={{grade:gain,..}}: gain per grade; {JUDGED_ONLY}; "
        "--gain exp: 2^grade − 1",
        "DCG@k / IDCG@k; DCG@k = Σ_{i≤k} gain(grade(i)) / log2(i + 1); IDCG@k: the same over "
        "the topic's judged grades ≥ 1 sorted descending, retrieved or not; 0 when IDCG is 0; "
        "-l does not apply",
        family="nDCG",
    ),
    MeasureDoc(
        "nDCG",
        "ndcg",
        "normalised discounted cumulative gain, whole ranking",
        f"gains={{..}}; {JUDGED_ONLY}",
        "DCG / IDCG over every retrieved document and every judged grade ≥ 1",
        family="nDCG",
    ),
    MeasureDoc(
        "P@k",
        "P.k",
        "precision at k",
        f"{RANK_CUTOFFS}; {REL}; {JUDGED_ONLY}",
        "|{i ≤ k : rel(i)}| / k (k even when fewer documents are retrieved)",
        family="P",
    ),
    MeasureDoc(
        "R@k",
        "recall.k",
        "recall at k",
        f"{RANK_CUTOFFS}; {REL}; {JUDGED_ONLY}",
        "|{i ≤ k : rel(i)}| / R, R the topic's relevant documents; 0 when R = 0",
        family="R",
    ),
    MeasureDoc(
        "AP",
        "map",
        "average precision (MAP over topics)",
        f"{REL}; {JUDGED_ONLY}",
        "Σ over relevant retrieved i of prec(i) / R, prec(i) = |{j ≤ i : rel(j)}| / i",
        family="AP",
    ),
    MeasureDoc(
        "AP@k",
        "map_cut.k",
        "average precision at k",
        f"{RANK_CUTOFFS}; {REL}; {JUDGED_ONLY}",
        "Σ over relevant i ≤ k of prec(i) / R",
        family="AP",
    ),
    MeasureDoc(
        "RR",
        "recip_rank",
        "reciprocal rank (MRR over topics)",
        f"{REL}; {JUDGED_ONLY}",
        "1 / the rank of the first relevant document; 0 if none is retrieved",
        family="RR",
    ),
    MeasureDoc(
        "RR@k",
        "",
        "reciprocal rank at k (MS MARCO's MRR@10)",
        f"k: rank cutoff; {REL}; {JUDGED_ONLY}",
        "1 / the first relevant rank i ≤ k; 0 if none",
        DOUBLES_ASCENDING.format(provider="msmarco"),
        family="RR",
    ),
    MeasureDoc(
        "Rprec",
        "Rprec",
        "R-precision",
        f"{REL}; {JUDGED_ONLY}",
        "|{i ≤ R : rel(i)}| / R",
        family="Rprec",
    ),
    MeasureDoc(
        "Bpref",
        "bpref",
        "binary preference",
        REL,
        "(1/R) Σ over relevant retrieved i of (1 − min(n(i), R) / min(N, R)), n(i): judged "
        "non-relevant documents above i, N: the topic's judged non-relevant documents",
        unjudged="ignored: only judged documents count in n(i)",
        family="Bpref",
    ),
    MeasureDoc(
        "infAP",
        "infAP",
        "inferred average precision (sampled judgments)",
        REL,
        "trec_eval's infAP: expected precision at each relevant document, estimated from the "
        "judged documents above it",
        unjudged="estimated from the judged documents (the unjudged are the unsampled)",
        family="infAP",
    ),
    MeasureDoc(
        "Success@k",
        "success.k",
        "success at k",
        f"k (trec_eval's default 1, 5, 10); {REL}; {JUDGED_ONLY}",
        "1 if a relevant document is ranked ≤ k, else 0",
        family="Success",
    ),
    MeasureDoc(
        "IPrec@r",
        "iprec_at_recall.r",
        "interpolated precision at recall r",
        f"r in [0, 1] (trec_eval's default 0.0, 0.1, …, 1.0); {JUDGED_ONLY}",
        "max prec(i) over relevant i at or after the m-th relevant one, m = (long)(r·R + 0.9) "
        "in 9.0.8, lround(r·R) in 10.0",
        family="IPrec",
    ),
    MeasureDoc(
        "SetP",
        "set_P",
        "precision of the whole retrieved set",
        f"{REL}; {JUDGED_ONLY}",
        "relevant retrieved / retrieved",
        family="SetP",
    ),
    MeasureDoc(
        "SetR",
        "set_recall",
        "recall of the whole retrieved set",
        REL,
        "relevant retrieved / R",
        family="SetR",
    ),
    MeasureDoc(
        "SetF",
        "set_F",
        "F-measure of the retrieved set",
        f"beta (default 1.0); {REL}; {JUDGED_ONLY}",
        "(1 + β²)·P·R / (β²·P + R) over the retrieved set",
        family="SetF",
    ),
    MeasureDoc(
        "Judged@k",
        "judged.k",
        "share of the top k that is judged",
        "k: rank cutoff; without it (Judged) the whole ranking",
        "|{i ≤ k : document i judged, any grade}| / min(k, retrieved); 0 when nothing is retrieved",
        DOUBLES_ASCENDING.format(provider="judged"),
        unjudged="what it counts: a low value means the other measures undercount the run",
        family="Judged",
    ),
    MeasureDoc(
        "ERR@k",
        "",
        "expected reciprocal rank at k",
        "k: rank cutoff (required); grades 0–4 (gdeval's scale)",
        "Σ_{i≤k} R(i)/i · Π_{j<i} (1 − R(j)), R(i) = (2^grade(i) − 1) / 16",
        "score descending (compared as doubles), then docno descending (byte order), as "
        "gdeval (ir_measures' provider) orders them, whatever the trec_eval version",
        family="ERR",
    ),
    MeasureDoc(
        "RBP(p=..)",
        "",
        "rank-biased precision",
        f"p: persistence (default {RBP_P}); rel=N: binary gains (grade ≥ N), without it the "
        "gain is the grade",
        "graded: (1 − p) Σ_i p^(i−1) · gain(i), over every retrieved document; rel=N (as "
        "cwl_eval, ir_measures' provider): (1 − p) / (1 − p^1000) Σ_{i≤1000} p^(i−1) · "
        "[grade(i) ≥ N]",
        "rel=N: score descending (compared as doubles), tied documents in the run file's "
        "order (cwl_eval's stable sort); graded: " + TIES,
        family="RBP",
    ),
    MeasureDoc(
        "NumQ",
        "num_q",
        "topics scored",
        "",
        "1 per topic; the 'all' value is the number of topics",
        ties="none",
        unjudged="none",
        complete="counts the topics missing from the run",
        family="NumQ",
        mean=False,
    ),
    MeasureDoc(
        "NumRet",
        "num_ret",
        "documents retrieved",
        "NumRet(rel=N) is NumRelRet",
        "documents in the ranking (after -M); the 'all' value is the sum",
        ties="none",
        unjudged="counted",
        complete="0 for a missing topic",
        family="NumRet",
        mean=False,
    ),
    MeasureDoc(
        "NumRel",
        "num_rel",
        "relevant documents judged",
        REL,
        "R, the topic's judged documents with grade ≥ rel; the 'all' value is the sum",
        ties="none",
        unjudged="not counted",
        complete="a missing topic adds its relevant documents in 10.0 (see README on -c)",
        family="NumRel",
        mean=False,
    ),
    MeasureDoc(
        "NumRelRet",
        "num_rel_ret",
        "relevant documents retrieved",
        REL,
        "|{i : rel(i)}|; the 'all' value is the sum",
        ties="none",
        unjudged="not relevant",
        complete="0 for a missing topic",
        family="NumRelRet",
        mean=False,
    ),
    MeasureDoc(
        "",
        "gm_map",
        "geometric mean of average precision",
        REL,
        "exp(mean over topics of log(max(AP, 0.00001)))",
        complete="a missing topic adds log(0.00001)",
        mean=False,
    ),
)


def available() -> list[MeasureDoc]:
    """The measures this installation computes (trec_eval's table grows with its branch of
    all_trec measures; ours are always there)."""
    docs = []
    for doc in MEASURES:
        if doc.trec and not catalog.is_measure_name(doc.trec_family):
            continue
        if doc.family and doc.family not in FAMILIES:
            continue
        docs.append(doc)
    return docs


def format_text() -> str:
    """`evaluate --list-measures`: one block per measure."""
    blocks = []
    for doc in available():
        names = " | ".join(
            filter(
                None,
                [
                    f"ir_measures: {doc.ir}" if doc.ir else "",
                    f"trec_eval: {doc.trec}" if doc.trec else "",
                ],
            )
        )
        lines = [f"{doc.ir or doc.trec}: {doc.title}", f"  names      {names}"]
        if doc.parameters:
            lines.append(f"  parameters {doc.parameters}")
        lines += [
            f"  formula    {doc.formula}",
            f"  ties       {doc.ties}",
            f"  unjudged   {doc.unjudged}",
            f"  -c         {doc.complete}",
        ]
        blocks.append("\n".join(lines))
    header = (
        "Measures, in trec_eval's dialect (-m ndcg_cut.10) or ir_measures' (-m nDCG@10); "
        "rel(i): the document at rank i has grade >= the relevance level.\n\n"
    )
    return header + "\n\n".join(blocks) + "\n"
