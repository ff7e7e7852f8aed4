from django import template

from evaluation.measures import display_name

register = template.Library()


@register.filter
def measure_label(output_name: str) -> str:
    """A trec_eval output name as people read it: ``ndcg_cut_10`` → ``nDCG@10``."""
    return display_name(output_name)
