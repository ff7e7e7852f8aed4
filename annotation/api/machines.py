"""Machine (LLM) judges over the API, for a campaign's lead: configure one (its key is
write-only, never in an answer), run it over the pool, a topic or the pairs no human has
graded (202 with the job to poll, or 200 with the finished job when it ran inline), cancel a run, and read its answers and failures. Thin
over annotation/services/machine_judges.py and machine_runs.py."""

from __future__ import annotations

import dataclasses

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation.api.agreement import AgreementStatisticSerializer
from annotation.api.common import LedCampaignMixin, messages_of
from annotation.llm import DEFAULT_TEMPLATE, PromptTemplate
from annotation.models import (
    MachineAnswer,
    MachineJudge,
    MachineOutcome,
    MachineRun,
    MachineScope,
    Topic,
)
from annotation.services import machine_checks
from annotation.services import machine_judges as service
from annotation.services import machine_runs as runs
from jobs.api import JOB_STARTED, started


class MachineJudgeSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="judge.name", read_only=True)
    label = serializers.CharField(source="judge.label", read_only=True)
    key = serializers.SerializerMethodField(help_text="Where the key comes from (never the key).")

    class Meta:
        model = MachineJudge
        fields = ["id", "name", "label", *MachineJudge.CONFIG_FIELDS, "key", "created_at"]
        read_only_fields = fields

    def get_key(self, machine) -> str:
        return service.key_source(machine)


class MachineJudgeCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=150, required=False, allow_blank=True, default="")
    model_name = serializers.CharField(max_length=200)
    model_version = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default=""
    )
    base_url = serializers.CharField(max_length=500)
    api_key = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        default="",
        write_only=True,
        help_text="Stored encrypted and never shown back.",
    )
    api_key_env = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="A QRELSMITH_LLM_KEY_<NAME> environment variable set by the operator.",
    )
    template_name = serializers.CharField(max_length=100, default=DEFAULT_TEMPLATE.name)
    template_version = serializers.CharField(max_length=50, default=DEFAULT_TEMPLATE.version)
    system_prompt = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=20000,
        help_text="Default: the default template's.",
    )
    user_prompt = serializers.CharField(
        required=False, max_length=20000, help_text="Default: the default template's."
    )
    temperature = serializers.FloatField(min_value=0, max_value=2, default=0.0)
    max_tokens = serializers.IntegerField(min_value=1, max_value=32768, default=16)
    max_passage_chars = serializers.IntegerField(min_value=200, max_value=200_000, default=8000)
    concurrency = serializers.IntegerField(
        min_value=1,
        max_value=32767,
        default=4,
        help_text="At most the server's OUTBOUND_MAX_CONCURRENCY.",
    )
    timeout = serializers.FloatField(min_value=1, max_value=600, default=60.0)
    max_retries = serializers.IntegerField(
        min_value=0,
        max_value=32767,
        default=4,
        help_text="At most the server's OUTBOUND_MAX_RETRIES.",
    )
    input_price = serializers.FloatField(min_value=0, required=False, allow_null=True, default=None)
    output_price = serializers.FloatField(
        min_value=0, required=False, allow_null=True, default=None
    )


class MachineEndpointSerializer(serializers.Serializer):
    base_url = serializers.CharField(max_length=500, required=False)
    api_key = serializers.CharField(
        max_length=500, required=False, allow_blank=True, write_only=True
    )
    clear_api_key = serializers.BooleanField(required=False)
    api_key_env = serializers.CharField(max_length=100, required=False, allow_blank=True)
    concurrency = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    timeout = serializers.FloatField(min_value=1, max_value=600, required=False)
    max_retries = serializers.IntegerField(min_value=0, max_value=32767, required=False)
    input_price = serializers.FloatField(min_value=0, required=False, allow_null=True)
    output_price = serializers.FloatField(min_value=0, required=False, allow_null=True)


class RunRequestSerializer(serializers.Serializer):
    scope = serializers.ChoiceField(choices=MachineScope.choices, default=MachineScope.POOL)
    topic = serializers.CharField(max_length=100, required=False, help_text="A qid (scope topic).")


