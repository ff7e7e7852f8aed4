"""Admin pages for campaigns and what hangs off them. The rules (overlap, balanced
assignment, history) live in annotation/services.py, so the admin shows assignments and
judgments but does not let anyone create or edit them by hand."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from annotation.models import (
    Assignment,
    Campaign,
    CampaignJudge,
    Document,
    Judgment,
    JudgmentChange,
    MachineJudge,
    Pair,
    Topic,
)
from annotation.services import machine_judges


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class CampaignJudgeInline(admin.TabularInline):
    """Shown, not edited: judges join and leave through the lead's pages, which move their
    open work with them (annotation.services.add_judge / remove_judge)."""

    model = CampaignJudge
    extra = 0
    fields = readonly_fields = ["judge", "added_at"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "lead", "overlap", "relevance_threshold", "created_at"]
    list_select_related = ["lead"]
    search_fields = ["name", "description"]
    raw_id_fields = ["lead"]
    readonly_fields = ["seed", "created_at"]
    inlines = [CampaignJudgeInline]


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["qid", "query", "campaign"]
    list_select_related = ["campaign"]
    list_filter = ["campaign"]
    search_fields = ["qid", "query"]
    raw_id_fields = ["campaign"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["docno", "title", "campaign"]
    list_select_related = ["campaign"]
    list_filter = ["campaign"]
    search_fields = ["docno", "title"]
    raw_id_fields = ["campaign"]


@admin.register(Pair)
class PairAdmin(ReadOnlyAdmin):
    list_display = ["topic", "document", "source", "campaign", "added_at"]
    list_select_related = ["topic", "document", "campaign"]
    list_filter = ["source", "campaign"]
    search_fields = ["topic__qid", "document__docno"]


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ["pair", "judge", "slot", "position", "status", "created_at"]
    list_select_related = ["pair__topic", "pair__document", "judge"]
    list_filter = ["status", "pair__campaign"]
    search_fields = ["judge__username", "pair__topic__qid", "pair__document__docno"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["assignment", "grade", "skip_reason", "seconds", "updated_at"]
    list_select_related = [
        "assignment__pair__topic",
        "assignment__pair__document",
        "assignment__judge",
    ]
    list_filter = ["assignment__pair__campaign"]


@admin.register(JudgmentChange)
class JudgmentChangeAdmin(ReadOnlyAdmin):
    list_display = ["assignment", "action", "old_grade", "new_grade", "changed_by", "changed_at"]
    list_select_related = ["assignment__pair__topic", "assignment__pair__document", "changed_by"]
    list_filter = ["action"]


class MachineJudgeAdminForm(forms.ModelForm):
    """The key is typed, never shown: the field is empty on every visit and an empty field
    keeps the stored key (unless the base URL moves to another host). Saving goes through
    the service (services/machine_judges.py), which checks the URL, the variable's name and
    the key, and encrypts it."""

    api_key = forms.CharField(
        required=False,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored encrypted, never shown back; empty keeps the stored key.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")

    class Meta:
        model = MachineJudge
        fields = list(MachineJudge.ENDPOINT_FIELDS)

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        stored = MachineJudge.objects.get(pk=self.instance.pk)
        changes = {
            field: cleaned[field]
            for field in machine_judges.EDITABLE
            if field != "api_key" and field in cleaned
        }
        try:
            self._saved = machine_judges.update_machine_judge(
                machine=stored,
                api_key=cleaned.get("api_key", ""),
                clear_api_key=cleaned.get("clear_api_key", False),
                **changes,
            )
        except ValidationError as error:
            raise forms.ValidationError(error.messages) from None
        return cleaned

    # The change was saved by clean() through the service, inside the admin's transaction
    # (changeform_view is atomic): the form has no inlines that could still fail after it.
    def save(self, commit=True):
        self.save_m2m = lambda: None  # no many-to-many fields
        return self._saved


@admin.register(MachineJudge)
class MachineJudgeAdmin(admin.ModelAdmin):
    """Where a machine judge is served and its key. Its model, prompt and parameters are
    fixed once made (a new prompt version is a new judge): create judges on the lead's page,
    the API or ``manage.py run_machine_judge``."""

    form = MachineJudgeAdminForm
    list_display = ["judge", "model_name", "template_name", "template_version", "base_url"]
    readonly_fields = ["judge", *MachineJudge.FIXED_FIELDS, "created_by", "created_at"]

    def has_add_permission(self, request):
        return False
