"""A test collection built from documentation installed on this machine: passages, topics
with known answers (qrels), and runs of real rankers over them.

Pure: no Django. The sources (sources.py), the HTML reader (html.py), the passage splitter
(passages.py), the FAQ topics (topics.py), the fallback (fallback.py) and the rankers
(rankers.py) each say their rules; README.md, "A real test collection", says what it is for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import fallback, sources
from .html import Section, read_sections
from .passages import MAX_WORDS, MIN_WORDS, Passage, split_passages
from .sources import DJANGO_PACKAGE, PYTHON_PACKAGE, DocSource
from .topics import Topic, faq_topics, qrels_of

__all__ = [
    "MAX_WORDS",
    "MIN_WORDS",
    "SOURCES",
    "Collection",
    "Passage",
    "Section",
    "SourceMissing",
    "Topic",
    "build_collection",
    "missing_packages_message",
    "qrels_of",
    "read_sections",
    "split_passages",
]

SOURCES = ("auto", "python", "django", "both", "fallback")


class SourceMissing(ValueError):
    """A documentation package the chosen source needs is not installed."""


@dataclass
class Collection:
    sources: list[str]  # e.g. ["Python 3.11 (python3.11-doc, PSF-2.0)"]
    passages: list[Passage]
    topics: list[Topic]
    notes: list[str] = field(default_factory=list)  # what the builder wants a person to know

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        return qrels_of(self.topics)


def missing_packages_message() -> str:
    return (
        f"The documentation packages are not installed ({PYTHON_PACKAGE}, {DJANGO_PACKAGE}): "
        f"using the small fallback (pydoc_data.topics, inside every Python). For the real "
        f"collection run: apt-get install --no-install-recommends {PYTHON_PACKAGE} "
        f"{DJANGO_PACKAGE}"
    )


def build_collection(source: str = "auto", *, doc_root: Path = sources.DOC_ROOT) -> Collection:
    """The collection of ``source``: "python", "django", "both" (what is installed of the
    two; "auto" is the same but falls back when neither is) or "fallback". Raises
    SourceMissing when a named package is not installed."""
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r} (expected one of {', '.join(SOURCES)})")
    found = {"python": sources.python_docs(doc_root), "django": sources.django_docs(doc_root)}
    if source == "fallback" or (source == "auto" and not any(found.values())):
        collection = _fallback()
        if source == "auto":
            collection.notes.append(missing_packages_message())
        return collection
    wanted = ["python", "django"] if source in ("both", "auto") else [source]
    if source != "auto":
        missing = [name for name in wanted if found[name] is None]
        if missing:
            packages = {"python": PYTHON_PACKAGE, "django": DJANGO_PACKAGE}
            names = " ".join(packages[name] for name in missing)
            raise SourceMissing(
                f"{' and '.join(missing)} documentation not found under {doc_root}: install "
                f"it with apt-get install --no-install-recommends {names}, or choose "
                "--source fallback"
            )
    collection = Collection([], [], [])
    for name in wanted:
        doc = found[name]
        if doc is None:
            packages = {"python": PYTHON_PACKAGE, "django": DJANGO_PACKAGE}
            collection.notes.append(f"{packages[name]} is not installed: its part is left out.")
            continue
        passages, topics = _from_docs(doc)
        collection.sources.append(f"{doc.project} {doc.version} ({doc.package}, {doc.licence})")
        collection.passages += passages
        collection.topics += topics
    return collection


def _from_docs(doc: DocSource) -> tuple[list[Passage], list[Topic]]:
    sections: list[Section] = []
    for page, file in doc.pages():
        sections += read_sections(file.read_text(encoding="utf-8", errors="replace"), page)
    titles: dict[str, str] = {}
    for section in sections:
        titles.setdefault(section.page, section.heading)
    passages = split_passages(
        sections,
        docno=lambda s, part: _docno(doc.prefix, s, part),
        url=lambda s: doc.url(s.page, s.anchor),
        page_title=lambda s: titles.get(s.page, s.page),
    )
    topics = faq_topics(
        sections,
        passages,
        prefix=doc.prefix,
        project=doc.project,
        version=doc.version,
        page_titles=titles,
    )
    return passages, topics


def _docno(prefix: str, section: Section, part: int) -> str:
    docno = f"{prefix}:{section.page}#{section.anchor}"
    return docno if part == 1 else f"{docno}~{part}"


def _fallback() -> Collection:
    sections = fallback.fallback_sections()
    titles: dict[str, str] = {}
    for section in sections:
        titles.setdefault(section.page, section.heading)
    passages = split_passages(
        sections,
        docno=lambda s, part: _docno("pydoc", s, part),
        url=lambda s: fallback.fallback_url(s.page),
        page_title=lambda s: titles.get(s.page, s.page),
    )
    topics = fallback.fallback_topics(sections, passages)
    return Collection(
        [f"pydoc_data.topics of Python {fallback.version()} (PSF-2.0)"], passages, topics
    )