class MachineRunSerializer(serializers.ModelSerializer):
    topic = serializers.CharField(
        source="topic.qid", default=None, read_only=True, allow_null=True, help_text="Its qid."
    )

    class Meta:
        model = MachineRun
        fields = [
            "id",
            "machine",
            "scope",
            "topic",
            "job",
            "pairs",
            "graded",
            "failed",
            "prompt_tokens",
            "completion_tokens",
            "cost",
            "seconds",
            "cancel_requested_at",
            "cancelled",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class MachineAnswerSerializer(serializers.ModelSerializer):
    qid = serializers.CharField(source="pair.topic.qid", read_only=True)
    docno = serializers.CharField(source="pair.document.docno", read_only=True)

    class Meta:
        model = MachineAnswer
        fields = ["pair", "qid", "docno", *MachineAnswer.RECORD_FIELDS, "run"]
        read_only_fields = fields


class ConnectionCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="True when the answer held a grade on the scale.")
    seconds = serializers.FloatField()
    grade = serializers.IntegerField(allow_null=True)
    failure = serializers.CharField(help_text="The class of problem, empty when ok.")
    reason = serializers.CharField()
    raw = serializers.CharField(help_text="The answer as it came (capped, the key hidden).")
    model = serializers.CharField(help_text="The model as the endpoint named it.")
    qid = serializers.CharField(allow_null=True, help_text="The pair asked about (null: a sample).")
    docno = serializers.CharField(allow_null=True)


class AnswerParameters(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=MachineOutcome.choices, required=False)


