"""Search endpoints over the API: leads and engineers list, configure, test and run them
(evaluation/services/search.py holds the rules). The key is write-only: answers say where
it comes from (``key_source``), never what it is."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import IsLeadOrEngineer, RolePermissionsMixin, team_field, team_for
from evaluation import search, tasks
from evaluation.access import READERS, visible_endpoints
from evaluation.models import SearchAuth, SearchEndpoint, SearchKind
from evaluation.services import endpoint_runs as runs_service
from evaluation.services import search as service
from jobs.api import JOB_STARTED, started


class MappingSerializer(serializers.Serializer):
    hits = serializers.CharField(max_length=500, help_text="JMESPath to the list of hits.")
    id = serializers.CharField(max_length=500, help_text="JMESPath, in a hit, to its id.")
    title = serializers.CharField(max_length=500, required=False, allow_blank=True)
    text = serializers.CharField(max_length=500, required=False, allow_blank=True)
    score = serializers.CharField(max_length=500, required=False, allow_blank=True)


class SearchEndpointSerializer(serializers.ModelSerializer):
    url = serializers.CharField(max_length=2000, help_text="The search address, no query.")
    address = serializers.HyperlinkedIdentityField(view_name="api:search-endpoint-detail")
    kind = serializers.ChoiceField(choices=SearchKind.choices)
    method = serializers.ChoiceField(choices=[("GET", "GET"), ("POST", "POST")], required=False)
    template = serializers.CharField(
        max_length=search.templates.MAX_TEMPLATE_CHARS,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="JSON with {{query}}, {{description}}, {{narrative}}, {{qid}}, {{k}}; "
        "empty: the kind's starting template.",
    )
    mapping = MappingSerializer(required=False, help_text="Empty: the kind's starting mapping.")
    auth = serializers.ChoiceField(choices=SearchAuth.choices, required=False)
    api_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=service.API_KEY_MAX,
        help_text="Stored sealed, never shown back; empty on a change keeps the stored one.",
    )
    clear_api_key = serializers.BooleanField(write_only=True, required=False, default=False)
    api_key_env = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text=f"Read the key from this environment variable ({service.KEY_ENV_PREFIX}…).",
    )
    key_source = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )
    team = team_field()

    class Meta:
        model = SearchEndpoint
        fields = [
            "id",
            "address",
            "name",
            "kind",
            "url",
            "method",
            "template",
            "mapping",
            "auth",
            "auth_header",
            "api_key",
            "clear_api_key",
            "api_key_env",
            "key_source",
            "timeout",
            "max_retries",
            "concurrency",
            "version",
            "team",
            "created_by",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "version", "created_by", "created_at", "updated_at"]
        extra_kwargs = {"name": {"validators": []}}
        validators = []  # a name unique in its team: the service says so

    def get_key_source(self, endpoint) -> str:
        return service.key_source(endpoint)

    def to_representation(self, endpoint):
        data = super().to_representation(endpoint)
        data["team"] = endpoint.team.slug
        return data

    def create(self, data):
        data.pop("clear_api_key", None)
        user = self.context["request"].user
        data["team"] = team_for(user, data.get("team"), *READERS)
        try:
            return service.create_search_endpoint(**data, created_by=user)
        except DjangoValidationError as error:
            raise ValidationError({"detail": error.messages}) from None

    def update(self, endpoint, data):
        data.pop("team", None)  # an endpoint stays in its team
        try:
            return service.update_search_endpoint(
                endpoint=endpoint, by=self.context["request"].user, **data
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": error.messages}) from None


class SearchTestSerializer(serializers.Serializer):
    query = serializers.CharField(max_length=10_000, required=False, default="test")
    k = serializers.IntegerField(min_value=1, max_value=search.MAX_K, default=service.TEST_K)


class SearchHitSerializer(serializers.Serializer):
    docno = serializers.CharField()
    score = serializers.FloatField()
    title = serializers.CharField()
    text = serializers.CharField()


class SearchConnectionCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    query = serializers.CharField()
    seconds = serializers.FloatField()
    count = serializers.IntegerField(help_text="Hits the answer held (up to k).")
    hits = SearchHitSerializer(many=True, help_text="The first ten, as the mapping reads them.")
    scores_from = serializers.CharField(help_text="'engine', or 'rank' when scores lacked.")
    kind = serializers.CharField(help_text="The class of problem when it failed.")
    error = serializers.CharField()
    status = serializers.IntegerField(allow_null=True)
    raw = serializers.CharField(help_text="The answer as it came (capped, key replaced).")


class SearchRunRequestSerializer(serializers.Serializer):
    k = serializers.IntegerField(
        min_value=1, max_value=search.MAX_K, help_text=f"Depth, at most {search.MAX_K}."
    )
    campaign = serializers.IntegerField(required=False, help_text="A campaign you lead.")
    qrels = serializers.IntegerField(required=False, help_text="A qrels version you read.")
    system = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    name = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")

    def validate(self, data):
        if ("campaign" in data) == ("qrels" in data):
            raise ValidationError({"detail": service.MESSAGES["query_set"]})
        return data


@extend_schema_view(
    list=extend_schema(summary="Search endpoints"),
    create=extend_schema(summary="Configure a search endpoint"),
    retrieve=extend_schema(summary="One search endpoint (its key is never shown)"),
    partial_update=extend_schema(summary="Change a search endpoint"),
    destroy=extend_schema(summary="Remove a search endpoint (its runs stay)"),
)
class SearchEndpointViewSet(
    RolePermissionsMixin,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = SearchEndpointSerializer
    action_permissions = {
        action: [IsLeadOrEngineer]
        for action in ("list", "create", "retrieve", "partial_update", "destroy", "test", "runs")
    }
    queryset = SearchEndpoint.objects.select_related("created_by", "team")
    lookup_value_converter = "int"

    def get_queryset(self):
        """The endpoints of the user's teams (evaluation/access.py); others are a 404."""
        return visible_endpoints(self.request.user, super().get_queryset())

    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    @extend_schema(
        summary="Ask the endpoint one query and show the mapped hits or the exact error",
        request=SearchTestSerializer,
        responses={200: SearchConnectionCheckSerializer},
    )
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        endpoint = self.get_object()
        asked = SearchTestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        check = service.test_connection(endpoint=endpoint, **asked.validated_data)
        body = {
            "ok": check.ok,
            "query": check.query,
            "seconds": round(check.seconds, 4),
            "count": check.count,
            "hits": [hit.__dict__ for hit in check.hits],
            "scores_from": check.scores_from,
            "kind": check.kind,
            "error": check.error,
            "status": check.status,
            "raw": check.raw,
        }
        return Response(SearchConnectionCheckSerializer(body).data)

    @extend_schema(
        summary="Make a run: ask every topic of a query set (a job)",
        request=SearchRunRequestSerializer,
        responses={**JOB_STARTED, 400: OpenApiResponse(description="Unfit parameters.")},
    )
    @action(detail=True, methods=["post"])
    def runs(self, request, pk=None):
        endpoint = self.get_object()
        asked = SearchRunRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        data = asked.validated_data
        try:  # refused now rather than in the job: a query set the user may not run
            runs_service.load_query_set(
                user=request.user, campaign=data.get("campaign"), qrels=data.get("qrels")
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": error.messages}) from None
        job = tasks.start_search_run(endpoint=endpoint, user=request.user, **data)
        return started(job, request)
