"""Dependencies between the apps go one way (DESIGN.md, README Development): annotation
builds pools from evaluation's runs, so no evaluation module imports annotation, neither when
it loads nor inside a function. Where evaluation needs judging's data (a lead's campaigns,
sending pairs to a pool, document and topic texts) it asks evaluation.judging, which
annotation fills in from its AppConfig.ready."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EVALUATION = ROOT / "evaluation"


def evaluation_modules():
    for path in sorted(EVALUATION.rglob("*.py")):
        if path.relative_to(EVALUATION).parts[0] != "migrations":
            yield path


def imports(path: Path) -> set[str]:
    """Modules ``path`` imports anywhere: at load time or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", list(evaluation_modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_evaluation_does_not_import_annotation(path):
    wrong = {name for name in imports(path) if name.split(".")[0] == "annotation"}
    assert not wrong, (
        f"{path.relative_to(ROOT)} imports {sorted(wrong)}: ask evaluation.judging instead "
        "(annotation registers its answers in AnnotationConfig.ready)"
    )


def test_the_check_sees_an_import_of_annotation_in_a_function(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef f():\n    from annotation.models import Campaign\n")
    assert "annotation.models" in imports(module)


def test_annotation_registers_its_judging_link():
    from annotation.services.evaluation_link import LINK
    from evaluation.judging import judging

    assert judging() is LINK


def test_the_old_module_names_are_gone():
    for old in ("services.py", "views.py", "views_dashboards.py", "views_upload.py"):
        assert not (EVALUATION / old).exists()
    assert not (EVALUATION / "scoring_tasks.py").exists()
    assert not (EVALUATION / "management" / "commands" / "demo.py").exists()
