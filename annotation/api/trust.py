"""Machine judges you can trust over the API, for a campaign's lead (issue 33): the certified
leaderboard (GET; POST draws the human sample) and the gullibility gates of its machine
judges (list, read, start one as a job, override a blocking one with a reason). The same
numbers as the pages; thin over annotation/services/certified.py, certified_board.py and
gates.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation.api.common import LedCampaignMixin, messages_of
from annotation.models import GullibilityGate, MachineJudge, SampleStrategy
from annotation.services import certified, gates
from annotation.services import certified_board as boards
from jobs.api import JOB_STARTED, started

STATES = [
    boards.State.NO_DESIGN,
    boards.State.MACHINE_UNFINISHED,
    boards.State.NO_RUNS,
    boards.State.POOL_CHANGED,
    boards.State.HUMANS_PENDING,
    boards.State.CERTIFIED,
]


class DrawSerializer(serializers.Serializer):
    machine = serializers.IntegerField(help_text="The machine judge (its id) that graded the pool.")
    strategy = serializers.ChoiceField(choices=SampleStrategy.choices)
    budget = serializers.CharField(
        max_length=20, help_text='A number of pairs ("120") or a share of the pool ("0.1", "10%").'
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=certified.MAX_SEED,
        required=False,
        help_text="Default: the campaign's.",
    )


class RedrawSerializer(serializers.Serializer):
    strategy = serializers.CharField()
    seed = serializers.IntegerField()
    budget = serializers.FloatField()
    budget_is_share = serializers.BooleanField()
    chosen = serializers.IntegerField()
    drawn_by = serializers.CharField(allow_null=True)
    drawn_at = serializers.DateTimeField()
    redrawn_by = serializers.CharField(allow_null=True)
    redrawn_at = serializers.DateTimeField()


class RedrawRequestSerializer(serializers.Serializer):
    strategy = serializers.ChoiceField(
        choices=SampleStrategy.choices, required=False, help_text="Default: the current one's."
    )
    budget = serializers.CharField(
        max_length=20, required=False, help_text="Default: the current one's."
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=certified.MAX_SEED,
        required=False,
        help_text="Default: a new random seed.",
    )


class SampleDesignSerializer(serializers.Serializer):
    machine = serializers.CharField(help_text="The machine judge's label.")
    strategy = serializers.CharField()
    seed = serializers.IntegerField()
    budget = serializers.FloatField(help_text="A count, or a share when budget_is_share.")
    budget_is_share = serializers.BooleanField()
    strata = serializers.CharField()
    pool_size = serializers.IntegerField()
    chosen = serializers.IntegerField()
    expected_size = serializers.FloatField()
    withdrawn = serializers.IntegerField()
    redraws = RedrawSerializer(
        many=True, help_text="The designs this one replaced (redrawn before humans judged)."
    )
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class SampleProgressSerializer(serializers.Serializer):
    chosen = serializers.IntegerField(help_text="Pairs the design drew for the humans.")
    graded = serializers.IntegerField(help_text="Of those, graded by a human.")
    assigned = serializers.IntegerField(help_text="Of those, held by a human judge.")
    skipped_only = serializers.IntegerField(help_text="Skipped by every judge who had it.")


class RunEstimateSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    ndcg_cut_10 = serializers.FloatField(help_text="The certified estimate of nDCG@10.")
    low = serializers.FloatField()
    high = serializers.FloatField()
    se = serializers.FloatField()
    machine_only = serializers.FloatField(help_text="The mean with the machine's grades alone.")
    topics = serializers.IntegerField()


class SettlementSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    a_label = serializers.CharField()
    b_label = serializers.CharField()
    difference = serializers.FloatField(help_text="a minus b.")
    low = serializers.FloatField()
    high = serializers.FloatField()
    p_value = serializers.FloatField()
    p_holm = serializers.FloatField()
    settled = serializers.BooleanField(help_text="Its interval excludes 0.")
    settled_holm = serializers.BooleanField(help_text="Still so after Holm over every pair.")


class CertifiedBoardSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=STATES)
    message = serializers.CharField()
    design = SampleDesignSerializer(allow_null=True)
    progress = SampleProgressSerializer(allow_null=True)
    level = serializers.FloatField(allow_null=True)
    runs = RunEstimateSerializer(many=True)
    pairs = SettlementSerializer(many=True)


def board_data(board) -> dict:
    return CertifiedBoardSerializer(boards.as_dict(board)).data


class OneBoardSchema(AutoSchema):
    """The board is one object, though its GET is the route's list action."""

    def _is_list_view(self, serializer=None) -> bool:
        return False


