"""The run diff as JSON (GET /api/v1/diff/) and its "send both runs' unjudged top k to
judging" (POST /api/v1/diff/unjudged/). Leads and engineers read, as every run endpoint; a
campaign's lead sends. The numbers are the page's (evaluation.dashboards.diff)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from evaluation import dashboards
from evaluation.access import visible_runs
from evaluation.analysis import rundiff
from evaluation.api.common import MESSAGES, whole_number
from evaluation.api.dashboard_serializers import (
    NOT_SCORED,
    BoundsSerializer,
    NotFoundSerializer,
    bounds_body,
    scoring_body,
)
from evaluation.api.dashboards import (
    DashboardView,
    ScoringParameters,
    SentToJudgingSerializer,
    sent_response,
)
from evaluation.dashboards import diff
from evaluation.judging import judging
from evaluation.models import Run


class DiffParameters(ScoringParameters):
    a = whole_number(required=True, help_text="The reference run's id (A).")
    b = whole_number(required=True, help_text="The other run's id (B).")
    measure = serializers.CharField(
        required=False,
        max_length=100,
        help_text="The output name whose delta orders topics, e.g. ndcg_cut_10.",
    )
    k = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    depth = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=diff.MAX_DEPTH,
        help_text="Ranks compared and listed (default max(k, 20)).",
    )
    order = serializers.ChoiceField(choices=list(rundiff.ORDERS), default="measure")
    p = serializers.FloatField(
        default=rundiff.DEFAULT_P,
        min_value=0.0,
        max_value=1.0,
        help_text="RBO's persistence, strictly between 0 and 1.",
    )
    qid = serializers.CharField(
        required=False, max_length=100, help_text="The topic listed rank by rank."
    )


class SideBySideSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    docno_a = serializers.CharField(allow_null=True)
    grade_a = serializers.IntegerField(allow_null=True, help_text="None: unjudged.")
    other_a = serializers.IntegerField(allow_null=True, help_text="Its rank in B (None: A only).")
    docno_b = serializers.CharField(allow_null=True)
    grade_b = serializers.IntegerField(allow_null=True)
    other_b = serializers.IntegerField(allow_null=True, help_text="Its rank in A (None: B only).")


class TopicChangeSerializer(serializers.Serializer):
    qid = serializers.CharField()
    value_a = serializers.FloatField(allow_null=True)
    value_b = serializers.FloatField(allow_null=True)
    delta = serializers.FloatField(allow_null=True, help_text="B − A.")
    flips = serializers.BooleanField(help_text="Against the sign of the mean delta.")
    rbo = serializers.FloatField()
    tau_ap = serializers.FloatField(allow_null=True, help_text="None: < 2 documents in common.")
    common = serializers.IntegerField()
    only_a = serializers.IntegerField()
    only_b = serializers.IntegerField()
    move = serializers.IntegerField()
    move_docno = serializers.CharField(allow_null=True)
    move_from = serializers.IntegerField(allow_null=True)
    move_to = serializers.IntegerField(allow_null=True)
    entering = serializers.IntegerField(help_text="Unjudged documents entering B's top k.")
    unjudged_a = serializers.IntegerField()
    unjudged_b = serializers.IntegerField()


class ShownTopicSerializer(serializers.Serializer):
    qid = serializers.CharField()
    rows = SideBySideSerializer(many=True)
    bounds_a = BoundsSerializer(allow_null=True)
    bounds_b = BoundsSerializer(allow_null=True)


class RunDiffSerializer(serializers.Serializer):
    scoring = serializers.DictField()
    a = serializers.IntegerField()
    a_label = serializers.CharField()
    b = serializers.IntegerField()
    b_label = serializers.CharField()
    measure = serializers.CharField()
    k = serializers.IntegerField()
    depth = serializers.IntegerField()
    order = serializers.CharField()
    p = serializers.FloatField()
    totals = serializers.DictField()
    topics = TopicChangeSerializer(many=True, help_text="Most different first.")
    topic = ShownTopicSerializer(allow_null=True)


def _run(request, pk: int) -> Run:
    run = visible_runs(request.user, Run.objects.select_related("system")).filter(pk=pk).first()
    if run is None:
        raise NotFound(MESSAGES["unknown_run"].format(pk_value=pk))
    return run


class RunDiffView(DashboardView):
    """Run B against run A, topic by topic."""

    @extend_schema(
        summary="Diff two runs: topics most different first, one topic rank by rank",
        parameters=[DiffParameters],
        responses={200: RunDiffSerializer, 404: NOT_SCORED},
    )
    def get(self, request):
        params = DiffParameters(data=request.query_params, context={"request": request})
        params.is_valid(raise_exception=True)
        data = params.validated_data
        try:
            view = diff.build_run_diff(
                data["scoring"],
                _run(request, data["a"]),
                _run(request, data["b"]),
                measure=data.get("measure"),
                k=data.get("k"),
                depth=data.get("depth"),
                order=data["order"],
                p=data["p"],
                qid=data.get("qid"),
            )
        except dashboards.NotScored as error:
            raise NotFound(str(error)) from None
        except diff.DiffError as error:
            raise ValidationError({error.field: [str(error)]}) from None
        body = {
            "scoring": scoring_body(view.scoring),
            "a": view.a.pk,
            "a_label": str(view.a),
            "b": view.b.pk,
            "b_label": str(view.b),
            **view.summary(),
            "topic": None
            if view.qid is None
            else {
                "qid": view.qid,
                "rows": [vars(row) for row in view.rows],
                "bounds_a": bounds_body(view.bounds.get("a")),
                "bounds_b": bounds_body(view.bounds.get("b")),
            },
        }
        return Response(RunDiffSerializer(body).data)


class DiffSendParameters(ScoringParameters):
    campaign = whole_number(required=True, help_text="A campaign you lead.")
    a = whole_number(required=True)
    b = whole_number(required=True)
    k = serializers.IntegerField(min_value=1, max_value=1000, help_text="Documents per topic.")
    qid = serializers.CharField(
        required=False, max_length=100, help_text="One topic (default: every topic)."
    )


class DiffUnjudgedView(DashboardView):
    """Both runs' unjudged top k go to a campaign's pool."""

    @extend_schema(
        summary="Send the unjudged top-k documents of two runs (one topic or all) to a campaign",
        request=DiffSendParameters,
        responses={200: SentToJudgingSerializer, 404: NotFoundSerializer},
    )
    def post(self, request):
        params = DiffSendParameters(data=request.data, context={"request": request})
        params.is_valid(raise_exception=True)
        data, scoring = params.validated_data, params.validated_data["scoring"]
        campaign = judging().campaign_for_lead(request.user, data["campaign"])
        a, b = _run(request, data["a"]), _run(request, data["b"])
        pairs = diff.unjudged_of_both(scoring, a, b, k=data["k"], qid=data.get("qid", ""))
        return sent_response(campaign, pairs, [a, b])
