"""Mark a query's terms in a document's text, safely.

``highlight(text, query)`` returns HTML: the whole text escaped, with each word that matches a
query term wrapped in ``<mark>``. The text is cut at the matches first and every piece is
escaped on its own, so nothing from the text or the query ever reaches the page unescaped:
removing the ``<mark>`` tags and unescaping gives back the text exactly.

A text word matches a query term when the two are equal after casefolding and Harman's
S-stemmer (D. Harman, "How effective is suffixing?", JASIS 42(1), 1991), which strips plurals
only: "cats" matches "cat", "queries" matches "query", but "category" does not match "cat".
Words are runs of Unicode letters and digits (regex ``\\w+``, underscore excluded). Common
English function words ("the", "of", "what", …) in the query are not marked: TREC queries are
often questions, and marking every "is" and "the" hides the words that matter.
"""

import html
import re

__all__ = ["STOPWORDS", "highlight", "query_terms", "s_stem"]

_WORD = re.compile(r"[^\W_]+")

STOPWORDS = frozenset(
    """a about an and are as at be been but by can could did do does for from had has have
    how i if in into is it its may me my no not of on or our should so than that the their
    them then there these they this those to was we were what when where which who whom why
    will with would you your""".split()  # noqa: SIM905 - a block of words reads better than 67 lines
)


def s_stem(word: str) -> str:
    """Harman's S-stemmer on a casefolded word: "-ies" → "-y" (not after e or a), "-es" →
    "-e" (not after a, e or o), "-s" → "" (not after u or s); only the first rule that
    applies is used, and words of three letters or fewer are left alone."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def _key(word: str) -> str:
    return s_stem(word.casefold())


def query_terms(query: str) -> list[str]:
    """The query's words that get marked, as comparison keys (casefolded, S-stemmed), in
    query order without repeats; stopwords are left out."""
    keys: dict[str, None] = {}
    for match in _WORD.finditer(query):
        word = match.group().casefold()
        if word not in STOPWORDS:
            keys.setdefault(s_stem(word), None)
    return list(keys)


def highlight(text: str, query: str, *, tag: str = "mark") -> str:
    """``text`` as escaped HTML with the words matching ``query``'s terms wrapped in
    ``<tag>``. Raises ValueError when ``tag`` is not a plain lowercase element name."""
    if not re.fullmatch(r"[a-z][a-z0-9]*", tag):
        raise ValueError(f"tag must be a plain lowercase element name, not {tag!r}")
    terms = set(query_terms(query))
    if not terms or not text:
        return html.escape(text)
    pieces: list[str] = []
    start = 0
    for match in _WORD.finditer(text):
        if _key(match.group()) in terms:
            pieces.append(html.escape(text[start : match.start()]))
            pieces.append(f"<{tag}>{html.escape(match.group())}</{tag}>")
            start = match.end()
    pieces.append(html.escape(text[start:]))
    return "".join(pieces)
