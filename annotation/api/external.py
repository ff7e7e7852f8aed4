"""Judges who do not judge here, and the imports of their grades, for a campaign's lead:
``campaigns/<id>/external-judges/`` (outside people and machines, with their grade counts) and
``campaigns/<id>/judgment-imports/`` (upload a file of judgments made elsewhere; list the
imports with their provenance). Thin over annotation/services/imports.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Count
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation import tasks
from annotation.api.common import LedCampaignMixin, messages_of
from annotation.formats import describe_judgment_formats
from annotation.models import EXTERNAL_JUDGE_KINDS, ExternalJudge, ImportFormat, JudgmentImport
from annotation.services import campaign_files, imports
from evaluation.api.common import trec_errors
from evaluation.trec import TrecFormatError
from jobs.api import JobSerializer, accepted
from jobs.services.limits import TooLargeForRequest, sync_write_limit


class ExternalJudgeSerializer(serializers.ModelSerializer):
    label = serializers.CharField(read_only=True, help_text="kind:name, as reports show it.")
    grades = serializers.IntegerField(
        source="grade_count", read_only=True, help_text="Pairs this judge has graded."
    )

    class Meta:
        model = ExternalJudge
        fields = ["id", "kind", "name", "label", "description", "grades", "created_at"]
        read_only_fields = fields


class JudgmentImportSerializer(serializers.ModelSerializer):
    imported_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )
    mapping = serializers.DictField(child=serializers.IntegerField(), read_only=True)
    counts = serializers.DictField(child=serializers.IntegerField(), read_only=True)

    class Meta:
        model = JudgmentImport
        fields = [
            "id",
            "file_name",
            "sha256",
            "format",
            "judge_kind",
            "mapping",
            "counts",
            "imported_by",
            "imported_at",
        ]
        read_only_fields = fields


class JudgmentUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text=f"Plain or gzip, in one of the formats: {describe_judgment_formats()}."
    )
    format = serializers.ChoiceField(
        choices=ImportFormat.values, required=False, help_text="Detected when left out."
    )
    judge_kind = serializers.ChoiceField(
        choices=EXTERNAL_JUDGE_KINDS,
        required=False,
        help_text="The file's judges: outside people or machines (default: machines for "
        "UMBRELA, outside people otherwise).",
    )
    judge_name = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=150,
        help_text="The judge of a qrels file (required there), or of every grade of the file.",
    )
    mapping = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=5000,
        help_text="From the file's grades to the scale: '0:0,1:1,2:1,3:2,4:3' or "
        "'Perfect=3;Mostly Good=2;So-so=1;Bad=0'.",
    )
    add_missing_pairs = serializers.BooleanField(
        default=False, help_text="Add pairs missing from the pool instead of refusing them."
    )


class SkippedLineSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    why = serializers.CharField()


class ImportResultSerializer(serializers.Serializer):
    record = JudgmentImportSerializer(
        allow_null=True, help_text="The import's provenance; null when nothing changed."
    )
    added = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    pairs_added = serializers.IntegerField()
    judges_added = serializers.ListField(child=serializers.CharField())
    judges = serializers.ListField(child=serializers.CharField(), help_text="kind:name.")
    skipped = SkippedLineSerializer(many=True, help_text="Lines that hold no grade to import.")
    summary = serializers.CharField()


@extend_schema_view(list=extend_schema(summary="A campaign's outside and machine judges"))
class ExternalJudgeViewSet(
    RolePermissionsMixin, LedCampaignMixin, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """Outside people (grades imported, no login) and machines judging the campaign."""

    serializer_class = ExternalJudgeSerializer

    def get_queryset(self):
        if self._fake():
            return ExternalJudge.objects.none()
        return (
            ExternalJudge.objects.filter(campaign=self.campaign)
            .annotate(grade_count=Count("grades"))
            .order_by("kind", "name")
        )


@extend_schema_view(
    list=extend_schema(summary="Imports of judgments made elsewhere, with their provenance"),
    retrieve=extend_schema(summary="One import of judgments"),
)
class JudgmentImportViewSet(
    RolePermissionsMixin,
    LedCampaignMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = JudgmentImportSerializer
    lookup_value_converter = "int"
    upload_actions = frozenset({"create"})

    def get_queryset(self):
        if self._fake():
            return JudgmentImport.objects.none()
        return JudgmentImport.objects.filter(campaign=self.campaign).select_related("imported_by")

    @extend_schema(
        summary="Import judgments made elsewhere; all or nothing, idempotent",
        request={"multipart/form-data": JudgmentUploadSerializer},
        responses={
            201: ImportResultSerializer,
            200: ImportResultSerializer,
            202: JobSerializer,
        },
        description="201 when the file changed something; 200 with a null record when it "
        "changed nothing (the same file again). A bad file is a 400 listing file:line errors. "
        "A file of more grades than a request may write (SYNC_WRITE_ROWS) is imported by a "
        "job: 202 with the job to poll (its result holds the summary).",
    )
    def create(self, request, campaign_pk=None):
        form = JudgmentUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        upload = data["file"]
        choices = {
            "fmt": data.get("format"),
            "judge_kind": data.get("judge_kind"),
            "judge_name": data.get("judge_name", ""),
            "add_missing_pairs": data["add_missing_pairs"],
        }
        try:
            mapping = imports.parse_mapping(data.get("mapping", ""))
            result = imports.import_judgments(
                campaign=self.campaign,
                source=upload,
                file_name=upload.name,
                user=request.user,
                mapping=mapping,
                max_rows=sync_write_limit(),
                **choices,
            )
        except TrecFormatError as error:
            return trec_errors(error)
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        except TooLargeForRequest:
            job = campaign_files.start_import_job(
                campaign=self.campaign,
                upload=upload,
                user=request.user,
                what="judgments",
                task=tasks.import_judgments_job,
                mapping=mapping,
                **choices,
            )
            return accepted(job, request)
        body = {
            "record": result.record,
            "added": result.added,
            "changed": result.changed,
            "unchanged": result.unchanged,
            "pairs_added": result.pairs_added,
            "judges_added": result.judges_added,
            "judges": result.judges,
            "skipped": [{"line": line, "why": why} for line, why in result.skipped],
            "summary": result.summary(),
        }
        code = status.HTTP_201_CREATED if result.record else status.HTTP_200_OK
        return Response(ImportResultSerializer(body).data, status=code)
