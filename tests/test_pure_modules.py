"""The domain lives in plain Python modules that import no Django (DESIGN.md, Layout).

Turned around from a hand-kept list of pure modules: the Django rooms of an app are named
here, and every other module under the apps must be pure. A module is in a room when one
of its path parts below the app (a folder or the file's own name) is a room's name. Pure
means: no import of Django or DRF anywhere in the module, a function's body included, and
no import of a project module that is not pure itself (so a pure module stays pure however
deep the chain), which the AST scan decides for common/ and config/ too. A last check
imports every pure module in one fresh interpreter and asks whether Django got loaded,
which also catches a third-party library that brings Django in.
"""

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("accounts", "annotation", "evaluation", "jobs")
SCANNED = (*APPS, "common", "config")
DJANGO = {"django", "rest_framework", "drf_spectacular", "django_tasks_db"}

# The rooms where Django belongs. The usual Django modules, and:
# access (who may see what: querysets of the models), backup (a campaign's export and
# restore, and the instance's, read and write the database), dashboards (evaluation's
# dashboard use cases, which query the models), and accounts' hooks into Django's auth
# (authentication, permissions, checks, signals, schema, context_processors).
ROOMS = {
    "models",
    "views",
    "api",
    "services",
    "tasks",
    "admin",
    "migrations",
    "management",
    "templatetags",
    "forms",
    "urls",
    "apps",
    "access",
    "backup",
    "dashboards",
    "authentication",
    "checks",
    "signals",
    "schema",
    "context_processors",
    "permissions",
}


def dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    dotted(path): path
    for package in SCANNED
    for path in sorted((ROOT / package).rglob("*.py"))
    if "migrations" not in path.parts
}


def in_room(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in APPS and bool(ROOMS & set(parts[1:]))


def pure_modules() -> list[str]:
    return [m for m in MODULES if m.split(".")[0] in APPS and not in_room(m)]


def _project_module(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports(module: str) -> tuple[set[str], set[str]]:
    """(Django packages, project modules) ``module`` imports anywhere in its body."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    django, project = set(), set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in DJANGO:
                django.add(name.split(".")[0])
            elif (found := _project_module(name)) and found != module:
                project.add(found)
    # Importing a module runs its packages' __init__ first.
    parent = module.rpartition(".")[0]
    if parent in MODULES:
        project.add(parent)
    return django, project


def django_chain(module: str, seen: frozenset = frozenset()) -> list[str] | None:
    """How ``module`` reaches Django (module, ..., the package), or None when it is pure."""
    django, project = imports(module)
    if django:
        return [module, sorted(django)[0]]
    for other in sorted(project - seen - {module}):
        chain = django_chain(other, seen | {module})
        if chain:
            return [module, *chain]
    return None


@pytest.mark.parametrize("module", pure_modules())
def test_module_outside_the_django_rooms_imports_no_django(module):
    chain = django_chain(module)
    assert chain is None, (
        f"{module} is outside the Django rooms ({', '.join(sorted(ROOMS))}) but reaches "
        f"Django: {' -> '.join(chain)}. Move the Django part into a room (services/, "
        "views/, api/, a management command...) or move the module into one."
    )


PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
    loaded = sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework'})
    if loaded:
        print(name, ','.join(loaded))
        break
"""


def test_every_pure_module_loads_without_django_in_a_fresh_interpreter():
    modules = [*pure_modules(), "tests.llm_server", "tests.search_servers"]
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", (
        f"importing {result.stdout.strip()} (first module, then what it loaded): pure "
        "modules must not import Django, not even through a library."
    )


def test_the_rooms_hold_the_django_modules_and_the_domain_stays_outside():
    pure = set(pure_modules())
    for module in (
        "evaluation.trec",
        "evaluation.measures",
        "evaluation.analysis.significance",
        "evaluation.cli.main",
        "annotation.agreement",
        "annotation.pooling",
        "annotation.adjudication",
        "annotation.strategies",
    ):
        assert module in pure, f"{module} should be outside the Django rooms"
    for module in ("evaluation.models", "annotation.services.judging", "jobs.services.limits"):
        assert module not in pure


def test_the_check_follows_an_import_inside_a_function_and_through_a_chain(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef f():\n    from django.db import models\n")
    found = {
        alias.name if isinstance(node, ast.Import) else node.module
        for node in ast.walk(ast.parse(module.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert "django.db" in found
    assert django_chain("evaluation.services.binary_qrels") is not None
