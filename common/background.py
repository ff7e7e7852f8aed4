"""A registry of background tasks by name, so that an app's services can start its tasks
without importing the tasks module (which imports the services: a loop, DESIGN.md). Each app
keeps one (annotation/background.py, evaluation/background.py) with the names its services
ask for; its tasks module registers each task under its name when it loads (the app
config's ready() imports it). Pure: no Django."""

from __future__ import annotations

from typing import Any


class TaskRegistry:
    def __init__(self, app: str, config: str) -> None:
        self.app = app
        self.config = config  # the AppConfig whose ready() imports the tasks module
        self._tasks: dict[str, Any] = {}

    def register(self, **tasks: Any) -> None:
        """Register tasks by name (one of the app's names)."""
        self._tasks.update(tasks)

    def get(self, name: str) -> Any:
        """The task registered as ``name``: call its ``enqueue(**params)``."""
        try:
            return self._tasks[name]
        except KeyError:
            raise RuntimeError(
                f"No background task registered as {name!r}: is {self.app!r} in "
                f"INSTALLED_APPS ({self.config}.ready imports {self.app}.tasks, which "
                "registers them)?"
            ) from None
