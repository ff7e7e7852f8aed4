"""Sphinx HTML pages read into sections, with the standard library's html.parser.

Two page shapes are read (both Sphinx; their themes differ):

- Python's docs put the content in ``<div class="body" role="main">`` with one
  ``<section id="...">`` per heading;
- Django's put it in ``<div class="section" id="s-...">`` (the public anchor is the id
  without ``s-``, as on docs.djangoproject.com).

Text outside a section (the header, navigation bars, sidebars, footers) is never read; inside
one, navigation is dropped too: ``<nav>``, the local table of contents (``contents``), toctree
lists, scripts, the heading's permalink sign and "[source]" links. Code blocks (``<pre>``) keep their lines.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Section", "read_sections"]

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Elements that end one block of text and start another (a paragraph, a list item, ...).
_BLOCKS = {
    "p", "pre", "li", "dt", "dd", "tr", "blockquote", "div", "section", "table", "ul", "ol",
    "dl", "caption", "figure", "figcaption", "aside", "br", "hr",
    *_HEADINGS,
}  # fmt: skip
_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "wbr",
}
_DROPPED_TAGS = {"nav", "script", "style", "template"}
# The heading's permalink sign, local tables of contents, toctrees, sidebars, navigation bars,
# and the "[source]" link to a function's code (Django's viewcode).
_DROPPED_CLASSES = {
    "headerlink", "contents", "toctree-wrapper", "sphinxsidebar", "related", "viewcode-link",
}  # fmt: skip
_SPACE = re.compile(r"\s+")


@dataclass
class Section:
    """One heading of a page and the text under it up to the next heading (its subsections'
    text is theirs, not its)."""

    page: str  # the page's path without .html, e.g. "faq/programming"
    anchor: str  # the public fragment, e.g. "why-are-default-values-shared-between-objects"
    heading: str
    level: int  # nesting depth: 1 for the page's own section, 2 below it, ...
    parents: tuple[str, ...]  # the headings above it, outermost first
    blocks: list[str] = field(default_factory=list)  # paragraphs, list items, code blocks
    links: list[tuple[str, str]] = field(default_factory=list)  # (page, fragment) it links to
    ids: list[str] = field(default_factory=list)  # every element id inside it (link targets)

    @property
    def words(self) -> int:
        return sum(len(block.split()) for block in self.blocks)


def read_sections(html: str, page: str) -> list[Section]:
    """The page's sections in document order. ``page`` is the page's path without ``.html``
    (relative links are resolved against it)."""
    reader = _Reader(page)
    reader.feed(html)
    reader.close()
    return reader.sections


def _section_anchor(tag: str, attrs: dict) -> str | None:
    if tag == "section" and attrs.get("id"):
        return attrs["id"]
    if tag == "div" and "section" in attrs.get("class", "").split() and attrs.get("id"):
        anchor = attrs["id"]
        return anchor[2:] if anchor.startswith("s-") else anchor
    return None


class _Reader(HTMLParser):
    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.page = page
        self.sections: list[Section] = []
        # Open elements: (tag, what it opened: "section", "drop", "heading", "pre" or "").
        self.stack: list[tuple[str, str]] = []
        # How many of each tag the stack holds: a stray end tag is known without a scan of
        # the stack (pages close some 400,000 elements).
        self.open_tags: Counter[str] = Counter()
        self.open_sections: list[Section] = []
        self.dropping = 0
        self.pre = 0
        self.heading: list[str] | None = None
        self.buffer: list[str] = []

    # --- elements ---------------------------------------------------------------------------

    def handle_starttag(self, tag, attr_list):
        attrs = {key: value or "" for key, value in attr_list}
        if tag in _VOID:
            if tag in _BLOCKS:
                self._flush()
            return
        role = ""
        classes = set(attrs.get("class", "").split())
        if self.dropping or tag in _DROPPED_TAGS or classes & _DROPPED_CLASSES:
            role = "drop"
            self.dropping += 1
        elif (anchor := _section_anchor(tag, attrs)) is not None:
            self._flush()
            parents = tuple(s.heading for s in self.open_sections)
            section = Section(self.page, anchor, "", len(self.open_sections) + 1, parents)
            self.sections.append(section)
            self.open_sections.append(section)
            role = "section"
        elif self.open_sections:
            if tag in _HEADINGS and self.heading is None and not self.open_sections[-1].heading:
                self._flush()
                self.heading = []
                role = "heading"
            elif tag == "pre":
                self._flush()
                self.pre += 1
                role = "pre"
            elif tag in _BLOCKS:
                self._flush()
            if tag == "a" and attrs.get("href"):
                self._link(attrs["href"])
        if self.open_sections and not self.dropping and attrs.get("id"):
            self.open_sections[-1].ids.append(attrs["id"])
        self.stack.append((tag, role))
        self.open_tags[tag] += 1

    def handle_endtag(self, tag):
        if tag in _VOID or not self.open_tags[tag]:
            return  # a stray end tag: nothing it could close
        while self.stack:
            open_tag, role = self.stack.pop()
            self.open_tags[open_tag] -= 1
            self._close(role)
            if open_tag == tag:
                break
        if tag in _BLOCKS and not self.dropping:
            self._flush()

    def _close(self, role: str) -> None:
        if role == "drop":
            self.dropping -= 1
        elif role == "section":
            self._flush()
            self.open_sections.pop()
        elif role == "heading":
            self.open_sections[-1].heading = _SPACE.sub(" ", "".join(self.heading)).strip()
            self.heading = None
        elif role == "pre":
            self._flush()
            self.pre -= 1

    # --- text -------------------------------------------------------------------------------

    def handle_data(self, data):
        if self.dropping or not self.open_sections:
            return
        if self.heading is not None:
            self.heading.append(data)
        else:
            self.buffer.append(data)

    def _flush(self) -> None:
        if not self.buffer:
            return
        text = "".join(self.buffer)
        self.buffer = []
        if self.pre:
            lines = [line.rstrip() for line in text.split("\n")]
            while lines and not lines[0]:
                lines.pop(0)
            text = "\n".join(lines).rstrip()
        else:
            text = _SPACE.sub(" ", text).strip()
        if text and self.open_sections:
            self.open_sections[-1].blocks.append(text)

    def _link(self, href: str) -> None:
        if "://" in href or href.startswith(("mailto:", "javascript:")):
            return
        path, _, fragment = href.partition("#")
        if path:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), path))
            path = path.removesuffix(".html")
        else:
            path = self.page
        self.open_sections[-1].links.append((path, fragment))
