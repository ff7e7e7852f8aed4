"""A campaign's agreement report, its calibration against gold pairs, gold import and one
pair marked gold or unmarked over the API, for its lead (the actions ``agreement``,
``calibration``, ``gold`` and ``gold_pair`` of the campaign viewset in
annotation/api/campaigns.py). Thin over annotation/services/agreement.py and
annotation/services/gold.py; the report and the calibration have the shapes of
annotation/services/agreement_export.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from annotation import services
from annotation.api.common import messages_of
from annotation.models import Campaign, Pair
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export
from annotation.services import gold as gold_service
from evaluation.api.common import QueryParameters, trec_errors
from evaluation.trec import TrecFormatError
from jobs.services.limits import sync_write_limit

MESSAGES = {
    "gold_too_large": "Gold files are read at once: at most {limit} KB.",
    "no_such_pair": "No such pair in this campaign.",
}


class AgreementStatisticSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="Null when undefined.")
    low = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval.")
    high = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField(help_text="Pairs the value is computed over.")
    se = serializers.FloatField(allow_null=True, help_text="Analytic standard error, if known.")
    reason = serializers.CharField(help_text="Why the value is undefined (empty if it is not).")
    note = serializers.CharField(help_text="A caveat about a defined value, or empty.")


class BandedAgreementStatisticSerializer(AgreementStatisticSerializer):
    band = serializers.CharField(
        help_text="Landis & Koch's words for a kappa, Krippendorff's for an alpha."
    )


class AgreementOverallSerializer(serializers.Serializer):
    fleiss_kappa = BandedAgreementStatisticSerializer()
    fleiss_kappa_at_threshold = BandedAgreementStatisticSerializer(
        help_text="Relevant (grade >= the threshold) or not."
    )
    alpha_ordinal = BandedAgreementStatisticSerializer()
    alpha_interval = BandedAgreementStatisticSerializer()
    observed = AgreementStatisticSerializer(
        help_text="Share of pairs of grades of a pair that agree."
    )
    within_one = AgreementStatisticSerializer(help_text="… that are at most one grade apart.")


class AgreementJudgePairSerializer(serializers.Serializer):
    judge_a = serializers.CharField()
    judge_b = serializers.CharField()
    shared_pairs = serializers.IntegerField()
    kappa = BandedAgreementStatisticSerializer(help_text="Cohen's kappa with the chosen weights.")
    kappa_unweighted = BandedAgreementStatisticSerializer()
    kappa_at_threshold = BandedAgreementStatisticSerializer()
    observed = AgreementStatisticSerializer()
    within_one = AgreementStatisticSerializer()
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Counts over the scale: rows judge_a's grade, columns judge_b's.",
    )


class TopicAgreementSerializer(serializers.Serializer):
    topic_id = serializers.IntegerField()
    qid = serializers.CharField()
    query = serializers.CharField()
    pairs = serializers.IntegerField(help_text="Pairs with any grade.")
    multiply_judged = serializers.IntegerField(help_text="Pairs graded by two or more judges.")
    disputed = serializers.IntegerField(help_text="Of those, pairs graded differently.")
    alpha_ordinal = BandedAgreementStatisticSerializer()
    observed = AgreementStatisticSerializer()


class JudgeProfileSerializer(serializers.Serializer):
    judge = serializers.CharField()
    judged = serializers.IntegerField(help_text="Pairs graded.")
    grade_counts = serializers.ListField(
        child=serializers.IntegerField(), help_text="Grades given, in the order of ``scale``."
    )
    leniency = AgreementStatisticSerializer(
        help_text="Mean of (grade − the other judges' median grade) over shared pairs."
    )
    tendency = serializers.ChoiceField(choices=["lenient", "strict", "in line", ""])


class AgreementCampaignSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class AgreementCountsSerializer(serializers.Serializer):
    pairs = serializers.IntegerField(help_text="Pairs with any grade.")
    multiply_judged = serializers.IntegerField()
    judgments = serializers.IntegerField(help_text="Grades (skips do not count).")
    judges = serializers.IntegerField()


class AgreementReportSerializer(serializers.Serializer):
    campaign = AgreementCampaignSerializer()
    weights = serializers.ChoiceField(choices=list(agreement_service.WEIGHTS))
    scale = serializers.ListField(child=serializers.IntegerField())
    relevance_threshold = serializers.IntegerField()
    resamples = serializers.IntegerField()
    seed = serializers.IntegerField()
    confidence = serializers.FloatField()
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="When these numbers were computed from the judgments."
    )
    recomputing = serializers.BooleanField(
        help_text="Judgments changed since computed_at; a recomputation is queued."
    )
    counts = AgreementCountsSerializer()
    overall = AgreementOverallSerializer()
    pairwise = AgreementJudgePairSerializer(many=True)
    topics = TopicAgreementSerializer(many=True, help_text="Worst agreement first.")
    judges = JudgeProfileSerializer(many=True)


class AgreementParameters(QueryParameters):
    weights = serializers.ChoiceField(
        choices=list(agreement_service.WEIGHTS),
        default=agreement_service.DEFAULT_WEIGHTS,
        help_text="Weights of pairwise Cohen's kappa.",
    )


class GoldUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="qid docno grade, or TREC qrels lines qid iter docno grade; plain or gzip."
    )

    def validate_file(self, upload):
        limit = gold_service.MAX_GOLD_BYTES
        if upload.size > limit:
            raise ValidationError(MESSAGES["gold_too_large"].format(limit=limit // 1024))
        return upload


class GoldImportedSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="Pairs of the file, now gold with its grade.")
    added = serializers.IntegerField(help_text="Of those, pairs new to the pool.")
    already = serializers.IntegerField(help_text="Of those, pairs already in the pool.")
    new_documents = serializers.IntegerField(help_text="Placeholders for docnos not yet here.")
    assigned = serializers.IntegerField(help_text="New assignments (every judge gets each).")


def agreement_response(request, campaign: Campaign) -> Response:
    weights = AgreementParameters.read(request)["weights"]
    result = agreement_service.campaign_agreement(campaign=campaign, weights=weights)
    return Response(AgreementReportSerializer(agreement_export.report_data(result)).data)


def gold_response(request, campaign: Campaign) -> Response:
    form = GoldUploadSerializer(data=request.data)
    form.is_valid(raise_exception=True)
    upload = form.validated_data["file"]
    try:
        done = gold_service.import_gold(
            campaign=campaign,
            source=upload,
            filename=upload.name,
            max_rows=sync_write_limit(),  # more is a 413 (config/busy.py) saying what to do
        )
    except TrecFormatError as error:
        return trec_errors(error)
    except DjangoValidationError as error:
        raise ValidationError({"file": messages_of(error)}) from None
    change = done.change
    body = {
        "marked": done.marked,
        "added": change.added,
        "already": change.already,
        "new_documents": change.new_documents,
        "assigned": change.assigned,
    }
    return Response(GoldImportedSerializer(body).data)


# --- calibration -----------------------------------------------------------------------------


class CalibrationGoldPairSerializer(serializers.Serializer):
    pair = serializers.IntegerField()
    qid = serializers.CharField()
    docno = serializers.CharField()
    grade = serializers.IntegerField(help_text="The known grade.")
    graded_by = serializers.IntegerField(help_text="Judges who have graded it.")


class JudgeCalibrationSerializer(serializers.Serializer):
    judge = serializers.CharField()
    # A CharField, not a ChoiceField: another "status" enum would need a schema name override.
    status = serializers.CharField(
        help_text="ok; flagged: below a bar; unchecked: no gold pair graded, or kappa undefined."
    )
    reasons = serializers.ListField(child=serializers.CharField())
    gold_pairs = serializers.IntegerField(help_text="Gold pairs the judge has graded.")
    accuracy = AgreementStatisticSerializer()
    mean_absolute_error = AgreementStatisticSerializer(help_text="In grades.")
    kappa = AgreementStatisticSerializer(help_text="Unweighted Cohen's kappa against gold.")
    weighted_kappa = AgreementStatisticSerializer(help_text="With the chosen weights.")


class CalibrationSerializer(serializers.Serializer):
    campaign = AgreementCampaignSerializer()
    weights = serializers.ChoiceField(choices=list(agreement_service.WEIGHTS))
    min_accuracy = serializers.FloatField(help_text="The campaign's bar on accuracy.")
    min_kappa = serializers.FloatField(help_text="The bar on weighted kappa against gold.")
    gold = CalibrationGoldPairSerializer(many=True)
    judges = JudgeCalibrationSerializer(many=True)
    flagged = serializers.ListField(child=serializers.CharField(), help_text="Judges flagged.")


def calibration_response(request, campaign: Campaign) -> Response:
    weights = AgreementParameters.read(request)["weights"]
    result = gold_service.campaign_calibration(campaign=campaign, weights=weights)
    return Response(CalibrationSerializer(agreement_export.calibration_data(result, campaign)).data)


# --- one gold pair -------------------------------------------------------------------------------


class GoldGradeSerializer(serializers.Serializer):
    grade = serializers.IntegerField(help_text="The known grade, on the campaign's scale.")


class GoldPairSerializer(serializers.Serializer):
    pair = serializers.IntegerField(source="pk")
    qid = serializers.CharField(source="topic.qid")
    docno = serializers.CharField(source="document.docno")
    gold_grade = serializers.IntegerField(allow_null=True, help_text="Null: not a gold pair.")
    assigned = serializers.IntegerField(help_text="New assignments (every judge gets gold).")


def gold_pair_response(request, campaign: Campaign, pair_id: int) -> Response:
    """PUT {grade}: the pair becomes a gold pair with that known grade (or changes it);
    DELETE: it is an ordinary pair again (its judges' grades stay). Both are idempotent."""
    pair = (
        Pair.objects.select_related("topic", "document")
        .filter(pk=pair_id, campaign=campaign)
        .first()
    )
    if pair is None:
        raise NotFound(MESSAGES["no_such_pair"])
    grade = None
    if request.method == "PUT":
        form = GoldGradeSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        grade = form.validated_data["grade"]
    try:
        change = services.mark_gold(campaign=campaign, pair_id=pair.pk, grade=grade)
    except DjangoValidationError as error:
        raise ValidationError({"grade": messages_of(error)}) from None
    pair.refresh_from_db(fields=["gold_grade"])
    pair.assigned = change.assigned
    return Response(GoldPairSerializer(pair).data)
