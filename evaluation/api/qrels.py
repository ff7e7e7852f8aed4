"""Qrels versions: read by every logged-in user, imported from TREC files by leads and
engineers, downloaded as TREC text (graded, or binary at a relevance threshold), and
compared with another version (added, removed and changed grades)."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response

from accounts.models import Team
from accounts.permissions import (
    IsLead,
    IsLeadOrEngineer,
    RolePermissionsMixin,
    team_field,
    team_for,
)
from common import text_limits
from common.uploads import max_upload_bytes
from evaluation import services, tasks
from evaluation.access import READERS, owns_qrels, readable_qrels
from evaluation.api.common import (
    MESSAGES,
    UPLOAD_REFUSED,
    QueryParameters,
    created,
    trec_errors,
)
from evaluation.models import QrelsVersion
from evaluation.services.binary_qrels import binarise, binary_threshold
from evaluation.trec import TrecFormatError
from jobs.api import JobSerializer, accepted
from jobs.services import drop_staged, stage_upload, start_job
from jobs.services.limits import TooLargeForRequest, sync_write_limit


class QrelsSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:qrels-detail")
    download = serializers.HyperlinkedIdentityField(view_name="api:qrels-download")
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )
    team = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="The team it belongs to (its slug)."
    )
    shared_with = serializers.SerializerMethodField(
        help_text="The other teams that may read it (slugs), shown to its own team's leads."
    )

    class Meta:
        model = QrelsVersion
        fields = [
            "id",
            "url",
            "download",
            "name",
            "version",
            "label",
            "description",
            "source",
            "original_filename",
            "checksum",
            "topic_count",
            "judgment_count",
            "team",
            "shared_with",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields

    def get_shared_with(self, qrels) -> list[str]:
        request = self.context.get("request")
        if request is None or not owns_qrels(request.user, qrels):
            return []
        return sorted(team.slug for team in qrels.shared_with.all())


class QrelsShareSerializer(serializers.Serializer):
    teams = serializers.ListField(
        child=serializers.SlugField(max_length=50),
        max_length=100,
        help_text="Exactly the other teams (slugs) that may read this version; [] shares it "
        "with none.",
    )

    def validate_teams(self, slugs):
        found = {team.slug: team for team in Team.objects.filter(slug__in=slugs)}
        unknown = sorted(set(slugs) - found.keys())
        if unknown:
            raise ValidationError(MESSAGES["unknown_teams"].format(teams=", ".join(unknown)))
        return list(found.values())


class QrelsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A TREC qrels file (qid iteration docno grade), gzip ok."
    )
    name = serializers.SlugField(
        max_length=100,
        error_messages={"invalid": MESSAGES["qrels_name"]},
        help_text="The qrels name; the upload becomes its next version.",
    )
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=text_limits.DESCRIPTION
    )
    team = team_field()


class DownloadParameters(QueryParameters):
    binary = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Grades as 0/1: 1 where the grade is at least the relevance threshold.",
    )
    threshold = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=32767,
        help_text=(
            "With binary: the lowest relevant grade. Default: the threshold frozen when a "
            "campaign published the version, else 1."
        ),
    )


class QrelsBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    label = serializers.CharField()


class QrelsGradeSerializer(serializers.Serializer):
    qid = serializers.CharField()
    docno = serializers.CharField()
    grade = serializers.IntegerField()


class QrelsChangeSerializer(serializers.Serializer):
    qid = serializers.CharField()
    docno = serializers.CharField()
    old_grade = serializers.IntegerField()
    new_grade = serializers.IntegerField()


class QrelsDiffSerializer(serializers.Serializer):
    old = QrelsBriefSerializer()
    new = QrelsBriefSerializer()
    added = QrelsGradeSerializer(many=True, help_text="In new only.")
    removed = QrelsGradeSerializer(many=True, help_text="In old only.")
    changed = QrelsChangeSerializer(many=True, help_text="In both, with another grade.")
    unchanged = serializers.IntegerField(help_text="Pairs with the same grade in both.")


def _import_as_job(request, data: dict, team):
    """A qrels file of more grades than a request may write: staged and imported by a job."""
    upload = data["file"]
    staged = stage_upload(upload, prefix="qrels")
    try:
        job = start_job(
            kind="evaluation.import_qrels",
            title=f"Import qrels {upload.name} as {data['name']}",
            user=request.user,
            task=tasks.import_qrels_task,
            staged=staged,
            filename=upload.name,
            name=data["name"],
            description=data["description"],
            team=team.pk,
        )
    except BaseException:
        drop_staged(staged)  # no job will read it
        raise
    return accepted(job, request)


class PlainTextRenderer(BaseRenderer):
    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        # Only errors reach this renderer (the download itself is an HttpResponse).
        if isinstance(data, dict) and "detail" in data:
            data = data["detail"]
        return str(data).encode()


@extend_schema_view(
    list=extend_schema(summary="Qrels versions"),
    retrieve=extend_schema(summary="One qrels version"),
)
class QrelsViewSet(
    RolePermissionsMixin,
    mixins.CreateModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """Published qrels versions: readable by every logged-in user (evaluation/access.py:
    those of their teams, those shared with them, and for judges those of campaigns closed
    for them); leads and engineers import TREC qrels files (all or nothing) into a team of
    theirs; a lead of its team shares a version read-only with other teams."""

    queryset = QrelsVersion.objects.select_related("created_by", "team").prefetch_related(
        "shared_with"
    )
    serializer_class = QrelsSerializer

    def get_queryset(self):
        """Only the versions the user may read (evaluation/access.py): others are a 404."""
        return readable_qrels(self.request.user, super().get_queryset())

    lookup_value_converter = "int"
    action_permissions = {"create": [IsLeadOrEngineer], "share": [IsLead]}
    upload_actions = frozenset({"create"})

    @extend_schema(
        summary="Import a TREC qrels file as the next version of a name (a job when it holds "
        "more than SYNC_WRITE_ROWS grades: 202 with the job to poll)",
        request={"multipart/form-data": QrelsUploadSerializer},
        responses={
            201: QrelsSerializer,
            202: JobSerializer,
            400: UPLOAD_REFUSED,
        },
    )
    def create(self, request, *args, **kwargs):
        upload = QrelsUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        team = team_for(request.user, data.get("team"), *READERS)
        try:
            qrels = services.import_qrels(
                source=data["file"],
                filename=data["file"].name,
                name=data["name"],
                description=data["description"],
                user=request.user,
                max_bytes=max_upload_bytes(),
                max_rows=sync_write_limit(),
                team=team.pk,
            )
        except TrecFormatError as error:
            return trec_errors(error)
        except TooLargeForRequest:
            return _import_as_job(request, data, team)
        except services.ImportRejected as rejected:
            raise ValidationError({"detail": str(rejected)}) from None
        body = QrelsSerializer(qrels, context=self.get_serializer_context()).data
        return created(body, request, "api:qrels-detail", qrels.pk)

    @extend_schema(
        summary="The qrels version as a TREC qrels file, graded or binary",
        parameters=[DownloadParameters],
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    @action(detail=True, renderer_classes=[JSONRenderer, PlainTextRenderer])
    def download(self, request, pk=None):
        qrels = self.get_object()
        query = DownloadParameters.read(request)
        frame = services.load_qrels_frame(qrels)
        filename = f"{qrels.name}-v{qrels.version}"
        if query["binary"]:
            threshold = binary_threshold(qrels, query.get("threshold"))
            frame = binarise(frame, threshold)
            filename += f"-binary-at-{threshold}"
        body = services.qrels_to_trec_bytes(frame)
        response = HttpResponse(body, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}.qrels"'
        return response

    @extend_schema(
        summary="What changed from another version (other) to this one",
        responses=QrelsDiffSerializer,
    )
    @action(detail=True, url_path="diff/<int:other>")
    def diff(self, request, pk=None, other=None):
        new = self.get_object()
        old = get_object_or_404(self.get_queryset(), pk=other)
        return Response(QrelsDiffSerializer(services.diff_data(old, new)).data)

    @extend_schema(
        summary="Share this version read-only with other teams (a lead of its team)",
        request=QrelsShareSerializer,
        responses=QrelsSerializer,
    )
    @action(detail=True, methods=["put"], url_path="sharing")
    def share(self, request, pk=None):
        qrels = self.get_object()
        if not owns_qrels(request.user, qrels):
            # Readable here (shared, or a judge's), but not theirs to share: like every
            # lead-only action on what is not theirs, nothing to find.
            raise Http404(MESSAGES["not_your_qrels"])
        form = QrelsShareSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        services.share_qrels(qrels=qrels, teams=form.validated_data["teams"])
        qrels = self.get_queryset().get(pk=qrels.pk)
        return Response(QrelsSerializer(qrels, context=self.get_serializer_context()).data)
