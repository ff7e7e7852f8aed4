"""The background work evaluation's services start, without importing evaluation.tasks
(which imports the services: a loop). As annotation.background does: the services ask for a
task by name here, and evaluation.tasks registers each under its name when it loads
(EvaluationConfig.ready imports it)."""

from __future__ import annotations

from typing import Any

SCHEDULE_FIRING = "schedule_firing"

_tasks: dict[str, Any] = {}


def register_background(**tasks: Any) -> None:
    _tasks.update(tasks)


def background(name: str) -> Any:
    """The task registered as ``name``."""
    try:
        return _tasks[name]
    except KeyError:
        raise RuntimeError(
            f"No background task registered as {name!r}: is 'evaluation' in INSTALLED_APPS "
            "(EvaluationConfig.ready imports evaluation.tasks, which registers them)?"
        ) from None
