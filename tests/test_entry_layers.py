"""The entry layers (pages, the API, commands, background tasks) call the services and the
pure modules, never one another's code: a rule a view and an endpoint share lives below both,
so that each layer only translates and delegates (STYLE.md, HackSoftware's styleguide).
Pages and endpoints may start a task (they hand its function to a job), nothing else; and
nothing below the entry layers imports them (the services start tasks through
annotation.background)."""

from tests.test_import_cycles import import_graph, module_files

ENTRY = ("views", "api", "management", "tasks")
# The apps' own wiring, which names the entry points it mounts or starts.
WIRING = {"urls", "apps"}
# create_campaign checks its input with the API's serializer, so a campaign made on the
# command line meets the very rules and words the API's does: the serializer (DRF fields, the
# OpenAPI schema's scale) is the one home of those input rules, and moving it below the entry
# layers would bring DRF into the services.
ALLOWED = {
    ("annotation.management.commands.create_campaign", "annotation.api.campaigns"),
    ("annotation.management.commands.create_campaign", "annotation.api.common"),
}


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "config":
        return "roof"
    for name in ENTRY:
        if name in parts[1:]:
            return name
    return "wiring" if parts[-1] in WIRING else "below"


def test_entry_layers_do_not_lean_on_one_another():
    graph = import_graph(module_files())
    wrong = []
    for module, imported in sorted(graph.items()):
        mine = layer(module)
        for other in sorted(imported):
            theirs = layer(other)
            if theirs not in ENTRY or theirs == mine or mine in ("roof", "wiring"):
                continue
            if theirs == "tasks" and mine in ("views", "api"):
                continue
            if (module, other) not in ALLOWED:
                wrong.append(f"{module} ({mine}) imports {other} ({theirs})")
    assert not wrong, (
        "an entry layer leans on another: move the shared part into services/ or a pure "
        "module and call it from both:\n  " + "\n  ".join(wrong)
    )


def test_the_layers_are_told_apart():
    assert layer("evaluation.views.upload") == "views"
    assert layer("evaluation.management.commands.evaluate") == "management"
    assert layer("annotation.services.campaign_files") == "below"
    assert layer("evaluation.cli.gate") == "below"
    assert layer("annotation.urls") == "wiring"


def test_a_command_does_not_import_another_command():
    """What commands share lives beside them (annotation/management/lookups.py,
    common/commands.py), not in one command's module that the others import."""
    graph = import_graph(module_files())
    wrong = [
        f"{module} imports {other}"
        for module, imported in sorted(graph.items())
        if ".management.commands." in module
        for other in sorted(imported)
        if ".management.commands." in other and other != module
    ]
    assert not wrong, "\n".join(wrong)
