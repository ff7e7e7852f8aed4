from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from config import metrics

        metrics.connect_signals()  # grades as a Prometheus counter

        from annotation.services.evaluation_link import LINK
        from evaluation.judging import register_judging

        register_judging(LINK)

        from annotation import tasks  # noqa: F401  (registers the services' background work)  # evaluation asks annotation through it (DESIGN.md: no cycle)
