"""A comparison's verdict, as the comparison pages, the API and `evaluate --fail-if-worse`
give it: the defaults of the randomisation test (permutations, seed, alpha), the verdict's
words, and how a p-value is printed. Pure: no Django."""

from __future__ import annotations

from evaluation.analysis import significance

PERMUTATIONS = 10_000
ALPHA = 0.05
COMPARISON_SEED = 0
VERDICTS = {
    "worse": "significantly worse",
    "better": "significantly better",
    "same": "no significant difference",
    "untestable": "no difference to test",
}


def verdict_of(comparison: significance.Comparison, alpha: float = ALPHA) -> str:
    """worse or better (randomisation test, Holm-adjusted when several, p < alpha), same
    (not significant), or untestable (no difference at all). The CI gate of `evaluate
    --fail-if-worse` fails on "worse"."""
    test = comparison.randomisation
    p = test.p_adjusted if test.p_adjusted is not None else test.p_value
    if p is None:
        return "untestable"
    if significance.is_significantly_worse(comparison, alpha):
        return "worse"
    return "better" if p < alpha and comparison.mean_b > comparison.mean_a else "same"


def format_p(p: float | None) -> str:
    """A p-value as pages and `evaluate --baseline` print it: 4 decimals, or 2 significant
    digits in scientific notation below 0.0001 (a randomisation p is never 0)."""
    if p is None:
        return "—"
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"
