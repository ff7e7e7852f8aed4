"""Audits of the machine judges over the API, for a campaign's lead: send pairs to the human
judges (where machines disagree, where a machine straddles the relevance threshold, a
seeded random sample of machine-only pairs), and list what was sent. Thin over
annotation/services/audits.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation import tasks
from annotation.api.common import LedCampaignMixin, messages_of, start_campaign_job
from annotation.models import SENT_BY_HAND, AuditPair, MachineAudit, Pair
from annotation.services import audits as service
from jobs.api import JobSerializer
from jobs.services.limits import TooLargeForRequest, sync_write_limit


class AuditRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=[(k.value, k.label) for k in SENT_BY_HAND],
        help_text="disagreement: machines grade a pair differently; threshold: a machine's "
        "grade straddles the relevance threshold against the humans on the topic; sample: "
        "a seeded random sample of machine-only pairs.",
    )
    size = serializers.IntegerField(
        min_value=1, max_value=1_000_000, required=False, help_text="The sample's size."
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=service.MAX_SEED,
        required=False,
        help_text="The sample's seed (default: the campaign's).",
    )
    dry_run = serializers.BooleanField(
        default=False, help_text="Say which pairs it would send; send nothing."
    )


class AuditPairSerializer(serializers.Serializer):
    pair = serializers.IntegerField()
    qid = serializers.CharField()
    docno = serializers.CharField()
    reason = serializers.CharField()


class MachineAuditSerializer(serializers.ModelSerializer):
    sent_by = serializers.CharField(
        source="sent_by.username", default=None, allow_null=True, read_only=True
    )

    class Meta:
        model = MachineAudit
        fields = ["id", "kind", "size", "seed", "sent", "assigned", "sent_by", "sent_at"]
        read_only_fields = fields


class AuditSentSerializer(serializers.Serializer):
    kind = serializers.CharField()
    sent = serializers.IntegerField(help_text="Pairs sent to the human judges now.")
    assigned = serializers.IntegerField(help_text="New assignments (the campaign's overlap).")
    repeated = serializers.BooleanField(help_text="The same sample was sent before: nothing new.")
    dry_run = serializers.BooleanField()
    audit = MachineAuditSerializer(allow_null=True, help_text="Null when nothing was sent.")
    pairs = AuditPairSerializer(many=True, help_text="The pairs chosen, and why.")


def _pairs(choices) -> list[dict]:
    rows = {
        pk: (qid, docno)
        for pk, qid, docno in Pair.objects.filter(pk__in=[c.pair for c in choices]).values_list(
            "pk", "topic__qid", "document__docno"
        )
    }
    return [
        {"pair": c.pair, "qid": rows[c.pair][0], "docno": rows[c.pair][1], "reason": c.reason}
        for c in choices
    ]


@extend_schema_view(
    list=extend_schema(summary="Audits sent to the human judges, newest first"),
    retrieve=extend_schema(summary="One audit"),
)
class MachineAuditViewSet(
    LedCampaignMixin,
    RolePermissionsMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = MachineAuditSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        if self._fake():
            return MachineAudit.objects.none()
        return MachineAudit.objects.filter(campaign=self.campaign).select_related("sent_by")

    @extend_schema(
        summary="Send pairs to the human judges to check the machines (all or nothing)",
        request=AuditRequestSerializer,
        responses={201: AuditSentSerializer, 200: AuditSentSerializer, 202: JobSerializer},
    )
    def create(self, request, campaign_pk=None):
        form = AuditRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            result = service.send_audit(
                campaign=self.campaign,
                kind=data["kind"],
                size=data.get("size"),
                seed=data.get("seed"),
                user=request.user,
                dry_run=data["dry_run"],
                max_rows=sync_write_limit(),
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        except TooLargeForRequest:
            return start_campaign_job(
                request,
                self.campaign,
                kind="send_audit",
                title=f"Send a {data['kind']} audit",
                task=tasks.send_audit_job,
                audit_kind=data["kind"],
                size=data.get("size"),
                seed=data.get("seed"),
            )
        choices = result.choices
        if result.repeated:
            choices = [
                service.auditing.AuditChoice(pk, reason)
                for pk, reason in AuditPair.objects.filter(audit=result.audit)
                .order_by("pair_id")
                .values_list("pair_id", "reason")
            ]
        body = {
            "kind": result.kind,
            "sent": result.sent,
            "assigned": result.assigned,
            "repeated": result.repeated,
            "dry_run": data["dry_run"],
            "audit": result.audit,
            "pairs": _pairs(choices),
        }
        code = status.HTTP_201_CREATED if result.sent else status.HTTP_200_OK
        return Response(AuditSentSerializer(body).data, status=code)
