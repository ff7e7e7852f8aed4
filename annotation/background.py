"""The background work the services start, without importing annotation.tasks.

annotation.tasks runs the services in the background, so it imports them; a service that
queues that work (a refresh after a grade, a new pool order, a machine judge's run) would
import tasks back, a loop (DESIGN.md). Instead the services ask for the work by name here,
and annotation.tasks registers each task under its name when it loads
(AnnotationConfig.ready imports it), as evaluation.judging does for evaluation -> annotation.
"""

from __future__ import annotations

from common.background import TaskRegistry

REFRESH_AGREEMENT = "refresh_agreement"
REORDER_POOL = "reorder_pool"
REFRESH_LIVE_BOARD = "refresh_live_board"
MACHINE_JUDGE = "machine_judge"
GULLIBILITY_GATE = "gullibility_gate"

_registry = TaskRegistry("annotation", "AnnotationConfig")
register_background = _registry.register
background = _registry.get
