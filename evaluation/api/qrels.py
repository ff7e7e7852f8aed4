"""Qrels versions: read by every logged-in user, imported from TREC files by leads and
engineers, downloaded as TREC text."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer, JSONRenderer

from config.permissions import IsLeadOrEngineer, RolePermissionsMixin
from evaluation import services, tasks
from evaluation.api.common import MESSAGES, TrecErrorsSerializer, created, trec_errors
from evaluation.models import QrelsVersion
from evaluation.trec import TrecFormatError


class QrelsSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:qrels-detail")
    download = serializers.HyperlinkedIdentityField(view_name="api:qrels-download")
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="A username."
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
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


class QrelsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A TREC qrels file (qid iteration docno grade), gzip ok."
    )
    name = serializers.SlugField(
        max_length=100,
        error_messages={"invalid": MESSAGES["qrels_name"]},
        help_text="The qrels name; the upload becomes its next version.",
    )
    description = serializers.CharField(required=False, allow_blank=True, default="")


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
    """Published qrels versions: readable by every logged-in user; leads and engineers
    import TREC qrels files (all or nothing)."""

    queryset = QrelsVersion.objects.select_related("created_by")
    serializer_class = QrelsSerializer
    lookup_value_converter = "int"
    action_permissions = {"create": [IsLeadOrEngineer]}
    upload_actions = frozenset({"create"})

    @extend_schema(
        summary="Import a TREC qrels file as the next version of a name",
        request={"multipart/form-data": QrelsUploadSerializer},
        responses={
            201: QrelsSerializer,
            400: OpenApiResponse(TrecErrorsSerializer, description="The file was refused."),
        },
    )
    def create(self, request, *args, **kwargs):
        upload = QrelsUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        try:
            qrels = services.import_qrels(
                source=data["file"],
                filename=data["file"].name,
                name=data["name"],
                description=data["description"],
                user=request.user,
                max_bytes=tasks.max_upload_bytes(),
            )
        except TrecFormatError as error:
            return trec_errors(error)
        body = QrelsSerializer(qrels, context=self.get_serializer_context()).data
        return created(body, request, "api:qrels-detail", qrels.pk)

    @extend_schema(
        summary="The qrels version as a TREC qrels file",
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    @action(detail=True, renderer_classes=[JSONRenderer, PlainTextRenderer])
    def download(self, request, pk=None):
        qrels = self.get_object()
        body = services.qrels_to_trec_bytes(services.load_qrels_frame(qrels))
        response = HttpResponse(body, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{qrels.name}-v{qrels.version}.qrels"'
        )
        return response
