"""A campaign's topics, documents and pool, for its lead: lists, file imports (as jobs),
pairs added by hand and depth-k pooling of stored runs (as a job)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import BooleanField, Case, Count, Q, When
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation import formats, services, tasks
from annotation.access import runs_for_pool
from annotation.api.common import (
    MAX_RUNS,
    MESSAGES,
    LedCampaignMixin,
    messages_of,
)
from annotation.models import Campaign, Document, Pair, PairSource, Topic
from annotation.services import campaign_files
from evaluation.analysis.pool_fairness import MAX_DEPTH
from evaluation.api.common import QueryParameters
from evaluation.models import Run
from jobs.api import JOB_STARTED, JobSerializer, accepted, started
from jobs.models import Job
from jobs.services import start_job
from jobs.services.limits import check_sync_write


class FileImportSerializer(serializers.Serializer):
    file = serializers.FileField()


class TopicImportSerializer(FileImportSerializer):
    format = serializers.ChoiceField(
        choices=list(formats.TOPIC_FORMATS),
        required=False,
        help_text="Detected from the file when left out.",
    )


class DocumentImportSerializer(FileImportSerializer):
    format = serializers.ChoiceField(
        choices=list(formats.DOCUMENT_FORMATS),
        required=False,
        help_text="Detected from the file when left out.",
    )


def start_import(request, campaign: Campaign, upload, *, what: str, task, **params) -> Job:
    return campaign_files.start_import_job(
        campaign=campaign, upload=upload, user=request.user, what=what, task=task, **params
    )


class TopicSerializer(serializers.ModelSerializer):
    pair_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Topic
        fields = ["id", "qid", "query", "description", "narrative", "pair_count"]
        read_only_fields = fields


@extend_schema_view(
    list=extend_schema(summary="A campaign's topics"),
    retrieve=extend_schema(summary="One topic of a campaign"),
)
class TopicViewSet(
    LedCampaignMixin, RolePermissionsMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet
):
    """A campaign's topics, for its lead; an upload imports more (a topic already there takes
    the file's query, description and narrative)."""

    serializer_class = TopicSerializer
    lookup_value_converter = "int"
    upload_actions = frozenset({"create"})

    def get_queryset(self):
        if self._fake():
            return Topic.objects.none()
        return self.campaign.topics.annotate(pair_count=Count("pairs")).order_by("qid")

    @extend_schema(
        summary="Import topics (TSV, JSONL or TREC topic file); a job does it",
        request={"multipart/form-data": TopicImportSerializer},
        responses=JOB_STARTED,
    )
    def create(self, request, *args, **kwargs):
        form = TopicImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        job = start_import(
            request,
            self.campaign,
            form.validated_data["file"],
            what="topics",
            task=tasks.import_topics_job,
            fmt=form.validated_data.get("format"),
        )
        return started(job, request)


class DocumentSerializer(serializers.ModelSerializer):
    has_text = serializers.BooleanField(source="with_text", read_only=True)
    url = serializers.CharField(read_only=True, help_text="Its address; empty when it has none.")

    class Meta:
        model = Document
        fields = ["id", "docno", "title", "url", "has_text"]
        read_only_fields = fields


class DocumentDetailSerializer(DocumentSerializer):
    class Meta(DocumentSerializer.Meta):
        fields = [*DocumentSerializer.Meta.fields, "text"]
        read_only_fields = fields


class DocumentFilter(QueryParameters):
    lacking_text = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="Only documents without text."
    )


