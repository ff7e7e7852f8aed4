"""The machine judge's prompt: the default template, checking lead-written ones, rendering."""

import pytest

from annotation.llm import (
    DEFAULT_TEMPLATE,
    Passage,
    PromptTemplate,
    TemplateError,
    check_template,
    format_scale,
    render_messages,
)
from annotation.llm.prompts import cut_passage
from annotation.scales import FIVE_POINT_SCALE, TREC_DL_SCALE

PASSAGE = Passage(
    query="how do tides work",
    description="Explain what causes ocean tides.",
    narrative="",
    title="Tides",
    text="Tides are caused by the Moon's gravity pulling on the oceans.",
)


def test_default_template_shows_topic_passage_and_every_grade_with_its_definition():
    system, user = render_messages(DEFAULT_TEMPLATE, PASSAGE, TREC_DL_SCALE)
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    assert "Query: how do tides work" in text
    assert "Explain what causes ocean tides." in text
    assert "What counts as relevant: (not given)" in text  # empty narrative said, not blank
    assert "Tides are caused by the Moon's gravity" in text
    for item in TREC_DL_SCALE:
        assert f"{item['grade']} = {item['label']}: {item['definition']}" in text
    assert "one of the grades 0 to 3" in text
    assert "Grade: N" in text


def test_default_template_follows_the_campaigns_scale():
    user = render_messages(DEFAULT_TEMPLATE, PASSAGE, FIVE_POINT_SCALE)[-1]["content"]
    assert "5 = Perfect: Dedicated to the query" in user
    assert "one of the grades 0 to 5" in user


def test_template_with_unknown_placeholder_is_refused_naming_it():
    template = PromptTemplate("t", "1", "", "Q {query} P {pasage} S {scale} {passage}")
    with pytest.raises(TemplateError) as caught:
        check_template(template)
    assert caught.value.problems == [
        "user message: unknown placeholder {pasage} (known: query, description, narrative, "
        "title, passage, scale, lowest, highest); write {{ and }} for a literal brace"
    ]


def test_template_missing_the_passage_or_the_scale_is_refused_with_every_problem():
    with pytest.raises(TemplateError) as caught:
        check_template(PromptTemplate("t", "1", "", "Judge {query}"))
    assert caught.value.problems == [
        "the template never mentions {passage}: the model would not see the passage",
        "the template never mentions {scale}: the model would not see the grading scale",
    ]


def test_a_single_brace_is_refused_and_doubled_braces_are_literal():
    with pytest.raises(TemplateError, match="a single } at character 10"):
        check_template(PromptTemplate("t", "1", "", "{query} x} {passage} {scale}"))
    template = PromptTemplate("t", "1", "", '{query} {passage} {scale} Answer {{"grade": N}}')
    user = render_messages(template, PASSAGE, TREC_DL_SCALE)[-1]["content"]
    assert user.endswith('Answer {"grade": N}')


def test_placeholders_in_the_passage_are_not_filled_again():
    tricky = Passage("q {scale}", "", "", "", "text with {query} and {{ braces")
    template = PromptTemplate("t", "1", "", "{query}|{passage}|{scale}")
    user = render_messages(template, tricky, TREC_DL_SCALE)[-1]["content"]
    assert user.startswith("q {scale}|text with {query} and {{ braces|0 = Irrelevant")


def test_empty_system_message_is_left_out():
    template = PromptTemplate("t", "1", "  ", "{query} {passage} {scale}")
    assert [m["role"] for m in render_messages(template, PASSAGE, TREC_DL_SCALE)] == ["user"]


def test_long_passage_is_cut_and_says_so():
    text = "word " * 5000
    cut = cut_passage(text, 1000)
    assert len(cut) < 1100
    assert cut.endswith("[…passage cut at 1,000 characters]")
    assert cut_passage("short", 1000) == "short"


def test_format_scale_lists_grades_lowest_first():
    assert format_scale(
        [
            {"grade": 0, "label": "No", "definition": ""},
            {"grade": 1, "label": "Yes", "definition": "On topic."},
        ]
    ) == ("0 = No\n1 = Yes: On topic.")


def test_default_template_label_names_its_version():
    assert DEFAULT_TEMPLATE.label == "qrelsmith-umbrela v1"
    check_template(DEFAULT_TEMPLATE)
