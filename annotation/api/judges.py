"""A campaign's judges, for its lead: the list, adding a judge (pairs short of judges go to
them) and removing one (their grades stay, their open pairs go to the other judges). Thin
over annotation/services/assignments.py; a change of more than a request may write
(SYNC_WRITE_ROWS assignments, jobs/services/limits.py) is a job, answered 202."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation import services, tasks
from annotation.access import judge_users
from annotation.api.common import MESSAGES, LedCampaignMixin, start_campaign_job
from annotation.models import CampaignJudge
from jobs.api import JobSerializer
from jobs.services.limits import fits_in_request


class CampaignJudgeSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="judge_id", read_only=True, help_text="The user's id.")
    username = serializers.CharField(source="judge.username", read_only=True)

    class Meta:
        model = CampaignJudge
        fields = ["id", "username", "added_at"]
        read_only_fields = fields


class AddJudgeSerializer(serializers.Serializer):
    judge = serializers.PrimaryKeyRelatedField(
        queryset=judge_users(), error_messages={"does_not_exist": MESSAGES["not_a_judge_user"]}
    )

    def validate_judge(self, judge):
        campaign = self.context["campaign"]
        if not judge_users([campaign.team_id]).filter(pk=judge.pk).exists():
            raise ValidationError(MESSAGES["not_a_judge_user"])
        if CampaignJudge.objects.filter(campaign=self.context["campaign"], judge=judge).exists():
            raise ValidationError(MESSAGES["already_judge"].format(user=judge))
        return judge


class JudgeAddedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    assigned = serializers.IntegerField(help_text="Pairs given to the new judge.")


class JudgeRemovedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    redistributed = serializers.IntegerField(
        help_text="Their open pairs, given to the other judges (their grades stay)."
    )


@extend_schema_view(list=extend_schema(summary="A campaign's judges"))
class JudgeViewSet(
    LedCampaignMixin,
    RolePermissionsMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """A campaign's judges, for its lead. Removing a judge keeps their grades and gives their
    open pairs to the other judges."""

    serializer_class = CampaignJudgeSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        if self._fake():
            return CampaignJudge.objects.none()
        return (
            CampaignJudge.objects.filter(campaign=self.campaign)
            .select_related("judge")
            .order_by("judge__username")
        )

    @extend_schema(
        summary="Add a judge; pairs short of judges go to them (a job when that is more "
        "than SYNC_WRITE_ROWS assignments)",
        request=AddJudgeSerializer,
        responses={201: JudgeAddedSerializer, 202: JobSerializer},
    )
    def create(self, request, campaign_pk=None):
        form = AddJudgeSerializer(data=request.data, context={"campaign": self.campaign})
        form.is_valid(raise_exception=True)
        judge = form.validated_data["judge"]
        judges = CampaignJudge.objects.filter(campaign=self.campaign).count() + 1
        if not fits_in_request(services.assignments_due(campaign=self.campaign, judges=judges)):
            return start_campaign_job(
                request,
                self.campaign,
                kind="edit_campaign",
                title=f"Add judge {judge}",
                task=tasks.edit_campaign_job,
                add_judges=[judge.pk],
            )
        assigned = services.add_judge(campaign=self.campaign, judge=judge)
        body = {"id": judge.pk, "username": judge.username, "assigned": assigned}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Remove a judge; their open pairs go to the other judges (a job when they "
        "hold more than SYNC_WRITE_ROWS)",
        responses={200: JudgeRemovedSerializer, 202: JobSerializer},
    )
    def destroy(self, request, campaign_pk=None, pk=None):
        # judge__pk, not judge_id: only the former turns an out-of-range id into "no match".
        membership = get_object_or_404(self.get_queryset(), judge__pk=pk)
        if not fits_in_request(services.open_work(campaign=self.campaign, judge=membership.judge)):
            return start_campaign_job(
                request,
                self.campaign,
                kind="edit_campaign",
                title=f"Remove judge {membership.judge}",
                task=tasks.edit_campaign_job,
                remove_judges=[membership.judge_id],
            )
        moved = services.remove_judge(campaign=self.campaign, judge=membership.judge)
        return Response({"id": membership.judge_id, "redistributed": moved})
