from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from config import metrics

        metrics.connect_signals()  # grades as a Prometheus counter
