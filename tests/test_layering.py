"""Dependencies between the apps go one way (README, Development): annotation builds pools
from evaluation's runs, so evaluation's core imports no annotation module when it loads.
Its pages and API (evaluation/views/, evaluation/api/) may: they offer a lead's campaigns."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EVALUATION = ROOT / "evaluation"
PAGES_AND_API = {"views", "api"}


def core_modules():
    for path in sorted(EVALUATION.rglob("*.py")):
        parts = path.relative_to(EVALUATION).parts
        if parts[0] in PAGES_AND_API or parts[0] == "migrations":
            continue
        yield path


def top_level_imports(path: Path) -> set[str]:
    """Modules imported when ``path`` loads: its top-level statements, not function bodies."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", list(core_modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_evaluation_core_does_not_import_annotation(path):
    imported = top_level_imports(path)
    assert not {name for name in imported if name.split(".")[0] == "annotation"}


def test_the_check_sees_an_import_of_annotation(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom annotation.models import Campaign\n")
    assert "annotation.models" in top_level_imports(module)


def test_the_old_module_names_are_gone():
    for old in ("services.py", "views.py", "views_dashboards.py", "views_upload.py"):
        assert not (EVALUATION / old).exists()
    assert not (EVALUATION / "scoring_tasks.py").exists()
    assert not (EVALUATION / "management" / "commands" / "demo.py").exists()
