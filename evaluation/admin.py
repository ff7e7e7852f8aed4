from django.contrib import admin

from evaluation.models import Evaluation, QrelsVersion, Run, System


@admin.register(QrelsVersion)
class QrelsVersionAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "source", "topic_count", "judgment_count", "created_at"]
    readonly_fields = [f.name for f in QrelsVersion._meta.fields]

    def has_change_permission(self, request, obj=None):
        return False  # published qrels are immutable


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "system", "line_count", "topic_count", "uploaded_at"]
    list_select_related = ["system"]
    readonly_fields = [f.name for f in Run._meta.fields]

    def has_add_permission(self, request):
        return False  # runs come in through import_run, which validates the file


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ["run", "qrels", "topic_count", "created_at"]
    list_select_related = ["run__system", "qrels"]
    readonly_fields = [f.name for f in Evaluation._meta.fields]
