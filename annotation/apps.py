from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from annotation import signals

        signals.connect_signals()  # grades as a Prometheus counter

        from annotation.services.evaluation_link import LINK
        from evaluation.judging import register_judging

        register_judging(LINK)  # evaluation asks annotation through it (DESIGN.md: no cycle)

        # The services start background work through annotation.background; tasks fills it in.
        from annotation import tasks  # noqa: F401
