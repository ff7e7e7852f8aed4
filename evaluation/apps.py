from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        # The services start background work by name (evaluation.background): loading the
        # tasks registers them. Schedules fire from the task worker's clock.
        from evaluation import tasks  # noqa: F401
        from evaluation.services import schedule_runs
        from jobs.services.clock import register_tick

        register_tick("schedules", schedule_runs.tick)
