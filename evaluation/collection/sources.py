"""Where the documentation is installed, which pages are read, and their public addresses.

Debian's packages install Sphinx HTML: ``python3.X-doc`` under /usr/share/doc/python3.X/html
(PSF licence) and ``python-django-doc`` under /usr/share/doc/python-django-doc/html
(BSD-3-Clause). Nothing of them is copied into this repository: they are read where
installed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DJANGO_PACKAGE",
    "PYTHON_PACKAGE",
    "DocSource",
    "django_docs",
    "python_docs",
]

PYTHON_PACKAGE = "python3.11-doc"
DJANGO_PACKAGE = "python-django-doc"
DOC_ROOT = Path("/usr/share/doc")

# The parts of each manual that are read. Python's library reference (317 pages, 740,000
# words) and both projects' release notes are left out: reading them would more than double
# the build time (about 20 s more on a 2-core machine) for passages no topic asks about.
PYTHON_PARTS = ("faq", "tutorial", "howto", "reference", "using", "extending")
DJANGO_SKIPPED = ("releases", "_modules", "_static", "_images", "_sources", "_downloads")
DJANGO_TOP_PAGES = ("glossary",)


@dataclass(frozen=True)
class DocSource:
    name: str  # "python" or "django"
    project: str  # "Python" or "Django"
    version: str  # major.minor, as in the public address
    root: Path  # the installed html/ folder
    prefix: str  # of docnos and qids: "py" or "dj"
    licence: str
    package: str

    def pages(self) -> Iterator[tuple[str, Path]]:
        """(page, file) of every page read, in path order; ``page`` is the path without
        .html."""
        for file in sorted(self.root.rglob("*.html")):
            page = file.relative_to(self.root).with_suffix("").as_posix()
            if self._reads(page):
                yield page, file

    def _reads(self, page: str) -> bool:
        top, _, rest = page.partition("/")
        if self.name == "python":
            return bool(rest) and top in PYTHON_PARTS
        if not rest:
            return top in DJANGO_TOP_PAGES
        return top not in DJANGO_SKIPPED

    def url(self, page: str, anchor: str) -> str:
        """The public address of ``page``'s section ``anchor``."""
        fragment = f"#{anchor}" if anchor else ""
        if self.name == "python":
            return f"https://docs.python.org/{self.version}/{page}.html{fragment}"
        path = page.removesuffix("index").rstrip("/")
        path = f"{path}/" if path else ""
        return f"https://docs.djangoproject.com/en/{self.version}/{path}{fragment}"


def python_docs(doc_root: Path = DOC_ROOT) -> DocSource | None:
    """The newest installed python3.X-doc with its FAQ, or None."""
    found = []
    for html in doc_root.glob("python3.*/html"):
        match = re.fullmatch(r"python(3\.\d+)", html.parent.name)
        if match and (html / "faq" / "programming.html").is_file():
            found.append((tuple(int(n) for n in match.group(1).split(".")), match.group(1), html))
    if not found:
        return None
    _, version, html = max(found)
    return DocSource("python", "Python", version, html, "py", "PSF-2.0", f"python{version}-doc")


def django_docs(doc_root: Path = DOC_ROOT) -> DocSource | None:
    """The installed python-django-doc, or None. Its version is read from its index page's
    title ("Django 3.2.25 documentation")."""
    html = doc_root / "python-django-doc" / "html"
    index = html / "index.html"
    if not (html / "faq" / "general.html").is_file() or not index.is_file():
        return None
    head = index.read_text(encoding="utf-8", errors="replace")[:4000]
    match = re.search(r"Django (\d+\.\d+)(?:\.\d+)? documentation", head)
    if not match:
        return None
    return DocSource("django", "Django", match.group(1), html, "dj", "BSD-3-Clause", DJANGO_PACKAGE)