@extend_schema_view(
    list=extend_schema(
        summary="The certified leaderboard: each pooled run's nDCG@10 with its "
        "prediction-powered interval, the settled pairs (Holm), the human sample's progress; "
        "or the state that keeps the campaign from one",
        responses=CertifiedBoardSerializer,
    ),
    create=extend_schema(
        summary="Draw the human sample (once per campaign) and send it to the human judges",
        request=DrawSerializer,
        responses={201: CertifiedBoardSerializer},
    ),
)
class CertifiedViewSet(LedCampaignMixin, RolePermissionsMixin, viewsets.GenericViewSet):
    schema = OneBoardSchema()
    serializer_class = CertifiedBoardSerializer
    pagination_class = None

    def get_queryset(self):
        return MachineJudge.objects.none()

    def list(self, request, campaign_pk=None):
        return Response(board_data(boards.certified_board(campaign=self.campaign)))

    def create(self, request, campaign_pk=None):
        form = DrawSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        machine = MachineJudge.objects.filter(
            pk=data["machine"], judge__campaign=self.campaign
        ).first()
        if machine is None:
            raise ValidationError({"machine": certified.MESSAGES["machine_elsewhere"]})
        try:
            certified.draw_sample(
                campaign=self.campaign,
                machine=machine,
                strategy=data["strategy"],
                budget=data["budget"],
                seed=data.get("seed"),
                user=request.user,
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        board = boards.certified_board(campaign=self.campaign)
        return Response(board_data(board), status=201)

    @extend_schema(
        summary="Redraw the human sample (same machine judge; strategy and budget as given or "
        "as before, a new seed), refused with 400 once a human judged a sampled pair",
        request=RedrawRequestSerializer,
        responses={201: CertifiedBoardSerializer},
    )
    @action(detail=False, methods=["post"])
    def redraw(self, request, campaign_pk=None):
        form = RedrawRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            certified.redraw_sample(
                campaign=self.campaign,
                strategy=data.get("strategy"),
                budget=data.get("budget"),
                seed=data.get("seed"),
                user=request.user,
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        board = boards.certified_board(campaign=self.campaign)
        return Response(board_data(board), status=201)


class GateRiseSerializer(serializers.Serializer):
    probe = serializers.CharField()
    label = serializers.CharField()
    pairs = serializers.IntegerField()
    original_rate = serializers.FloatField(help_text="Share of relevant calls on the originals.")
    probe_rate = serializers.FloatField(help_text="Share of relevant calls on the probes.")
    rise = serializers.FloatField(help_text="probe_rate - original_rate (0.05 = 5 points).")
    low = serializers.FloatField(help_text="Newcombe's 95% interval, lower end.")
    high = serializers.FloatField()
    exceeds = serializers.BooleanField(help_text="low is above the threshold.")


class GateSerializer(serializers.ModelSerializer):
    verdict = serializers.SerializerMethodField(
        help_text="passed, blocked, overridden, running, cancelled, or failed."
    )
    machine_label = serializers.CharField(source="machine.judge.label", read_only=True)
    rises = GateRiseSerializer(many=True, read_only=True)
    started_by = serializers.CharField(
        source="started_by.username", default=None, allow_null=True, read_only=True
    )
    overridden_by = serializers.CharField(
        source="overridden_by.username", default=None, allow_null=True, read_only=True
    )

    class Meta:
        model = GullibilityGate
        fields = [
            "id",
            "machine",
            "machine_label",
            "verdict",
            "threshold",
            "relevant_from",
            "max_pairs",
            "seed",
            "job",
            "pairs",
            "failures",
            "rises",
            "blocked",
            "conclusive",
            "started_by",
            "created_at",
            "finished_at",
            "override_reason",
            "overridden_by",
            "overridden_at",
            "cancel_requested_at",
            "cancelled",
        ]
        read_only_fields = fields

    def get_verdict(self, gate) -> str:
        return gates.verdict(gate)


class GateRequestSerializer(serializers.Serializer):
    machine = serializers.IntegerField(help_text="The machine judge (its id) to probe.")
    max_pairs = serializers.IntegerField(
        min_value=1, max_value=gates.MAX_PAIRS_LIMIT, default=gates.MAX_PAIRS
    )
    seed = serializers.IntegerField(min_value=0, max_value=certified.MAX_SEED, required=False)


class OverrideSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=10_000, help_text="Why it may fill qrels anyway.")


@extend_schema_view(
    list=extend_schema(summary="Gullibility gates of the campaign's machine judges, newest first"),
    retrieve=extend_schema(summary="One gate: per probe, the rise in relevant calls"),
    create=extend_schema(
        summary="Run the gullibility gate of a machine judge (a background job: 202 with the "
        "job to poll, or 200 with the finished job when it ran inline)",
        request=GateRequestSerializer,
        responses=JOB_STARTED,
    ),
)
class GullibilityGateViewSet(
    LedCampaignMixin,
    RolePermissionsMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = GateSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        if self._fake():
            return GullibilityGate.objects.none()
        return GullibilityGate.objects.filter(
            machine__judge__campaign=self.campaign
        ).select_related("machine__judge", "started_by", "overridden_by", "job")

    def create(self, request, campaign_pk=None):
        form = GateRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        machine = (
            MachineJudge.objects.filter(pk=data["machine"], judge__campaign=self.campaign)
            .select_related("judge__campaign")
            .first()
        )
        if machine is None:
            raise ValidationError({"machine": certified.MESSAGES["machine_elsewhere"]})
        try:
            job = gates.start_gate(
                machine=machine,
                user=request.user,
                max_pairs=data["max_pairs"],
                seed=data.get("seed"),
            )
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        return started(job, request)

    @extend_schema(
        summary="Override a blocking gate: the machine may fill qrels; the reason, who and "
        "when are recorded",
        request=OverrideSerializer,
        responses={200: GateSerializer},
    )
    @action(detail=True, methods=["post"])
    def override(self, request, campaign_pk=None, pk=None):
        gate = self.get_object()
        form = OverrideSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            gates.override_gate(gate=gate, user=request.user, reason=form.validated_data["reason"])
        except DjangoValidationError as error:
            raise ValidationError({"detail": messages_of(error)}) from None
        return Response(GateSerializer(gate).data)

    @extend_schema(
        summary="Cancel a gate: one whose job has not started ends cancelled at once, a "
        "running one starts no new call and ends with no verdict (200 with the gate, also "
        "when it had finished already: then nothing changes)",
        request=None,
        responses={200: GateSerializer},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, campaign_pk=None, pk=None):
        gate = self.get_object()
        gates.cancel_gate(gate=gate)
        gate.refresh_from_db()
        return Response(GateSerializer(gate).data)
