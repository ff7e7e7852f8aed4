"""Every measure family declared once (pure): its names in both dialects, its parameters with
the cutoff as a number, what its value depends on, its entries on the measures page and what
the dashboards offer of it. Derived from FAMILIES: the parser of ir_measures names and the
ir_measures names of output names (dialects.py), which values are means, our own measures'
scorers (cascade.py, by `ours`), the measures page and `evaluate --list-measures`
(reference.py), the dashboards' measure menu. trec_eval's own table (names, `-m` syntax,
print formats) stays in catalog.py, as measures.c has it. Listed in the page's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .doc import DOUBLES_ASCENDING, JUDGED_ONLY, RANK_CUTOFFS, REL, TIES, MeasureDoc

__all__ = ["FAMILIES", "RBP_P", "SET_F_BETA", "Family", "by_trec_name", "menu_specs", "more_specs"]

RBP_P = 0.8  # ir_measures' default persistence
SET_F_BETA = 1.0


@dataclass(frozen=True)
class Family:
    """One measure family.

    ir: the ir_measures name (None: gm_map has none); aliases: its other spellings (MRR).
    trec: the trec_eval measure with a cutoff (or the only one, when cutoff is "none");
        trec_plain: the one without a cutoff, when the cutoff is optional.
    ours: the scorer of one of our own measures (cascade.py) instead of a trec_eval one.
    cutoff: "required", "optional", "none", or "recall" (a point in [0, 1]); a rank cutoff
        is read as an int, a recall point as a float (MeasureRequest.cutoff).
    params: the ir_measures parameters it takes (rel, judged_only, gains, dcg, p, beta).
    by_level: its value depends on the relevance level (-l), so its ir_measures name says
        rel when the level is not 1.
    mean: its "all" value is the mean over topics (counts and gm_map are not).
    top_k_only: its value at k depends on the run's own top k only (P@k; not R@k: R counts
        every relevant document of the topic).
    docs: its entries on the measures page.
    menu, more: the dashboards' measure menu, and what is offered beside it (`-m` names).
    """

    ir: str | None
    trec: str | None = None
    trec_plain: str | None = None
    ours: str | None = None
    cutoff: Literal["required", "optional", "none", "recall"] = "none"
    params: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    by_level: bool = False
    mean: bool = True
    top_k_only: bool = False
    docs: tuple[MeasureDoc, ...] = ()
    menu: tuple[str, ...] = ()
    more: tuple[str, ...] = ()

    @property
    def trec_names(self) -> tuple[str, ...]:
        return tuple(name for name in (self.trec, self.trec_plain) if name)


_REL_J = ("rel", "judged_only")

FAMILIES: tuple[Family, ...] = (
    Family(
        "nDCG",
        "ndcg_cut",
        "ndcg",
        cutoff="optional",
        params=("gains", "judged_only", "dcg"),
        aliases=("NDCG",),
        docs=(
            MeasureDoc(
                "nDCG@k",
                "ndcg_cut.k",
                "normalised discounted cumulative gain at k",
                f"{RANK_CUTOFFS}; gains={{grade:gain,..}}: gain per grade; {JUDGED_ONLY}; "
                "--gain exp: 2^grade − 1",
                "DCG@k / IDCG@k; DCG@k = Σ_{i≤k} gain(grade(i)) / log2(i + 1); IDCG@k: the same over "
                "the topic's judged grades ≥ 1 sorted descending, retrieved or not; 0 when IDCG is 0; "
                "-l does not apply",
            ),
            MeasureDoc(
                "nDCG",
                "ndcg",
                "normalised discounted cumulative gain, whole ranking",
                f"gains={{..}}; {JUDGED_ONLY}",
                "DCG / IDCG over every retrieved document and every judged grade ≥ 1",
            ),
        ),
        menu=(*(f"ndcg_cut.{k}" for k in (1, 3, 5, 10, 20, 100)), "ndcg"),
    ),
    Family(
        "P",
        "P",
        cutoff="required",
        params=_REL_J,
        aliases=("Precision",),
        by_level=True,
        top_k_only=True,
        docs=(
            MeasureDoc(
                "P@k",
                "P.k",
                "precision at k",
                f"{RANK_CUTOFFS}; {REL}; {JUDGED_ONLY}",
                "|{i ≤ k : rel(i)}| / k (k even when fewer documents are retrieved)",
            ),
        ),
        menu=("P.5", "P.10", "P.20"),
    ),
    Family(
        "R",
        "recall",
        cutoff="required",
        params=_REL_J,
        aliases=("Recall",),
        by_level=True,
        docs=(
            MeasureDoc(
                "R@k",
                "recall.k",
                "recall at k",
                f"{RANK_CUTOFFS}; {REL}; {JUDGED_ONLY}",
                "|{i ≤ k : rel(i)}| / R, R the topic's relevant documents; 0 when R = 0",
            ),
        ),
        menu=("recall.100", "recall.1000"),
        more=("recall.10",),
    ),
    Family(
        "AP",
        "map_cut",
        "map",
        cutoff="optional",
        params=_REL_J,
        aliases=("MAP",),
        by_level=True,
        docs=(
            MeasureDoc(
                "AP",
                "map",
                "average precision (MAP over topics)",
                f"{REL}; {JUDGED_ONLY}",
                "Σ over relevant retrieved i of prec(i) / R, prec(i) = |{j ≤ i : rel(j)}| / i",
            ),
            MeasureDoc(
                "AP@k",
                "map_cut.k",
                "average precision at k",
                f"{RANK_CUTOFFS}; {REL}; {JUDGED_ONLY}",
                "Σ over relevant i ≤ k of prec(i) / R",
            ),
        ),
        menu=("map",),
        more=("map_cut.10",),
    ),
    Family(
        "RR",
        None,
        "recip_rank",
        ours="RR",
        cutoff="optional",
        params=_REL_J,
        aliases=("MRR",),
        by_level=True,
        top_k_only=True,
        docs=(
            MeasureDoc(
                "RR",
                "recip_rank",
                "reciprocal rank (MRR over topics)",
                f"{REL}; {JUDGED_ONLY}",
                "1 / the rank of the first relevant document; 0 if none is retrieved",
            ),
            MeasureDoc(
                "RR@k",
                "",
                "reciprocal rank at k (MS MARCO's MRR@10)",
                f"k: rank cutoff; {REL}; {JUDGED_ONLY}",
                "1 / the first relevant rank i ≤ k; 0 if none",
                DOUBLES_ASCENDING.format(provider="msmarco"),
            ),
        ),
        menu=("recip_rank",),
        more=("RR@10",),
    ),
    Family(
        "Rprec",
        "Rprec",
        params=_REL_J,
        aliases=("RPrec",),
        by_level=True,
        docs=(
            MeasureDoc(
                "Rprec",
                "Rprec",
                "R-precision",
                f"{REL}; {JUDGED_ONLY}",
                "|{i ≤ R : rel(i)}| / R",
            ),
        ),
        menu=("Rprec",),
    ),
    Family(
        "Bpref",
        "bpref",
        params=("rel",),
        aliases=("BPref",),
        by_level=True,
        docs=(
            MeasureDoc(
                "Bpref",
                "bpref",
                "binary preference",
                REL,
                "(1/R) Σ over relevant retrieved i of (1 − min(n(i), R) / min(N, R)), n(i): judged "
                "non-relevant documents above i, N: the topic's judged non-relevant documents",
                unjudged="ignored: only judged documents count in n(i)",
            ),
        ),
        menu=("bpref",),
    ),
    Family(
        "infAP",
        "infAP",
        params=("rel",),
        by_level=True,
        docs=(
            MeasureDoc(
                "infAP",
                "infAP",
                "inferred average precision (sampled judgments)",
                REL,
                "trec_eval's infAP: expected precision at each relevant document, estimated from the "
                "judged documents above it",
                unjudged="estimated from the judged documents (the unjudged are the unsampled)",
            ),
        ),
        more=("infAP",),
    ),
    Family(
        "Success",
        "success",
        cutoff="required",
        params=_REL_J,
        by_level=True,
        top_k_only=True,
        docs=(
            MeasureDoc(
                "Success@k",
                "success.k",
                "success at k",
                f"k (trec_eval's default 1, 5, 10); {REL}; {JUDGED_ONLY}",
                "1 if a relevant document is ranked ≤ k, else 0",
            ),
        ),
        more=("success.1", "success.10"),
    ),
    Family(
        "IPrec",
        "iprec_at_recall",
        cutoff="recall",
        params=("judged_only",),
        docs=(
            MeasureDoc(
                "IPrec@r",
                "iprec_at_recall.r",
                "interpolated precision at recall r",
                f"r in [0, 1] (trec_eval's default 0.0, 0.1, …, 1.0); {JUDGED_ONLY}",
                "max prec(i) over relevant i at or after the m-th relevant one, m = (long)(r·R + 0.9) "
                "in 9.0.8, lround(r·R) in 10.0",
            ),
        ),
        more=("iprec_at_recall.0.5",),
    ),
    Family(
        "SetP",
        "set_P",
        params=_REL_J,
        by_level=True,
        docs=(
            MeasureDoc(
                "SetP",
                "set_P",
                "precision of the whole retrieved set",
                f"{REL}; {JUDGED_ONLY}",
                "relevant retrieved / retrieved",
            ),
        ),
        more=("set_P",),
    ),
    Family(
        "SetR",
        "set_recall",
        params=("rel",),
        by_level=True,
        docs=(
            MeasureDoc(
                "SetR",
                "set_recall",
                "recall of the whole retrieved set",
                REL,
                "relevant retrieved / R",
            ),
        ),
        more=("set_recall",),
    ),
    Family(
        "SetF",
        "set_F",
        params=("rel", "beta", "judged_only"),
        by_level=True,
        docs=(
            MeasureDoc(
                "SetF",
                "set_F",
                "F-measure of the retrieved set",
                f"beta (default 1.0); {REL}; {JUDGED_ONLY}",
                "(1 + β²)·P·R / (β²·P + R) over the retrieved set",
            ),
        ),
        more=("set_F",),
    ),
    Family(
        "Judged",
        "judged",
        ours="Judged",
        cutoff="optional",
        docs=(
            MeasureDoc(
                "Judged@k",
                "judged.k",
                "share of the top k that is judged",
                "k: rank cutoff; without it (Judged) the whole ranking",
                "|{i ≤ k : document i judged, any grade}| / min(k, retrieved); 0 when nothing is retrieved",
                DOUBLES_ASCENDING.format(provider="judged"),
                unjudged="what it counts: a low value means the other measures undercount the run",
            ),
        ),
        menu=("judged.10",),
    ),
    Family(
        "ERR",
        ours="ERR",
        cutoff="required",
        docs=(
            MeasureDoc(
                "ERR@k",
                "",
                "expected reciprocal rank at k",
                "k: rank cutoff (required); grades 0–4 (gdeval's scale)",
                "Σ_{i≤k} R(i)/i · Π_{j<i} (1 − R(j)), R(i) = (2^grade(i) − 1) / 16",
                "score descending (compared as doubles), then docno descending (byte order), as "
                "gdeval (ir_measures' provider) orders them, whatever the trec_eval version",
            ),
        ),
        more=("ERR@10", "ERR@20"),
    ),
    Family(
        "RBP",
        ours="RBP",
        params=("rel", "p"),
        docs=(
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
            ),
        ),
        more=("RBP(rel=1)", "RBP"),
    ),
    Family(
        "NumQ",
        "num_q",
        mean=False,
        docs=(
            MeasureDoc(
                "NumQ",
                "num_q",
                "topics scored",
                "",
                "1 per topic; the 'all' value is the number of topics",
                ties="none",
                unjudged="none",
                complete="counts the topics missing from the run",
            ),
        ),
    ),
    Family(
        "NumRet",
        "num_ret",
        params=("rel",),
        mean=False,
        docs=(
            MeasureDoc(
                "NumRet",
                "num_ret",
                "documents retrieved",
                "NumRet(rel=N) is NumRelRet",
                "documents in the ranking (after -M); the 'all' value is the sum",
                ties="none",
                unjudged="counted",
                complete="0 for a missing topic",
            ),
        ),
    ),
    Family(
        "NumRel",
        "num_rel",
        params=("rel",),
        by_level=True,
        mean=False,
        docs=(
            MeasureDoc(
                "NumRel",
                "num_rel",
                "relevant documents judged",
                REL,
                "R, the topic's judged documents with grade ≥ rel; the 'all' value is the sum",
                ties="none",
                unjudged="not counted",
                complete="a missing topic adds its relevant documents in 10.0 (see README on -c)",
            ),
        ),
    ),
    Family(
        "NumRelRet",
        "num_rel_ret",
        params=("rel",),
        by_level=True,
        mean=False,
        docs=(
            MeasureDoc(
                "NumRelRet",
                "num_rel_ret",
                "relevant documents retrieved",
                REL,
                "|{i : rel(i)}|; the 'all' value is the sum",
                ties="none",
                unjudged="not relevant",
                complete="0 for a missing topic",
            ),
        ),
    ),
    Family(
        None,
        "gm_map",
        mean=False,
        docs=(
            MeasureDoc(
                "",
                "gm_map",
                "geometric mean of average precision",
                REL,
                "exp(mean over topics of log(max(AP, 0.00001)))",
                complete="a missing topic adds log(0.00001)",
            ),
        ),
    ),
)

_BY_TREC = {name: family for family in FAMILIES for name in family.trec_names}


def by_trec_name(name: str) -> Family | None:
    """The family of a trec_eval measure (ndcg_cut and ndcg are nDCG's); None for one that
    has none here (utility, relative_P, ...)."""
    return _BY_TREC.get(name)


def menu_specs() -> tuple[str, ...]:
    """The dashboards' measure menu, family by family."""
    return tuple(spec for family in FAMILIES for spec in family.menu)


def more_specs() -> tuple[str, ...]:
    """What the dashboards offer beside the menu: other cutoffs of trec_eval's measures
    first, then our own measures, then the others, each family by family."""
    offered = [(spec, family) for family in FAMILIES for spec in family.more]

    def kind(item: tuple[str, Family]) -> int:
        spec, family = item
        return 0 if "." in spec else 1 if family.ours else 2

    return tuple(spec for spec, _ in sorted(offered, key=kind))
