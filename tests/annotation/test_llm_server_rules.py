"""The loopback server's lexical answer mode (tests/llm_server.py): the stated rule the
machine-judge benchmark's kappa measures, read from the default prompt."""

import pytest

from annotation.llm import DEFAULT_TEMPLATE
from annotation.llm.prompts import Passage, render_messages
from annotation.scales import TREC_DL_SCALE
from tests.llm_server import Reply, lexical_grade, lexical_overlap


def ask(query: str, text: str) -> Reply:
    passage = Passage(query=query, description="", narrative="", title="A title", text=text)
    messages = render_messages(DEFAULT_TEMPLATE, passage, TREC_DL_SCALE)
    return lexical_grade({"messages": messages})


@pytest.mark.parametrize(
    ("query", "text", "grade"),
    [
        ("tide tables", "Nothing about the sea here.", 0),
        ("tide tables for brest", "Tables of contents.", 1),  # 1 of 4 words
        ("tide tables", "Tables are furniture.", 2),  # 1 of 2: half
        ("Tide tables", "The tide tables of Brest, 2026.", 3),
    ],
)
def test_the_grade_is_the_share_of_query_words_in_the_passage(query, text, grade):
    assert ask(query, text) == Reply(f"Grade: {grade}")


def test_the_rule_never_reads_the_description_or_the_title():
    passage = Passage(
        query="sourdough starter",
        description="sourdough starter sourdough starter",
        narrative="",
        title="sourdough starter",
        text="A loaf of rye.",
    )
    messages = render_messages(DEFAULT_TEMPLATE, passage, TREC_DL_SCALE)
    assert lexical_grade({"messages": messages}) == Reply("Grade: 0")


def test_a_prompt_it_cannot_read_is_answered_in_prose():
    answer = lexical_grade({"messages": [{"role": "user", "content": "Grade this."}]})
    assert answer.text.startswith("I cannot find")


def test_overlap_counts_distinct_words():
    assert lexical_overlap("a a b", "a") == pytest.approx(0.5)
    assert lexical_overlap("", "anything") == 0.0
