"""No import loop between the project's modules, counting imports made inside functions too.

A deferred import (``def f(): from x import y``) lets a loop load, but the loop is still
there: the two modules can only be understood, tested and moved together. Where a lower
layer must reach a higher one, it goes through a small port that the higher layer fills in
(``evaluation.judging`` for evaluation -> annotation, ``annotation.background`` for the
services -> tasks direction).

The graph is read from the source (AST), one node per module: ``from a.b import c`` is an
arrow to ``a.b.c`` when that is a module, else to ``a.b``. Python's implicit import of a
parent package is not an arrow: a package's ``__init__`` that re-exports its submodules
would otherwise form a loop with each of them.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("accounts", "annotation", "common", "config", "evaluation", "jobs")


def module_files(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "migrations" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, anywhere in its body."""

    def target(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        arrows = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found = [target(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else target(base)
                    for alias in node.names
                ]
            else:
                continue
            arrows.update(f for f in found if f and f != name)
        graph[name] = arrows
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = 0

    def visit(start):
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    arrows = [f"    {a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return f"  {len(component)} modules:\n" + "\n".join(arrows)


def test_no_import_loop_even_inside_functions():
    graph = import_graph(module_files())
    found = cycles(graph)
    assert not found, (
        "import loops (each arrow an import somewhere in the first module, a function's body "
        "included). Break each with a port the upper layer fills in, or move the shared part "
        "down:\n" + "\n".join(describe(c, graph) for c in found)
    )


def test_the_check_sees_a_loop_made_by_an_import_inside_a_function(tmp_path):
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "services.py").write_text("def go():\n    from app.tasks import job\n")
    (package / "tasks.py").write_text("from app import services\n\njob = services.go\n")
    (package / "other.py").write_text("from .services import go\n")
    graph = import_graph(module_files(tmp_path, ["app"]))
    assert graph["app.other"] == {"app.services"}
    assert cycles(graph) == [["app.services", "app.tasks"]]


def test_config_is_the_roof_and_common_the_cellar():
    """config/ (settings, URLs, middleware) sits above the apps and no app imports it;
    common/ sits below them and imports none of them (README, Development)."""
    graph = import_graph(module_files())
    apps = ("accounts", "annotation", "evaluation", "jobs")
    up = sorted(
        f"{a} -> {b}"
        for a, bs in graph.items()
        if a.split(".")[0] in (*apps, "common")
        for b in bs
        if b.split(".")[0] == "config"
    )
    down = sorted(
        f"{a} -> {b}"
        for a, bs in graph.items()
        if a.split(".")[0] == "common"
        for b in bs
        if b.split(".")[0] in apps
    )
    assert not up, f"the apps reach up into config/ (move what they need to common/): {up}"
    assert not down, f"common/ reaches into an app (move it into that app): {down}"
