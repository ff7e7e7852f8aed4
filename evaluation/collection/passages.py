"""Sections split into passages of MIN_WORDS to MAX_WORDS words, on the documents' own
boundaries.

Rules, in order (a page at a time, its sections in document order):

1. A section of MIN_WORDS to MAX_WORDS words is one passage.
2. A longer one is split between its blocks (paragraphs, list items, code blocks) into parts
   of at most MAX_WORDS words, each part as close to an even share as the blocks allow (a last
   part under MIN_WORDS takes whole blocks from the one before, or joins it); a block longer
   than half of MAX_WORDS is first cut between its lines (a code block) or words.
   Parts after the first are numbered (``~2``, ``~3``, ...) in their docno.
3. A shorter one is joined to the passage before it on the same page when that stays within
   MAX_WORDS, else it starts a passage that the following sections join (their headings kept
   as a line of text) until it reaches MIN_WORDS. Sections without text (a heading above
   subsections) join nothing.
4. What is still short at the end of a page takes whole sections from the end of the passage
   before it (a passage of joined sections), when both then keep MIN_WORDS to MAX_WORDS;
   otherwise it is dropped.

A passage's title is "page title — section heading" of the section it starts with, its URL
that section's public address; it records every section whose text it holds (``sections``),
which is how topics find their answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .html import Section

__all__ = ["MAX_WORDS", "MIN_WORDS", "Passage", "split_passages"]

MIN_WORDS = 100
MAX_WORDS = 400
_MAX_BLOCK = MAX_WORDS // 2


@dataclass(frozen=True)
class Passage:
    docno: str
    title: str
    url: str
    text: str
    sections: tuple[tuple[str, str], ...]  # (page, anchor) of every section it holds

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass
class _Draft:
    first: Section  # the section it starts with: its title, URL and docno
    part: int
    blocks: list[tuple[tuple[str, str], str]]  # (the section it comes from, its text)
    words: int
    joinable: bool  # a whole section (or sections) within MAX_WORDS: a short one may join

    def add(self, section: Section) -> None:
        key = (section.page, section.anchor)
        if section.heading:
            self.blocks.append((key, section.heading))
        self.blocks += [(key, block) for block in section.blocks]
        self.words += section.words + len(section.heading.split())

    @property
    def sections(self) -> tuple[tuple[str, str], ...]:
        return tuple(dict.fromkeys(key for key, _ in self.blocks))


def _start(section: Section) -> _Draft:
    key = (section.page, section.anchor)
    return _Draft(section, 1, [(key, b) for b in section.blocks], section.words, True)


def split_passages(
    sections: Iterable[Section],
    *,
    docno: Callable[[Section, int], str],
    url: Callable[[Section], str],
    page_title: Callable[[Section], str],
) -> list[Passage]:
    """Passages of ``sections`` (grouped by page, in document order). ``docno(section, part)``
    names the passage starting with ``section`` (part 1, 2, ... for a split one), ``url`` gives
    a section's public address and ``page_title`` its page's title."""
    drafts: list[_Draft] = []
    page = None
    pending: _Draft | None = None  # a short start waiting for MIN_WORDS
    last: _Draft | None = None  # the page's last passage
    by_key: dict[tuple[str, str], Section] = {}
    for section in [*sections, None]:
        if section is None or section.page != page:
            rescued = pending and _rescue(last, pending, by_key)
            if rescued:
                drafts.append(rescued)
            if section is None:
                break
            page, pending, last, by_key = section.page, None, None, {}
        by_key[(section.page, section.anchor)] = section
        words = section.words
        if not words:
            continue
        if pending is not None:
            pending.add(section)
            if pending.words >= MIN_WORDS:
                last = pending
                drafts += _split(pending)
                pending = None
            continue
        if words < MIN_WORDS:
            extra = words + len(section.heading.split())
            if last is not None and last.joinable and last.words + extra <= MAX_WORDS:
                last.add(section)
            else:
                pending = _start(section)
            continue
        last = _start(section)
        drafts += _split(last)
    passages = []
    for draft in drafts:
        title = page_title(draft.first)
        heading = draft.first.heading or title
        passages.append(
            Passage(
                docno(draft.first, draft.part),
                heading if heading == title else f"{title} — {heading}",
                url(draft.first),
                "\n\n".join(text for _, text in draft.blocks),
                draft.sections,
            )
        )
    return passages


def _rescue(last: _Draft | None, pending: _Draft, by_key: dict) -> _Draft | None:
    """A page's short end with whole sections taken from the end of ``last`` (rule 4), or
    None. ``last`` loses them."""
    if last is None or not last.joinable:
        return None
    keys = list(last.sections)
    sizes = {key: sum(_size(b) for b in last.blocks if b[0] == key) for key in keys}
    moved: list[tuple[str, str]] = []
    kept, gained = last.words, pending.words
    while gained < MIN_WORDS and len(moved) < len(keys) - 1:
        key = keys[-1 - len(moved)]
        moved.insert(0, key)
        kept -= sizes[key]
        gained += sizes[key]
    first = by_key[moved[0]] if moved else None
    if first is None or kept < MIN_WORDS:
        return None
    # The first moved section's heading becomes the title; the short end's becomes a line.
    start = pending.first
    words = gained - len(first.heading.split()) + len(start.heading.split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        return None
    blocks = [b for b in last.blocks if b[0] in moved]
    if first.heading:
        blocks = blocks[1:]
    if start.heading:
        blocks.append(((start.page, start.anchor), start.heading))
    last.blocks = [b for b in last.blocks if b[0] not in moved]
    last.words = kept
    return _Draft(first, 1, blocks + pending.blocks, words, False)


def _split(draft: _Draft) -> list[_Draft]:
    """The draft itself when within MAX_WORDS, else its parts (no longer joinable)."""
    if draft.words <= MAX_WORDS:
        return [draft]
    draft.joinable = False
    parts = _parts(draft.blocks)
    return [
        _Draft(draft.first, number, blocks, sum(_size(b) for b in blocks), False)
        for number, blocks in enumerate(parts, start=1)
    ]


def _size(block: tuple[tuple[str, str], str]) -> int:
    return len(block[1].split())


def _parts(blocks: list) -> list[list]:
    """``blocks`` (more than MAX_WORDS words in all) in parts of at most MAX_WORDS words each,
    near an even share; see the module's rule 2."""
    pieces = [(key, piece) for key, block in blocks for piece in _cut(block)]
    total = sum(_size(piece) for piece in pieces)
    share = total / math.ceil(total / MAX_WORDS)
    parts: list[list] = [[]]
    words = 0
    for piece in pieces:
        size = _size(piece)
        if parts[-1] and (words + size > MAX_WORDS or words >= share):
            parts.append([])
            words = 0
        parts[-1].append(piece)
        words += size
    before, tail = (parts[-2], parts[-1]) if len(parts) > 1 else ([], [])
    # A short tail takes whole pieces from the part before while that part keeps MIN_WORDS.
    while len(before) > 1 and sum(_size(p) for p in tail) < MIN_WORDS:
        moved = _size(before[-1])
        if sum(_size(p) for p in before) - moved < MIN_WORDS:
            break
        tail.insert(0, before.pop())
    # Still short (its part before holds few, large pieces): one part, when that fits.
    short = before and sum(_size(p) for p in tail) < MIN_WORDS
    if short and sum(_size(p) for p in before + tail) <= MAX_WORDS:
        parts[-2:] = [before + tail]
    return parts


def _cut(block: str) -> list[str]:
    """A block of more than _MAX_BLOCK words in pieces of at most _MAX_BLOCK words, between
    lines when it has them (code), else between words."""
    if len(block.split()) <= _MAX_BLOCK:
        return [block]
    units = block.split("\n") if "\n" in block else block.split()
    glue = "\n" if "\n" in block else " "
    pieces, current, words = [], [], 0
    for unit in units:
        size = len(unit.split())
        if current and words + size > _MAX_BLOCK:
            pieces.append(glue.join(current))
            current, words = [], 0
        if size > _MAX_BLOCK:  # one enormous line
            pieces += _cut(" ".join(unit.split()))
            continue
        current.append(unit)
        words += size
    if current:
        pieces.append(glue.join(current))
    return pieces
