"""Small real samples of the installed documentation: a doc root in a temporary folder whose
pages are links to a few installed pages (nothing is copied, into the repository or anywhere).
Tests that need them skip, saying what to install, where the packages are missing."""

from pathlib import Path

import pytest

from evaluation.collection import sources

PYTHON_PAGES = ("faq/programming.html", "faq/design.html", "tutorial/controlflow.html")
DJANGO_PAGES = ("index.html", "faq/general.html", "faq/models.html", "topics/db/queries.html")


def installed_python() -> sources.DocSource | None:
    return sources.python_docs()


def installed_django() -> sources.DocSource | None:
    return sources.django_docs()


def need(doc: sources.DocSource | None, package: str) -> sources.DocSource:
    if doc is None:
        pytest.skip(f"{package} is not installed (apt-get install {package})")
    return doc


def need_python() -> sources.DocSource:
    return need(installed_python(), sources.PYTHON_PACKAGE)


def need_django() -> sources.DocSource:
    return need(installed_django(), sources.DJANGO_PACKAGE)


def _link(root: Path, target_root: Path, pages) -> None:
    for page in pages:
        link = root / page
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target_root / page)


def link_sample(folder: Path) -> Path:
    """/usr/share/doc in small, in ``folder``: a few pages of each installed package (skips
    the test when one is missing)."""
    python, django = need_python(), need_django()
    root = folder / "doc"
    _link(root / python.root.parent.name / "html", python.root, PYTHON_PAGES)
    _link(root / "python-django-doc" / "html", django.root, DJANGO_PAGES)
    return root


@pytest.fixture
def sample_doc_root(tmp_path) -> Path:
    return link_sample(tmp_path)
