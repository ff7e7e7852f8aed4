"""The background work evaluation's services start, without importing evaluation.tasks
(which imports the services: a loop). As annotation.background does: the services ask for a
task by name here, and evaluation.tasks registers each under its name when it loads
(EvaluationConfig.ready imports it)."""

from __future__ import annotations

from common.background import TaskRegistry

SCHEDULE_FIRING = "schedule_firing"

_registry = TaskRegistry("evaluation", "EvaluationConfig")
register_background = _registry.register
background = _registry.get