@extend_schema_view(
    list=extend_schema(
        summary="A campaign's documents (without text)", parameters=[DocumentFilter]
    ),
    retrieve=extend_schema(summary="One document with its text"),
)
class DocumentViewSet(
    LedCampaignMixin, RolePermissionsMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet
):
    """A campaign's documents, for its lead; an upload imports more (and fills in the text of
    documents that pooling added without it)."""

    lookup_value_converter = "int"
    upload_actions = frozenset({"create"})

    def get_serializer_class(self):
        return DocumentDetailSerializer if self.action == "retrieve" else DocumentSerializer

    def get_queryset(self):
        if self._fake():
            return Document.objects.none()
        # Computed in SQL: the list leaves the (long) text out, and Document.has_text would
        # fetch it again row by row.
        no_text = Q(text="", title="")
        documents = self.campaign.documents.annotate(
            with_text=Case(When(no_text, then=False), default=True, output_field=BooleanField())
        ).order_by("docno")
        if self.action == "list":
            documents = documents.defer("text")
            lacking = DocumentFilter.read(self.request).get("lacking_text")
            if lacking is not None:
                documents = documents.filter(no_text if lacking else ~no_text)
        return documents

    @extend_schema(
        summary="Import documents (JSONL, CSV or TSV); a job does it",
        request={"multipart/form-data": DocumentImportSerializer},
        responses=JOB_STARTED,
    )
    def create(self, request, *args, **kwargs):
        form = DocumentImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        job = start_import(
            request,
            self.campaign,
            form.validated_data["file"],
            what="documents",
            task=tasks.import_documents_job,
            fmt=form.validated_data.get("format"),
        )
        return started(job, request)


class PairSerializer(serializers.ModelSerializer):
    qid = serializers.CharField(source="topic.qid", read_only=True)
    docno = serializers.CharField(source="document.docno", read_only=True)
    assigned = serializers.IntegerField(read_only=True, help_text="Judges given the pair.")

    class Meta:
        model = Pair
        fields = ["id", "qid", "docno", "source", "assigned", "added_at"]
        read_only_fields = fields


# \A…\Z, not ^…$: "$" also matches before a final newline.
ONE_WORD = r"\A\S+\Z"


class PairItemSerializer(serializers.Serializer):
    qid = serializers.RegexField(
        ONE_WORD,
        max_length=formats.MAX_QID_CHARS,
        error_messages={"invalid": MESSAGES["not_an_id"]},
    )
    docno = serializers.RegexField(
        ONE_WORD,
        max_length=formats.MAX_DOCNO_CHARS,
        error_messages={"invalid": MESSAGES["not_an_id"]},
    )


class PairsAddSerializer(serializers.Serializer):
    # At most SYNC_WRITE_ROWS pairs (jobs/services/limits.py), counted before they are validated.
    pairs = PairItemSerializer(many=True, allow_empty=False)
    source = serializers.ChoiceField(
        choices=[PairSource.IMPORTED, PairSource.UNJUDGED], default=PairSource.IMPORTED
    )

    def validate_pairs(self, pairs):
        campaign: Campaign = self.context["campaign"]
        wanted = {pair["qid"] for pair in pairs}
        known = set(campaign.topics.filter(qid__in=wanted).values_list("qid", flat=True))
        unknown = sorted(wanted - known)
        if unknown:
            shown = ", ".join(repr(qid) for qid in unknown[:10])
            more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
            raise ValidationError(MESSAGES["unknown_topics"].format(qids=shown + more))
        return [(pair["qid"], pair["docno"]) for pair in pairs]


class PoolChangeSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="Pairs new to the pool.")
    already = serializers.IntegerField(help_text="Pairs that were in the pool already.")
    new_documents = serializers.IntegerField(help_text="Docnos new to the campaign (no text).")
    assigned = serializers.IntegerField(help_text="Assignments made.")


class CampaignRunField(serializers.PrimaryKeyRelatedField):
    """A run of the campaign's team (annotation.access.runs_for_pool)."""

    def get_queryset(self):
        return runs_for_pool(self.context["campaign"])


class PoolRunsSerializer(serializers.Serializer):
    runs = serializers.ListField(
        child=CampaignRunField(
            queryset=Run.objects.all(),  # the type, for the schema; get_queryset chooses
            error_messages={"does_not_exist": MESSAGES["unknown_run"]},
        ),
        allow_empty=False,
        max_length=MAX_RUNS,
        error_messages={"empty": MESSAGES["no_runs"]},
        help_text="Ids of stored runs.",
    )
    depth = serializers.IntegerField(min_value=1, max_value=MAX_DEPTH, default=10)


