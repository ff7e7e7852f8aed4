"""Schedules over the API: their owner (a lead or an engineer) and admins create, list,
change, pause and delete them, read their firings, and read and acknowledge their alerts.
Anyone else gets a 404 for another's schedule, as for every object they may not see. The
webhook's shared secret is write-only: answers say whether one is stored, never what it is.
The rules live in evaluation/services/schedules.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import IsLeadOrEngineer, RolePermissionsMixin
from evaluation import measures, search
from evaluation.models import ScheduleAlert, ScheduleChange, ScheduleFiring
from evaluation.schedules import cron, drops
from evaluation.services import schedules as service

NOT_BOTH = "Choose one query set: a campaign you lead (campaign) or a qrels version (topics_qrels)."


class ScheduleSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    address = serializers.HyperlinkedIdentityField(view_name="api:schedule-detail")
    name = serializers.CharField(max_length=100)
    endpoint = serializers.IntegerField(
        source="endpoint_id", help_text="A search endpoint's id (immutable)."
    )
    campaign = serializers.IntegerField(
        required=False, allow_null=True, help_text="Query set: a campaign you lead (immutable)."
    )
    topics_qrels = serializers.IntegerField(
        source="topics_qrels_id",
        required=False,
        allow_null=True,
        help_text="Query set: a qrels version's topics (immutable).",
    )
    query_set = serializers.CharField(read_only=True)
    qrels = serializers.IntegerField(
        source="qrels_id",
        help_text="The qrels version each firing is scored against (a change starts the "
        "history chart's line again).",
    )
    measures = serializers.ListField(
        child=serializers.CharField(max_length=100),
        max_length=measures.specs.MAX_MEASURES,
        required=False,
        help_text="Either dialect; the first is watched for drops (default nDCG@10).",
    )
    alert_measure = serializers.CharField(read_only=True)
    k = serializers.IntegerField(min_value=1, max_value=search.MAX_K)
    cron = serializers.CharField(
        max_length=cron.MAX_CRON_CHARS,
        help_text="Five fields (minute hour day month weekday) in the server's TIME_ZONE, or "
        "@daily and the like; at most one firing per SCHEDULE_MIN_INTERVAL_MINUTES.",
    )
    threshold = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text=f"Alert on a drop larger than this (0 < t <= {drops.MAX_THRESHOLD:g}, in "
        "the measure's units); null for none.",
    )
    alert_on_interval = serializers.BooleanField(
        required=False, default=True, help_text="Alert below the previous 95% interval."
    )
    webhook_url = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    webhook_secret = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=1000,
        help_text="Signs each delivery (HMAC-SHA256); stored sealed, never shown back.",
    )
    webhook_secret_stored = serializers.SerializerMethodField()
    emails = serializers.ListField(
        child=serializers.CharField(max_length=254), required=False, max_length=100
    )
    paused = serializers.BooleanField(required=False, default=False)
    next_run_at = serializers.DateTimeField(read_only=True, allow_null=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    created_at = serializers.DateTimeField(read_only=True)

    def get_webhook_secret_stored(self, schedule) -> bool:
        return bool(schedule.webhook_secret_sealed)

    def validate(self, data):
        if self.instance is None:
            campaign = data.get("campaign")
            topics = data.get("topics_qrels_id")
            if (campaign is None) == (topics is None):
                raise ValidationError({"detail": [NOT_BOTH]})
        return data

    def create(self, data):
        try:
            schedule = service.create_schedule(
                user=self.context["request"].user,
                name=data["name"],
                endpoint=data["endpoint_id"],
                qrels=data["qrels_id"],
                campaign=data.get("campaign"),
                topics_qrels=data.get("topics_qrels_id"),
                cron_expression=data["cron"],
                k=data["k"],
                measure_specs=data.get("measures"),
                threshold=data.get("threshold"),
                alert_on_interval=data.get("alert_on_interval", True),
                webhook_url=data.get("webhook_url", ""),
                webhook_secret=data.get("webhook_secret", ""),
                emails=data.get("emails"),
            )
            if data.get("paused"):
                service.update_schedule(
                    schedule=schedule, user=self.context["request"].user, paused=True
                )
            return schedule
        except DjangoValidationError as error:
            raise ValidationError(by_field(error)) from None

    def update(self, schedule, data):
        """What service.EDITABLE names changes (measures and qrels among them); the endpoint,
        query set and k are refused, named."""
        changes = {RENAMED.get(key, key): value for key, value in data.items()}
        try:
            return service.update_schedule(
                schedule=schedule, user=self.context["request"].user, **changes
            )
        except DjangoValidationError as error:
            raise ValidationError(by_field(error)) from None


# The serializer's sources, as the service and the API's bodies name them.
RENAMED = {"qrels_id": "qrels", "endpoint_id": "endpoint", "topics_qrels_id": "topics_qrels"}


def by_field(error: DjangoValidationError) -> dict:
    """The service's refusal as DRF's body: each wrong field with what is wrong with it."""
    if hasattr(error, "error_dict"):
        return error.message_dict
    return {"detail": error.messages}


class FiringSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True, help_text="queued, succeeded or failed.")

    class Meta:
        model = ScheduleFiring
        fields = [
            "id",
            "slot",
            "missed",
            "fired_at",
            "status",
            "message",
            "job_id",
            "run",
            "evaluation",
            "mean",
            "low",
            "high",
            "failed_queries",
            "finished_at",
            "measure",
            "qrels",
            "recovery",
        ]


class ScheduleChangeSerializer(serializers.ModelSerializer):
    changed_by = serializers.CharField(
        source="changed_by.username", read_only=True, allow_null=True, default=None
    )
    changes = serializers.DictField(
        child=serializers.ListField(),
        help_text="field -> [before, after]; a webhook secret only as whether one is stored.",
    )

    class Meta:
        model = ScheduleChange
        fields = ["id", "changed_at", "changed_by", "changes"]
        read_only_fields = fields


class ScheduleAlertSerializer(serializers.ModelSerializer):
    slot = serializers.DateTimeField(source="firing.slot", read_only=True)
    run = serializers.IntegerField(source="firing.run_id", read_only=True, allow_null=True)

    class Meta:
        model = ScheduleAlert
        fields = [
            "id",
            "schedule",
            "firing",
            "slot",
            "run",
            "kind",
            "message",
            "failures",
            "measure",
            "previous",
            "current",
            "low",
            "high",
            "threshold",
            "reasons",
            "created_at",
            "acknowledged_at",
            "webhook_status",
            "webhook_attempts",
            "webhook_error",
            "webhook_http_status",
            "email_status",
            "email_error",
        ]
        read_only_fields = fields


@extend_schema_view(
    list=extend_schema(summary="Your schedules (an admin's: everyone's)"),
    create=extend_schema(summary="Schedule an endpoint on a query set (a cron expression)"),
    retrieve=extend_schema(summary="One schedule (its webhook secret is never shown)"),
    partial_update=extend_schema(
        summary="Change a schedule (name, cron, measures, qrels, threshold, alert_on_interval, "
        "webhook_url, webhook_secret, emails), pause (paused: true) or resume it"
    ),
    destroy=extend_schema(summary="Delete a schedule (the runs it made stay)"),
)
class ScheduleViewSet(
    RolePermissionsMixin,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = ScheduleSerializer
    action_permissions = {
        action: [IsLeadOrEngineer]
        for action in (
            "list",
            "create",
            "retrieve",
            "partial_update",
            "destroy",
            "firings",
            "changes",
        )
    }
    lookup_value_converter = "int"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self):
        return service.visible_schedules(self.request.user).order_by("name", "pk")

    def perform_destroy(self, schedule):
        service.delete_schedule(schedule=schedule)

    @extend_schema(
        summary="A schedule's firings, newest first", responses=FiringSerializer(many=True)
    )
    @action(detail=True, methods=["get"])
    def firings(self, request, pk=None):
        schedule = self.get_object()
        page = self.paginate_queryset(ScheduleFiring.objects.filter(schedule=schedule))
        return self.get_paginated_response(FiringSerializer(page, many=True).data)

    @extend_schema(
        summary="A schedule's changes (who changed what, before and after), newest first",
        responses=ScheduleChangeSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def changes(self, request, pk=None):
        schedule = self.get_object()
        page = self.paginate_queryset(
            ScheduleChange.objects.filter(schedule=schedule).select_related("changed_by")
        )
        return self.get_paginated_response(ScheduleChangeSerializer(page, many=True).data)


@extend_schema_view(
    list=extend_schema(summary="Alerts of your schedules, newest first (?open=true: unseen)"),
    retrieve=extend_schema(summary="One alert, with how its webhook and e-mail went"),
)
class ScheduleAlertViewSet(
    RolePermissionsMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    serializer_class = ScheduleAlertSerializer
    action_permissions = {
        action: [IsLeadOrEngineer] for action in ("list", "retrieve", "acknowledge")
    }
    lookup_value_converter = "int"

    def get_queryset(self):
        alerts = ScheduleAlert.objects.filter(
            schedule__in=service.visible_schedules(self.request.user)
        ).select_related("firing")
        if self.action == "list" and self.request.query_params.get("open") == "true":
            alerts = alerts.filter(acknowledged_at__isnull=True)
        return alerts

    @extend_schema(
        summary="Acknowledge an alert: its banner goes (again: no change)",
        request=None,
        responses=ScheduleAlertSerializer,
    )
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        alert = service.acknowledge_alert(alert=self.get_object(), user=request.user)
        return Response(ScheduleAlertSerializer(alert).data)
