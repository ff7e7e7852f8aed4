"""annotation/highlight.py: query terms marked in escaped text, never an injection."""

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.highlight import highlight, query_terms, s_stem


def unmark(marked: str) -> str:
    return html.unescape(re.sub(r"</?mark>", "", marked))


def test_query_terms_are_marked_case_insensitively_as_whole_words():
    assert highlight("Passport fees; PASSPORTS are costly.", "passport fee") == (
        "<mark>Passport</mark> <mark>fees</mark>; <mark>PASSPORTS</mark> are costly."
    )


def test_a_term_inside_a_longer_word_is_not_marked():
    assert highlight("category catalogue cat", "cat") == "category catalogue <mark>cat</mark>"


def test_stopwords_in_a_question_are_not_marked():
    assert highlight("What is the cost of the tide?", "what is the cause of tides") == (
        "What is the cost of the <mark>tide</mark>?"
    )


def test_the_text_is_escaped_around_and_inside_marks():
    assert highlight("<b>fees</b> & <script>alert(1)</script>", "fees script") == (
        "&lt;b&gt;<mark>fees</mark>&lt;/b&gt; &amp; &lt;<mark>script</mark>&gt;alert(1)"
        "&lt;/<mark>script</mark>&gt;"
    )


def test_quotes_are_escaped_so_text_cannot_break_out_of_an_attribute():
    marked = highlight("\"onmouseover='x'", "onmouseover")
    assert '"' not in marked and "'" not in marked
    assert marked == "&quot;<mark>onmouseover</mark>=&#x27;x&#x27;"


def test_a_query_full_of_regex_and_html_syntax_is_harmless():
    text = "a+b (c) [d] <e> f.*"
    assert highlight(text, "a+b (c) [d] <e> .*") == (
        "a+<mark>b</mark> (<mark>c</mark>) [<mark>d</mark>] &lt;<mark>e</mark>&gt; f.*"
    ), "query words are matched as words; its punctuation is never a pattern"


def test_an_empty_or_all_stopword_query_only_escapes():
    assert highlight("<i>x</i>", "") == "&lt;i&gt;x&lt;/i&gt;"
    assert highlight("the <i>x</i>", "the of") == "the &lt;i&gt;x&lt;/i&gt;"
    assert highlight("", "passport") == ""


def test_unicode_words_and_casefolding():
    assert highlight("STRASSE und Straße; café", "strasse CAFÉ") == (
        "<mark>STRASSE</mark> und <mark>Straße</mark>; <mark>café</mark>"
    )


def test_underscores_split_words():
    assert highlight("snake_case", "case") == "snake_<mark>case</mark>"


def test_query_terms_are_keys_in_order_without_repeats_or_stopwords():
    assert query_terms("What are the tides, TIDE and Queries?") == ["tide", "query"]


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("queries", "query"),
        ("series", "series"[:-3] + "y"),  # Harman's rule, not English: a known S-stemmer quirk
        ("cookies", "cooky"),  # likewise
        ("boxes", "boxe"),
        ("shoes", "shoes"[:-1]),
        ("toes", "toes"[:-1]),
        ("cats", "cat"),
        ("bus", "bus"),
        ("glass", "glass"),
        ("corpus", "corpus"),
        ("its", "its"),
    ],
)
def test_the_s_stemmer_follows_harmans_rules(word, stem):
    assert s_stem(word) == stem


def test_a_bad_tag_is_refused():
    with pytest.raises(ValueError, match="plain lowercase element name"):
        highlight("x", "x", tag='mark onclick="x"')


@given(st.text(), st.text())
def test_unmarking_gives_back_the_text_exactly(text, query):
    assert unmark(highlight(text, query)) == text


@given(st.text(), st.text())
def test_the_only_tags_in_the_output_are_marks(text, query):
    marked = highlight(text, query)
    assert re.sub(r"</?mark>", "", marked).count("<") == 0
    assert re.sub(r"</?mark>", "", marked).count(">") == 0
    assert marked.count("<mark>") == marked.count("</mark>")