class PairFilter(QueryParameters):
    qid = serializers.CharField(required=False, max_length=100, help_text="Only this topic.")
    lookups = {"qid": "topic__qid"}


@extend_schema_view(
    list=extend_schema(summary="A campaign's pool", parameters=[PairFilter]),
    retrieve=extend_schema(summary="One pair of the pool"),
)
class PairViewSet(
    LedCampaignMixin, RolePermissionsMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet
):
    """A campaign's pool, for its lead. New pairs are given to judges at once (every pair to
    ``overlap`` judges); judges never learn which run retrieved a document. Pairs come as a
    JSON list, added in the request (at most SYNC_WRITE_ROWS of them), or as a file of any
    size, which a job imports."""

    serializer_class = PairSerializer
    lookup_value_converter = "int"
    upload_actions = frozenset({"create"})

    def get_queryset(self):
        if self._fake():
            return Pair.objects.none()
        pairs = self.campaign.pairs.select_related("topic", "document").annotate(
            assigned=Count("assignments")
        )
        if self.action == "list":
            pairs = pairs.filter(**PairFilter.read(self.request))
        return pairs.order_by("topic__qid", "document__docno")

    @extend_schema(
        summary="Add (qid, docno) pairs to the pool and assign them: a JSON list at once (at "
        "most SYNC_WRITE_ROWS pairs, else 413), or a file by a job",
        request={
            "application/json": PairsAddSerializer,
            "multipart/form-data": FileImportSerializer,
        },
        responses={200: PoolChangeSerializer, 202: JobSerializer},
    )
    def create(self, request, *args, **kwargs):
        if "file" in request.FILES or request.content_type.startswith("multipart/"):
            form = FileImportSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            job = start_import(
                request,
                self.campaign,
                form.validated_data["file"],
                what="pairs",
                task=tasks.import_pairs_job,
            )
            return accepted(job, request)  # 200 is the answer of a JSON list
        pairs = request.data.get("pairs") if isinstance(request.data, dict) else None
        if isinstance(pairs, list):
            # Counted before each pair is validated: a list too long is refused at once.
            url = request.build_absolute_uri()
            check_sync_write(
                len(pairs), what="pairs", instead=MESSAGES["pairs_as_file"].format(url=url)
            )
        form = PairsAddSerializer(data=request.data, context={"campaign": self.campaign})
        form.is_valid(raise_exception=True)
        try:
            change = services.add_pairs(
                campaign=self.campaign,
                pairs=form.validated_data["pairs"],
                source=form.validated_data["source"],
            )
        except DjangoValidationError as error:
            raise ValidationError({"pairs": messages_of(error)}) from None
        return Response(PoolChangeSerializer(change).data)

    @extend_schema(
        summary="Depth-k pooling of stored runs; a job does it",
        request=PoolRunsSerializer,
        responses=JOB_STARTED,
    )
    @action(detail=False, methods=["post"])
    def pool(self, request, campaign_pk=None):
        form = PoolRunsSerializer(data=request.data, context={"campaign": self.campaign})
        form.is_valid(raise_exception=True)
        if not self.campaign.topics.exists():
            raise ValidationError({"non_field_errors": [MESSAGES["no_topics"]]})
        run_ids = sorted({run.pk for run in form.validated_data["runs"]})
        depth = form.validated_data["depth"]
        job = start_job(
            kind="annotation.pool_runs",
            title=f"Pool {len(run_ids)} run{'' if len(run_ids) == 1 else 's'} at depth {depth} "
            f"for {self.campaign.name}",
            user=request.user,
            task=tasks.pool_runs_job,
            total=len(run_ids) + 2,
            campaign_id=self.campaign.pk,
            run_ids=run_ids,
            depth=depth,
        )
        return started(job, request)
