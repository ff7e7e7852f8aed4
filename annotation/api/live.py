"""The live leaderboard as JSON (services.live): GET campaigns/{id}/live/?measure=… for the
campaign's lead. The same numbers as the page; CSV at /campaigns/{id}/live.csv."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.models import StopRule
from annotation.services import live as live_service
from annotation.services import stopping


class LiveParameters(serializers.Serializer):
    measure = serializers.ChoiceField(
        choices=list(live_service.LIVE_MEASURES),
        default=live_service.DEFAULT_MEASURE,
        help_text="trec_eval's output name of the measure (default ndcg_cut_10).",
    )


class LiveRunSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    mean = serializers.FloatField(help_text="Against the grades so far (undecided: not relevant).")
    low = serializers.FloatField(help_text="Undecided pairs of its top k not relevant.")
    high = serializers.FloatField(help_text="Undecided pairs of its top k at the top grade.")
    interval = serializers.ListField(
        child=serializers.FloatField(), help_text="95% bootstrap interval over topics."
    )


class LivePairSerializer(serializers.Serializer):
    better = serializers.IntegerField()
    worse = serializers.IntegerField()
    state = serializers.ChoiceField(choices=["settled", "open"])
    margin = serializers.FloatField(help_text="better's low − worse's high.")
    probability = serializers.FloatField(
        allow_null=True,
        help_text="Of an open pair on nDCG: P(better still beats worse once the pool is "
        "judged) under the discriminative strategy's model; null when settled or no model.",
    )


class StopEventSerializer(serializers.Serializer):
    rule = serializers.CharField(required=False)
    confidence = serializers.FloatField(required=False)
    top = serializers.IntegerField(required=False)
    measure = serializers.CharField(required=False)
    described = serializers.CharField(required=False)
    spent = serializers.IntegerField(required=False, help_text="Judgments spent when it paused.")
    undecided = serializers.IntegerField(required=False, help_text="Pool pairs left undecided.")
    at = serializers.DateTimeField(required=False, help_text="When the rule paused judging.")
    resumed_at = serializers.DateTimeField(required=False)
    resumed_by = serializers.CharField(required=False)


class StopRuleSerializer(serializers.Serializer):
    """The stop rule as a lead sets it (PUT) and reads it with what it did (GET)."""

    rule = serializers.ChoiceField(choices=StopRule.choices)
    confidence = serializers.FloatField(
        default=0.95, help_text="Above 0.5 and below 1: a comparison this likely counts as settled."
    )
    top = serializers.IntegerField(
        default=3, min_value=1, max_value=stopping.MAX_TOP, help_text="k of the top-k rule."
    )
    measure = serializers.CharField(read_only=True)
    described = serializers.CharField(read_only=True)
    paused = serializers.BooleanField(read_only=True)
    paused_at = serializers.DateTimeField(read_only=True, allow_null=True)
    event = StopEventSerializer(
        read_only=True, help_text="What the rule did: when it paused, after how many judgments."
    )


class LiveBoardSerializer(serializers.Serializer):
    campaign = serializers.IntegerField()
    measure = serializers.CharField()
    display_measure = serializers.CharField()
    computed_at = serializers.DateTimeField(allow_null=True)
    pending = serializers.BooleanField(help_text="Grades changed since; a refresh is queued.")
    settled = serializers.BooleanField()
    judgments_spent = serializers.IntegerField()
    pairs_known = serializers.IntegerField(allow_null=True)
    pairs_undecided = serializers.IntegerField(allow_null=True)
    to_settle_pairs = serializers.IntegerField(
        allow_null=True, help_text="At most this many undecided pairs settle the open pairs."
    )
    to_settle_judgments = serializers.IntegerField(help_text="to_settle_pairs × the overlap.")
    top_grade = serializers.IntegerField(allow_null=True)
    runs = LiveRunSerializer(many=True)
    pairs = LivePairSerializer(many=True)
    stop_rule = StopRuleSerializer(help_text="The campaign's stop rule and what it did.")


def live_response(request, campaign) -> Response:
    params = LiveParameters(data=request.query_params)
    if not params.is_valid():
        raise ValidationError(params.errors)
    state = live_service.live_board(campaign=campaign, measure=params.validated_data["measure"])
    board = state.board
    body = {
        "campaign": campaign.pk,
        "measure": state.measure,
        "display_measure": state.display_measure,
        "computed_at": state.computed_at,
        "pending": state.pending,
        "settled": bool(board and board.settled),
        "judgments_spent": state.spent,
        "pairs_known": board.known if board else None,
        "pairs_undecided": board.unknown if board else None,
        "to_settle_pairs": board.to_settle if board else None,
        "to_settle_judgments": state.to_settle_judgments,
        "top_grade": board.top_grade if board else None,
        "runs": [
            {
                "run": int(r.name),
                "run_label": state.label(r.name),
                "mean": r.mean,
                "low": r.low,
                "high": r.high,
                "interval": [r.ci_low, r.ci_high],
            }
            for r in (board.runs if board else [])
        ],
        "pairs": [
            {
                "better": int(p.better),
                "worse": int(p.worse),
                "state": "settled" if p.settled else "open",
                "margin": p.margin,
                "probability": p.probability,
            }
            for p in (board.pairs if board else [])
        ],
        "stop_rule": state.stop,
    }
    return Response(LiveBoardSerializer(body).data)


def stop_rule_response(request, campaign) -> Response:
    """GET: the stop rule and what it did; PUT: set it (rule, confidence, top)."""
    if request.method == "PUT":
        form = StopRuleSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            chosen = stopping.read_stop_settings(**form.validated_data)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from None
        campaign = stopping.set_stop_rule(campaign=campaign, settings=chosen, by=request.user)
    return Response(StopRuleSerializer(stopping.stop_status(campaign)).data)


def resume_response(request, campaign) -> Response:
    """Hand out pairs again (a campaign not paused stays as it is: the repeat is a no-op)."""
    campaign, _ = stopping.resume_judging(campaign=campaign, by=request.user)
    return Response(StopRuleSerializer(stopping.stop_status(campaign)).data)
