"""GET /api/v1/rankings/: would a qrels version change the leaderboard? The stored
runs ranked by one measure under two versions, and how far the rankings agree
(evaluation.dashboards.rankings; issue 12 part 6, issue 17 part 4)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from evaluation.access import readable_qrels, visible_runs
from evaluation.api.common import whole_number
from evaluation.api.dashboards import DashboardView, ScoringParameters, read_ids
from evaluation.dashboards import rankings
from evaluation.models import QrelsVersion, Run


class CoefficientSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="null: undefined (e.g. no spread).")
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    at_k = serializers.FloatField(allow_null=True, help_text="Over the old ranking's top k.")
    low_k = serializers.FloatField(allow_null=True)
    high_k = serializers.FloatField(allow_null=True)


class RankRowSerializer(serializers.Serializer):
    run = serializers.CharField()
    old = serializers.FloatField()
    new = serializers.FloatField()
    old_rank = serializers.IntegerField()
    new_rank = serializers.IntegerField()


class SwapSerializer(serializers.Serializer):
    above = serializers.CharField(help_text="Ranked above `below` by the old version…")
    below = serializers.CharField()
    old_gap = serializers.FloatField()
    new_gap = serializers.FloatField(help_text="…and below it by the new one (negative).")


class TopicCoefficientSerializer(serializers.Serializer):
    """One topic's own system ranking under both; null where undefined (fewer than 3 runs,
    or every run tied on the topic under either side)."""

    qid = serializers.CharField()
    kendall = serializers.FloatField(allow_null=True, help_text="Kendall's tau-b.")
    spearman = serializers.FloatField(allow_null=True)
    pearson = serializers.FloatField(allow_null=True)
    tauap_b = serializers.FloatField(allow_null=True, help_text="tau-AP with ties, symmetrised.")


class VersionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    label = serializers.CharField()


class RankingAgreementSerializer(serializers.Serializer):
    """Two system rankings by one measure: ``old`` is the reference, ``new`` the other."""

    measure = serializers.CharField()
    k = serializers.IntegerField(allow_null=True)
    runs = serializers.IntegerField()
    samples = serializers.IntegerField(
        help_text="Bootstrap resamples of the topics (0: no per-topic values, no intervals)."
    )
    topics = serializers.IntegerField(
        allow_null=True,
        help_text="The topics every run has under both, which the coefficients and their "
        "intervals are computed over (null without per-topic values).",
    )
    topics_left_out = serializers.IntegerField(
        help_text="Topics some run lacks, left out of the coefficients and intervals (the "
        "rows' means stay over each run's own topics)."
    )
    coefficients = CoefficientSerializer(many=True)
    rows = RankRowSerializer(many=True, help_text="By the reference's rank.")
    swaps = SwapSerializer(many=True, help_text="Largest reference gap first.")
    per_topic = TopicCoefficientSerializer(
        many=True, help_text="Lowest tau-b first; undefined topics last."
    )


class QrelsComparisonSerializer(RankingAgreementSerializer):
    old = VersionSerializer()
    new = VersionSerializer()
    left_out = serializers.ListField(
        child=serializers.CharField(), help_text="Runs not scored with both versions."
    )


class CompareParameters(ScoringParameters):
    old = whole_number(help_text="The reference qrels version's id (e.g. the humans').")
    new = whole_number(help_text="The other version's id (e.g. a machine judge's).")
    measure = serializers.CharField(
        required=False, max_length=100, help_text="Output name, default ndcg_cut_10."
    )
    k = serializers.IntegerField(
        required=False, min_value=1, max_value=10_000, help_text="Also over the top k runs."
    )

    def validate(self, data: dict) -> dict:
        for name in ("old", "new"):
            if data.get(name) is None:
                raise ValidationError({name: ["This parameter is required."]})
        data["qrels"] = data["old"]
        return super().validate(data)


class QrelsComparisonView(DashboardView):
    @extend_schema(
        summary="Would it change the leaderboard? Two qrels versions' system rankings compared",
        parameters=[
            CompareParameters,
            OpenApiParameter("runs", int, many=True, description="Run ids (default: every run)."),
        ],
        responses={200: QrelsComparisonSerializer},
    )
    def get(self, request):
        params = CompareParameters(data=request.query_params, context={"request": request})
        params.is_valid(raise_exception=True)
        data = params.validated_data
        versions = readable_qrels(request.user, QrelsVersion.objects.all()).in_bulk(
            [data["old"], data["new"]]
        )
        for name in ("old", "new"):
            if data[name] not in versions:
                raise NotFound(f"No qrels version {data[name]}.")
        ids = read_ids(request, "runs")
        runs = None
        if ids:
            found = visible_runs(request.user, Run.objects.select_related("system")).in_bulk(ids)
            missing = [pk for pk in ids if pk not in found]
            if missing:
                raise ValidationError({"runs": [f"No run {missing[0]}."]})
            runs = list(found.values())
        scoring = data["scoring"]
        try:
            result = rankings.compare_qrels(
                versions[data["old"]],
                versions[data["new"]],
                runs=runs,
                measure=data.get("measure"),
                measure_specs=list(scoring.specs),
                options={
                    "gain": scoring.options.gain,
                    "relevance_level": scoring.options.relevance_level,
                    "complete": scoring.options.complete,
                },
                k=data.get("k"),
                user=request.user,
            )
        except rankings.RankingError as error:
            raise ValidationError({error.field: [str(error)]}) from None
        body = rankings.comparison_body(result, versions[data["old"]], versions[data["new"]])
        return Response(QrelsComparisonSerializer(body).data)
