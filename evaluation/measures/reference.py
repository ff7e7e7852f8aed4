"""Every measure as people look it up (pure): its names in both dialects, its parameters and
defaults, its formula, and how ties, unjudged documents and -c affect it, as families.py
declares them. What the measures page and `evaluate --list-measures` show; the formulas are
those scoring.py and cascade.py compute (their docstrings give the same)."""

from __future__ import annotations

import dataclasses

from . import catalog
from .dialects import FAMILIES
from .doc import MeasureDoc
from .families import FAMILIES as DECLARED

__all__ = ["MEASURES", "MeasureDoc", "available", "format_text"]

# Each family's entries (families.py), in its order, with its name and whether it is a mean.
MEASURES: tuple[MeasureDoc, ...] = tuple(
    dataclasses.replace(doc, family=family.ir or "", mean=family.mean)
    for family in DECLARED
    for doc in family.docs
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
