"""Campaigns (leads create and change theirs; judges read theirs), their progress and
reassignment. A campaign's judges, added and removed, are annotation/api/judges.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import IsLead, RolePermissionsMixin, team_field, team_for
from accounts.services.roles import Role
from annotation import services, tasks
from annotation.access import get_campaign_for_lead, judge_users, leads
from annotation.agreement.anchoring import MAX_BLIND_SHARE, MIN_BLIND_SHARE
from annotation.api import agreement as agreement_api
from annotation.api import live as live_api
from annotation.api import machines as machines_api
from annotation.api import suggestions as suggestions_api
from annotation.api.common import (
    MESSAGES,
    UserBriefSerializer,
    messages_of,
    start_campaign_job,
    visible_campaigns,
    whole_number,
)
from annotation.api.progress import MovedSerializer, ProgressSerializer, ReassignSerializer
from annotation.models import AdjudicationRule, Campaign, PoolOrdering
from annotation.scales import DEFINITION_CHARS, LABEL_CHARS, MAX_GRADES, SCALES
from common import text_limits
from evaluation.api.common import UPLOAD_REFUSED
from jobs.api import JobSerializer
from jobs.services.limits import fits_in_request

# --- campaigns -----------------------------------------------------------------------------


class ScaleItemSerializer(serializers.Serializer):
    grade = serializers.IntegerField(min_value=0)
    label = serializers.CharField(max_length=LABEL_CHARS)
    definition = serializers.CharField(max_length=DEFINITION_CHARS, allow_blank=True)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": list(SCALES)},
            {
                "type": "array",
                "minItems": 2,
                "maxItems": MAX_GRADES,
                "items": {
                    "type": "object",
                    "properties": {
                        "grade": {"type": "integer", "minimum": 0},
                        "label": {"type": "string", "maxLength": LABEL_CHARS},
                        "definition": {"type": "string", "maxLength": DEFINITION_CHARS},
                    },
                    "required": ["grade", "label", "definition"],
                },
            },
        ],
        "description": "A preset (0-3: TREC Deep Learning, 0-5) or the grades 0, 1, … in order.",
    }
)
class ScaleField(serializers.Field):
    """A preset name or a list of {grade, label, definition}; becomes the list."""

    def to_internal_value(self, data):
        if isinstance(data, list):
            # Too many grades is said first (annotation.scales' words), before any item.
            for index, item in enumerate(data if len(data) <= MAX_GRADES else ()):
                if not _is_scale_item(item):
                    raise ValidationError(MESSAGES["scale_item"].format(grade=index))
        elif not isinstance(data, str):
            raise ValidationError(MESSAGES["scale_type"])
        try:
            return services.resolve_scale(data)
        except DjangoValidationError as error:
            raise ValidationError(messages_of(error)) from None

    def to_representation(self, value):
        return value


def _is_scale_item(item) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("grade"), int)
        and not isinstance(item.get("grade"), bool)
        and isinstance(item.get("label"), str)
        and 0 < len(item["label"].strip()) <= LABEL_CHARS
        and isinstance(item.get("definition"), str)
        and len(item["definition"]) <= DEFINITION_CHARS
    )


class CampaignSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:campaign-detail")
    scale = ScaleItemSerializer(many=True, read_only=True)
    lead = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="A username."
    )
    role = serializers.SerializerMethodField(help_text="Whether you lead or judge it.")
    team = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="The team it belongs to (its slug)."
    )
    judges = serializers.SerializerMethodField(help_text="Null unless you lead the campaign.")
    seed = serializers.SerializerMethodField(help_text="Null unless you lead the campaign.")

    class Meta:
        model = Campaign
        fields = [
            "id",
            "url",
            *services.CAMPAIGN_FIELDS,
            "paused_at",
            "lead",
            "team",
            "role",
            "judges",
            "seed",
            "created_at",
        ]
        read_only_fields = fields

    def _leads(self, campaign) -> bool:
        return leads(self.context["request"].user, campaign)

    @extend_schema_field(serializers.ChoiceField(choices=["lead", "judge"]))
    def get_role(self, campaign) -> str:
        return "lead" if self._leads(campaign) else "judge"

    @extend_schema_field(UserBriefSerializer(many=True, allow_null=True))
    def get_judges(self, campaign) -> list[dict] | None:
        if not self._leads(campaign):
            return None
        judges = sorted(campaign.judges.all(), key=lambda user: user.username)
        return [{"id": user.pk, "username": user.username} for user in judges]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, campaign) -> int | None:
        return campaign.seed if self._leads(campaign) else None


class CampaignCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=text_limits.NAME)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=text_limits.DESCRIPTION
    )
    scale = ScaleField(required=False, default=lambda: services.resolve_scale("0-3"))
    guidelines = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=text_limits.GUIDELINES,
        help_text="Markdown.",
    )
    overlap = serializers.IntegerField(min_value=1, max_value=32767, default=1)
    relevance_threshold = serializers.IntegerField(min_value=0, max_value=32767, default=1)
    adjudication_rule = serializers.ChoiceField(
        choices=AdjudicationRule.choices, default=AdjudicationRule.MAJORITY
    )
    gold_min_accuracy = serializers.FloatField(min_value=0, max_value=1, default=0.7)
    pool_ordering = serializers.ChoiceField(
        choices=PoolOrdering.choices,
        default=PoolOrdering.RANDOM,
        help_text="The order judges get the pool in; all but random adapt to the grades.",
    )
    judges = serializers.PrimaryKeyRelatedField(
        queryset=judge_users(),
        many=True,
        required=False,
        default=list,
        error_messages={"does_not_exist": MESSAGES["not_a_judge_user"]},
    )
    team = team_field()

    # The rules that involve several fields (the threshold on the scale) are checked by
    # services.create_campaign, whose errors are keyed by field like these.


class CampaignUpdateSerializer(serializers.Serializer):
    """The fields a lead may change (judges have their own endpoint)."""

    name = serializers.CharField(max_length=text_limits.NAME, required=False)
    description = serializers.CharField(
        required=False, allow_blank=True, max_length=text_limits.DESCRIPTION
    )
    scale = ScaleField(required=False)
    guidelines = serializers.CharField(
        required=False, allow_blank=True, max_length=text_limits.GUIDELINES
    )
    overlap = serializers.IntegerField(min_value=1, max_value=32767, required=False)
    relevance_threshold = serializers.IntegerField(min_value=0, max_value=32767, required=False)
    adjudication_rule = serializers.ChoiceField(choices=AdjudicationRule.choices, required=False)
    gold_min_accuracy = serializers.FloatField(min_value=0, max_value=1, required=False)
    pool_ordering = serializers.ChoiceField(choices=PoolOrdering.choices, required=False)
    machine_grades_adjudicate = serializers.BooleanField(
        required=False, help_text="Machine judges' grades count in adjudication beside humans'."
    )
    machine_grades_fill = serializers.BooleanField(
        required=False,
        help_text="A publication gives pairs no human graded their machine grades (flagged).",
    )
    suggestions_from = whole_number(
        allow_null=True,
        help_text="A machine judge of the campaign whose grade judges see as a suggestion "
        "(null: none). Locked, with blind_share, once a human has graded with it.",
    )
    blind_share = serializers.FloatField(
        min_value=MIN_BLIND_SHARE,
        max_value=MAX_BLIND_SHARE,
        required=False,
        help_text="The share of each judge's pairs shown without the suggestion (the control).",
    )
    gate_threshold = serializers.FloatField(
        min_value=0,
        max_value=0.99,
        required=False,
        help_text="The gullibility gate blocks a machine from filling qrels when a probe's "
        "rise in relevant calls is above this share (its interval's lower end); 0.02 = 2 points.",
    )
    # The rules that involve the campaign (threshold on the scale, grades in use) are checked
    # by services.update_campaign, under the lock it saves with.


@extend_schema_view(
    list=extend_schema(summary="Campaigns you lead or judge"),
    retrieve=extend_schema(summary="A campaign you lead or judge"),
)
class CampaignViewSet(RolePermissionsMixin, viewsets.ReadOnlyModelViewSet):
    """Campaigns. Leads create campaigns and change the ones they lead; judges read the ones
    they judge (``role`` says which; ``judges`` and ``seed`` are null for judges)."""

    serializer_class = CampaignSerializer
    lookup_value_converter = "int"
    # put and delete are for one gold pair (gold/<pair>/); the campaign itself has neither.
    http_method_names = ["get", "post", "put", "patch", "delete", "head", "options"]
    action_permissions = {"create": [IsLead]}

    def get_queryset(self):
        return (
            visible_campaigns(self.request.user)
            .select_related("lead", "team")
            .prefetch_related("judges")
            .order_by("-created_at", "-pk")
        )

    def _led(self) -> Campaign:
        # What only its lead may do: the one rule of a lead's campaign, 404 for the others.
        return get_campaign_for_lead(
            self.request.user, self.kwargs["pk"], campaigns=self.get_queryset()
        )

    def _answer(self, campaign: Campaign, code: int = status.HTTP_200_OK) -> Response:
        body = CampaignSerializer(campaign, context=self.get_serializer_context()).data
        headers = {}
        if code == status.HTTP_201_CREATED:
            # The serializer's url is a Hyperlink (a str subclass): WSGI wants a plain str.
            headers["Location"] = str(body["url"])
        return Response(body, status=code, headers=headers)

    @extend_schema(
        summary="Create a campaign (leads)",
        request=CampaignCreateSerializer,
        responses={201: CampaignSerializer},
    )
    def create(self, request):
        form = CampaignCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        team = team_for(request.user, data.pop("team", None), Role.LEAD)
        try:
            campaign = services.create_campaign(lead=request.user, team=team, **data)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from None
        return self._answer(self.get_queryset().get(pk=campaign.pk), status.HTTP_201_CREATED)

    @extend_schema(
        summary="Change a campaign you lead (a job when the change writes more than "
        "SYNC_WRITE_ROWS rows: a larger overlap's assignments, machine grades counted anew)",
        request=CampaignUpdateSerializer,
        responses={200: CampaignSerializer, 202: JobSerializer},
    )
    def partial_update(self, request, pk=None):
        campaign = self._led()
        form = CampaignUpdateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        rows = services.update_writes(campaign=campaign, changes=form.validated_data)
        if not fits_in_request(rows):
            return start_campaign_job(
                request,
                campaign,
                kind="edit_campaign",
                title="Change the campaign",
                task=tasks.edit_campaign_job,
                changes=form.validated_data,
            )
        try:
            services.update_campaign(campaign=campaign, **form.validated_data)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from None
        return self._answer(self.get_queryset().get(pk=campaign.pk))

    @extend_schema(summary="Per judge and per topic done/total", responses=ProgressSerializer)
    @action(detail=True)
    def progress(self, request, pk=None):
        campaign = self._led()
        body = {
            "judges": [vars(row) for row in services.judge_progress(campaign=campaign)],
            "topics": services.topic_progress(campaign=campaign),
        }
        return Response(ProgressSerializer(body).data)

    @extend_schema(
        summary="Move one judge's open pairs to another judge of the campaign (a job when "
        "they are more than SYNC_WRITE_ROWS)",
        request=ReassignSerializer,
        responses={200: MovedSerializer, 202: JobSerializer},
    )
    @action(detail=True, methods=["post"])
    def reassign(self, request, pk=None):
        campaign = self._led()
        form = ReassignSerializer(data=request.data, context={"campaign": campaign})
        form.is_valid(raise_exception=True)
        data = form.validated_data
        work = services.open_work(
            campaign=campaign, judge=data["from_judge"], topic=data.get("topic")
        )
        if not fits_in_request(work):
            topic = data.get("topic")
            return start_campaign_job(
                request,
                campaign,
                kind="reassign",
                title=f"Move {data['from_judge']}'s open pairs to {data['to_judge']}",
                task=tasks.reassign_job,
                from_judge=data["from_judge"].pk,
                to_judge=data["to_judge"].pk,
                topic=topic.pk if topic is not None else None,
            )
        try:
            moved = services.reassign(
                campaign=campaign,
                from_judge=data["from_judge"],
                to_judge=data["to_judge"],
                topic=data.get("topic"),
            )
        except DjangoValidationError as error:
            raise ValidationError({"to_judge": messages_of(error)}) from None
        return Response({"moved": moved})

    @extend_schema(
        summary="The agreement report: kappa, alpha, per judge pair, topic and judge",
        parameters=[agreement_api.AgreementParameters],
        responses=agreement_api.AgreementReportSerializer,
    )
    @action(detail=True)
    def agreement(self, request, pk=None):
        return agreement_api.agreement_response(request, self._led())

    @extend_schema(
        summary="The live leaderboard of the pooled runs: bounds, intervals, settled pairs",
        parameters=[live_api.LiveParameters],
        responses=live_api.LiveBoardSerializer,
    )
    @action(detail=True)
    def live(self, request, pk=None):
        return live_api.live_response(request, self._led())

    @extend_schema(
        methods=["GET"],
        summary="The stop rule and what it did (when it paused judging, after how many judgments)",
        responses=live_api.StopRuleSerializer,
    )
    @extend_schema(
        methods=["PUT"],
        summary="Choose the stop rule: pause handing out pairs once the ranking is settled",
        request=live_api.StopRuleSerializer,
        responses=live_api.StopRuleSerializer,
    )
    @action(detail=True, methods=["get", "put"], url_path="stop-rule")
    def stop_rule(self, request, pk=None):
        return live_api.stop_rule_response(request, self._led())

    @extend_schema(
        summary="Resume handing out pairs after the stop rule paused judging",
        request=None,
        responses=live_api.StopRuleSerializer,
    )
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return live_api.resume_response(request, self._led())

    @extend_schema(
        summary="Machine judges against the humans: kappas, lean, confusion, topics worst first",
        parameters=[agreement_api.AgreementParameters],
        responses=machines_api.MachineAgreementSerializer,
    )
    @action(detail=True, url_path="agreement/machines")
    def machine_agreement(self, request, pk=None):
        return machines_api.machine_agreement_response(request, self._led())

    @extend_schema(
        summary="Post-editing: grades made with the machine's suggestion in view against blind",
        responses=suggestions_api.SuggestionsReportSerializer,
    )
    @action(detail=True, url_path="agreement/suggestions")
    def suggestions(self, request, pk=None):
        return suggestions_api.suggestions_response(self._led())

    @extend_schema(
        summary="Mark calibration (gold) pairs from a file of known grades; all or nothing",
        request={"multipart/form-data": agreement_api.GoldUploadSerializer},
        responses={
            200: agreement_api.GoldImportedSerializer,
            400: UPLOAD_REFUSED,
        },
    )
    @action(detail=True, methods=["post"])
    def gold(self, request, pk=None):
        return agreement_api.gold_response(request, self._led())

    @extend_schema(
        methods=["PUT"],
        summary="Mark one pool pair as a gold pair with a known grade, or change its grade",
        request=agreement_api.GoldGradeSerializer,
        responses=agreement_api.GoldPairSerializer,
    )
    @extend_schema(
        methods=["DELETE"],
        summary="Make a gold pair an ordinary pair again (its judges' grades stay)",
        request=None,
        responses=agreement_api.GoldPairSerializer,
    )
    @action(detail=True, methods=["put", "delete"], url_path="gold/<int:pair>")
    def gold_pair(self, request, pk=None, pair=None):
        return agreement_api.gold_pair_response(request, self._led(), pair)

    @extend_schema(
        summary="Each judge against the gold pairs: accuracy, error, kappa; who is flagged",
        parameters=[agreement_api.AgreementParameters],
        responses=agreement_api.CalibrationSerializer,
    )
    @action(detail=True)
    def calibration(self, request, pk=None):
        return agreement_api.calibration_response(request, self._led())
