"""The fallback collection: ``pydoc_data.topics``, the help texts that ship inside every
Python (what ``help("assert")`` prints; taken from the Python Language Reference, PSF
licence). Used when neither documentation package is installed.

Each help text is read into sections at its own underlined headings and split into passages
exactly as the HTML pages are. Its topics are fewer and simpler, and said so: pydoc's own index
of help topics (``pydoc.Helper.topics``: a topic name such as ASSIGNMENT, the help text it
shows and its related topics) gives one topic per help text, whose query is that text's first
heading (for example 'The assert statement'); grade 3 goes to the passages of the text pydoc
shows for it, grade 1 to the passages of the related topics pydoc lists. pydoc_data does not
say which page a text comes from, so a passage's URL is the documentation's search for the
text's label.
"""

from __future__ import annotations

import re
import sys
import textwrap

from .html import Section
from .passages import Passage
from .topics import ANSWER, RELATED, Topic

__all__ = ["fallback_sections", "fallback_topics", "fallback_url", "slug"]

_UNDERLINE = re.compile(r"^([*=\-~^\"'`#+])\1{2,}$")

DESCRIPTION = (
    "Someone types help() in Python {version} and looks up the topic {name}, whose text begins "
    "“{heading}”; find the passages that explain it."
)
NARRATIVE = (
    "A passage of the help text that pydoc shows for this topic is perfectly relevant (3). A "
    "passage of one of the related topics pydoc lists beside it is related (1). Anything else "
    "is not relevant (0)."
)


def version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def fallback_url(label: str) -> str:
    return f"https://docs.python.org/{version()}/search.html?q={label}"


def slug(text: str) -> str:
    """docutils' id of a heading: lower case, runs of other characters as one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def fallback_sections(topics: dict[str, str] | None = None) -> list[Section]:
    """Sections of every help text (``topics``: label -> text; default pydoc_data's)."""
    if topics is None:
        from pydoc_data.topics import topics
    sections = []
    for label in sorted(topics):
        sections += _text_sections(label, topics[label])
    return sections


def _text_sections(label: str, text: str) -> list[Section]:
    lines = text.split("\n")
    sections: list[Section] = []
    paragraph: list[str] = []
    seen: set[str] = set()

    def flush() -> None:
        if paragraph and sections:
            if all(line.startswith(" ") for line in paragraph):  # an indented (code) block
                block = textwrap.dedent("\n".join(paragraph)).strip("\n")
            else:
                block = " ".join(" ".join(paragraph).split())
            sections[-1].blocks.append(block)
        paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and _UNDERLINE.match(following) and len(following) >= len(line.strip()):
            flush()
            heading = line.strip()
            anchor = slug(heading)
            while anchor in seen:
                anchor += "-"
            seen.add(anchor)
            level = 1 if not sections else 2
            parents = (sections[0].heading,) if sections else ()
            sections.append(Section(label, anchor, heading, level, parents))
            index += 2
            continue
        if not line.strip():
            flush()
        elif not sections:
            sections.append(Section(label, slug(label), label, 1, ()))
            paragraph.append(line)
        else:
            paragraph.append(line)
        index += 1
    flush()
    return sections


def fallback_topics(sections: list[Section], passages: list[Passage]) -> list[Topic]:
    """One topic per help text that pydoc's index names (see the module's docstring)."""
    import pydoc

    by_label: dict[str, list[str]] = {}
    for passage in passages:
        for label, _ in passage.sections:
            by_label.setdefault(label, [])
            if passage.docno not in by_label[label]:
                by_label[label].append(passage.docno)
    first_heading = {}
    for section in sections:
        first_heading.setdefault(section.page, section.heading)
    labels = {}
    for name, entry in pydoc.Helper.topics.items():
        if isinstance(entry, tuple):
            labels[name] = entry[0]
    topics, used = [], set()
    for name, entry in pydoc.Helper.topics.items():
        if not isinstance(entry, tuple) or entry[0] in used or not by_label.get(entry[0]):
            continue
        label, related = entry[0], entry[1].split()
        used.add(label)
        answers = dict.fromkeys(by_label[label], ANSWER)
        for other in related:
            for docno in by_label.get(labels.get(other, ""), []):
                answers.setdefault(docno, RELATED)
        heading = first_heading[label].replace('"', "")
        topics.append(
            Topic(
                f"pydoc-{len(topics) + 1:03d}",
                heading,
                DESCRIPTION.format(version=version(), name=name, heading=heading),
                NARRATIVE,
                dict(sorted(answers.items())),
            )
        )
    return topics
