"""A leaderboard in the TREC ecosystem's layouts (GET /api/v1/leaderboard/download/) and a
leaderboard computed elsewhere checked against ours (POST /api/v1/leaderboard/check/).
Leads and engineers, as the leaderboard; the layouts are evaluation.trec.leaderboards'."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from evaluation.api.common import FILE_PROBLEMS, REQUEST_UNREADABLE
from evaluation.api.dashboards import DashboardView, ScoringParameters
from evaluation.api.qrels import PlainTextRenderer
from evaluation.api.rankings import RankingAgreementSerializer
from evaluation.dashboards import leaderboard_io, rankings
from evaluation.dashboards.rankings import agreement_body
from evaluation.trec import leaderboards as formats
from evaluation.trec.leaderboards import CONTENT_TYPES, SUFFIXES


class DownloadParameters(ScoringParameters):
    layout = serializers.ChoiceField(
        choices=list(formats.DOWNLOAD_LAYOUTS),
        help_text="trec_eval_zip: a zip of one trec_eval -q file per run.",
    )


class LeaderboardDownloadView(DashboardView):
    """Every scored run's per-topic and "all" values, one a line."""

    renderer_classes = [JSONRenderer, PlainTextRenderer]

    @extend_schema(
        summary="The leaderboard as trec_eval -q text (one file, or a zip of one per run), "
        "ir_measures, tot or jsonl",
        parameters=[DownloadParameters],
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "application/zip"): OpenApiTypes.BINARY,
        },
    )
    def get(self, request):
        params = DownloadParameters(data=request.query_params, context={"request": request})
        params.is_valid(raise_exception=True)
        scoring, layout = params.validated_data["scoring"], params.validated_data["layout"]
        text = leaderboard_io.download(scoring, layout)
        response = HttpResponse(
            text, content_type=CONTENT_TYPES.get(layout, "text/plain; charset=utf-8")
        )
        name = f"leaderboard-{scoring.qrels.pk}-{layout}.{SUFFIXES[layout]}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class CheckUploadSerializer(ScoringParameters):
    file = serializers.FileField(help_text="Per-topic and all values, one a line.")
    layout = serializers.ChoiceField(choices=list(formats.LAYOUTS))
    measure = serializers.CharField(
        required=False,
        max_length=100,
        help_text="Rank the runs by this measure (ndcg_cut_10, ndcg_cut.10 or nDCG@10); "
        "default nDCG@10, else the first measure both leaderboards hold.",
    )
    k = serializers.IntegerField(
        required=False, min_value=1, max_value=10_000, help_text="Also over our top k runs."
    )

    def validate_file(self, upload):
        if upload.size > leaderboard_io.MAX_UPLOAD_BYTES:
            raise serializers.ValidationError(leaderboard_io.MESSAGES["too_big"])
        return upload


class DifferenceSerializer(serializers.Serializer):
    run = serializers.CharField()
    topic = serializers.CharField()
    measure = serializers.CharField()
    ours = serializers.FloatField()
    theirs = serializers.FloatField()
    delta = serializers.FloatField(help_text="Theirs − ours.")


class CheckResultSerializer(serializers.Serializer):
    compared = serializers.IntegerField(help_text="Entries both leaderboards hold.")
    same = serializers.IntegerField(help_text="Of those, equal within the tolerance.")
    tolerance = serializers.FloatField()
    max_delta = serializers.FloatField()
    differences = DifferenceSerializer(many=True, help_text="Largest first.")
    only_ours = serializers.IntegerField()
    only_theirs = serializers.IntegerField()
    unknown_runs = serializers.ListField(child=serializers.CharField())
    unknown_measures = serializers.ListField(child=serializers.CharField())
    ranking = RankingAgreementSerializer(
        allow_null=True,
        help_text="Their ranking of the runs against ours, meta-evaluated (old: ours, new: "
        "theirs); null when fewer than 3 runs are in both.",
    )


# A refused file (its bad lines), or a refused field: DRF's messages by field, where a list
# field (measures) nests its items' messages by position; or DRF's {"detail": …}.
CHECK_REFUSED = OpenApiResponse(
    {
        "oneOf": [
            FILE_PROBLEMS,
            {
                "type": "object",
                "description": "Messages by field name (a list field's by item position).",
                "additionalProperties": {
                    "oneOf": [
                        {"type": "array", "items": {"type": "string"}},
                        {
                            "type": "object",
                            "additionalProperties": {"type": "array", "items": {"type": "string"}},
                        },
                    ]
                },
            },
            REQUEST_UNREADABLE,
        ]
    },
    description="The file, or a field, or the request itself was refused.",
)


class LeaderboardCheckView(DashboardView):
    """Their numbers against ours, entry by entry, and their ranking of the runs against
    ours (the check page's meta-evaluation, from the same service)."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Check a leaderboard computed elsewhere against ours",
        request={"multipart/form-data": CheckUploadSerializer},
        responses={200: CheckResultSerializer, 400: CHECK_REFUSED},
    )
    def post(self, request):
        params = CheckUploadSerializer(data=request.data, context={"request": request})
        params.is_valid(raise_exception=True)
        data = params.validated_data
        upload = data["file"]
        try:
            result, ranking = leaderboard_io.check_with_rankings(
                data["scoring"],
                upload.read(),
                data["layout"],
                filename=upload.name,
                measure=data.get("measure"),
                k=data.get("k"),
            )
        except formats.LeaderboardFormatError as error:
            return Response({"errors": error.errors, "total": error.total}, status=400)
        except rankings.RankingError as error:
            raise ValidationError({error.field: [str(error)]}) from None
        body = {
            "compared": result.compared,
            "same": result.same,
            "tolerance": result.tolerance,
            "max_delta": result.max_delta,
            "differences": [
                {
                    "run": d.run,
                    "topic": d.topic,
                    "measure": d.measure,
                    "ours": d.ours,
                    "theirs": d.theirs,
                    "delta": d.delta,
                }
                for d in result.differences
            ],
            "only_ours": result.only_ours,
            "only_theirs": result.only_theirs,
            "unknown_runs": result.unknown_runs,
            "unknown_measures": result.unknown_measures,
            "ranking": agreement_body(ranking) if ranking else None,
        }
        return Response(CheckResultSerializer(body).data)