@extend_schema_view(
    list=extend_schema(summary="The campaign's machine judges"),
    retrieve=extend_schema(summary="One machine judge (its key is never shown)"),
    create=extend_schema(
        summary="Configure a machine judge (same name and configuration: the existing one)",
        request=MachineJudgeCreateSerializer,
        responses={201: MachineJudgeSerializer},
    ),
    partial_update=extend_schema(
        summary="Change where a machine judge is served and how hard it is pushed",
        request=MachineEndpointSerializer,
        responses={200: MachineJudgeSerializer},
    ),
)
class MachineJudgeViewSet(
    LedCampaignMixin,
    RolePermissionsMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = MachineJudgeSerializer
    lookup_value_converter = "int"
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_queryset(self):
        if self._fake():
            return MachineJudge.objects.none()
        return MachineJudge.objects.filter(judge__campaign=self.campaign).select_related("judge")

    def create(self, request, campaign_pk=None):
        form = MachineJudgeCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        template = PromptTemplate(
            name=data.pop("template_name"),
            version=data.pop("template_version"),
            system=data.pop("system_prompt", DEFAULT_TEMPLATE.system),
            user=data.pop("user_prompt", DEFAULT_TEMPLATE.user),
        )
        try:
            machine = service.create_machine_judge(
                campaign=self.campaign, template=template, created_by=request.user, **data
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        return Response(MachineJudgeSerializer(machine).data, status=201)

    def partial_update(self, request, campaign_pk=None, pk=None):
        machine = self.get_object()
        form = MachineEndpointSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            service.update_machine_judge(machine=machine, **form.validated_data)
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        return Response(MachineJudgeSerializer(machine).data)

    @extend_schema(
        summary="Run the machine judge (a background job: 202 with the job to poll while a "
        "worker has it; 200 with the finished job when the server ran it before answering)",
        request=RunRequestSerializer,
        responses=JOB_STARTED,
    )
    @action(detail=True, methods=["post"])
    def run(self, request, campaign_pk=None, pk=None):
        machine = self.get_object()
        form = RunRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        topic = None
        qid = form.validated_data.get("topic")
        if form.validated_data["scope"] == MachineScope.TOPIC:
            topic = Topic.objects.filter(campaign=self.campaign, qid=qid).first() if qid else None
            if topic is None:
                raise ValidationError({"topic": "Name a topic (qid) of this campaign."})
        try:
            job = runs.start_runner(
                machine=machine, scope=form.validated_data["scope"], topic=topic, user=request.user
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        return started(job, request)

    @extend_schema(
        summary="Test the connection: one request as a run sends it (no retry, at most 15 s)",
        request=None,
        responses={200: ConnectionCheckSerializer},
    )
    @action(detail=True, methods=["post"])
    def test(self, request, campaign_pk=None, pk=None):
        machine = self.get_object()
        check = machine_checks.test_connection(machine=machine)
        return Response(ConnectionCheckSerializer(dataclasses.asdict(check)).data)

    @extend_schema(
        summary="The machine judge's answers: grades with their raw text, and failures",
        parameters=[AnswerParameters],
        responses=MachineAnswerSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def answers(self, request, campaign_pk=None, pk=None):
        machine = self.get_object()
        params = AnswerParameters(data=request.query_params)
        params.is_valid(raise_exception=True)
        answers = MachineAnswer.objects.filter(machine=machine).select_related(
            "pair__topic", "pair__document"
        )
        if params.validated_data.get("outcome"):
            answers = answers.filter(outcome=params.validated_data["outcome"])
        page = self.paginate_queryset(answers.order_by("pair_id"))
        return self.get_paginated_response(MachineAnswerSerializer(page, many=True).data)


@extend_schema_view(
    list=extend_schema(summary="Runs of the campaign's machine judges, newest first"),
    retrieve=extend_schema(summary="One run, with its figures so far"),
)
class MachineRunViewSet(
    LedCampaignMixin,
    RolePermissionsMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = MachineRunSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        if self._fake():
            return MachineRun.objects.none()
        return MachineRun.objects.filter(machine__judge__campaign=self.campaign).select_related(
            "topic"
        )

    @extend_schema(
        summary="Cancel a run: one whose job has not started ends cancelled at once, with no "
        "pair asked; a running one starts no new request and those in flight are recorded (200 "
        "with the run, also when it had finished already: then nothing changes)",
        request=None,
        responses={200: MachineRunSerializer},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, campaign_pk=None, pk=None):
        run = self.get_object()
        runs.cancel_run(run=run)
        run.refresh_from_db()
        return Response(MachineRunSerializer(run).data)


# --- machines against humans (the agreement report's machines section) ------------------------


class LeanSerializer(serializers.Serializer):
    mean_difference = serializers.FloatField(
        allow_null=True, help_text="Mean of (machine - other) over the shared pairs."
    )
    higher = serializers.FloatField(allow_null=True, help_text="Share graded higher.")
    same = serializers.FloatField(allow_null=True)
    lower = serializers.FloatField(allow_null=True)
    words = serializers.CharField()


class TopicKappaSerializer(serializers.Serializer):
    topic = serializers.CharField(help_text="The qid.")
    n = serializers.IntegerField()
    kappa = AgreementStatisticSerializer()
    mean_difference = serializers.FloatField(allow_null=True)


class MachineComparisonSerializer(serializers.Serializer):
    against = serializers.CharField(help_text="A human judge, the consensus, or the qrels.")
    n = serializers.IntegerField(help_text="Pairs both graded.")
    kappa = serializers.DictField(
        child=AgreementStatisticSerializer(), help_text="unweighted, linear, quadratic."
    )
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: the machine's grade; columns: the other's.",
    )
    lean = LeanSerializer()
    topics = TopicKappaSerializer(many=True, help_text="Worst first, with ?weights.")


class MachineSectionSerializer(serializers.Serializer):
    judge = serializers.CharField()
    graded = serializers.IntegerField()
    comparisons = MachineComparisonSerializer(many=True)
    audit_sent = serializers.IntegerField(help_text="Pairs of the campaign sent for audit.")
    audit = MachineComparisonSerializer(
        many=True,
        help_text="On the audit pairs people judging here have graded since, against their "
        "consensus: all of them, then by kind of audit when there are several.",
    )


class MachineAgreementSerializer(serializers.Serializer):
    weights = serializers.CharField(help_text="The per-topic kappas' weights.")
    machines = MachineSectionSerializer(many=True, help_text="One per machine judge.")


def machine_agreement_response(request, campaign) -> Response:
    from annotation.api.agreement import AgreementParameters
    from annotation.services import agreement as agreement_service
    from annotation.services import machine_agreement

    weights = AgreementParameters.read(request)["weights"]
    sections = machine_agreement.machine_agreement(
        campaign=campaign, weights=agreement_service.WEIGHTS[weights]
    )
    return Response(MachineAgreementSerializer({"weights": weights, "machines": sections}).data)
