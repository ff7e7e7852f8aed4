"""A campaign's progress per judge and per topic, and moving a judge's open work to another:
what the campaign endpoints' progress and reassign actions read and answer."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation import services
from annotation.api.common import MESSAGES
from annotation.models import Campaign, CampaignJudge


class JudgeProgressSerializer(serializers.Serializer):
    judge_id = serializers.IntegerField()
    username = serializers.CharField()
    done = serializers.IntegerField(help_text="Graded or skipped.")
    total = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True)
    too_fast = serializers.BooleanField(
        help_text=f"Median below {services.SUSPICIOUSLY_FAST_SECONDS} s per judgment."
    )


class TopicProgressSerializer(serializers.Serializer):
    topic_id = serializers.IntegerField(source="pair__topic_id")
    qid = serializers.CharField(source="pair__topic__qid")
    query = serializers.CharField(source="pair__topic__query")
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class ProgressSerializer(serializers.Serializer):
    judges = JudgeProgressSerializer(many=True)
    topics = TopicProgressSerializer(many=True)


class ReassignSerializer(serializers.Serializer):
    from_judge = serializers.PrimaryKeyRelatedField(
        queryset=get_user_model().objects.all(),
        error_messages={"does_not_exist": MESSAGES["unknown_user"]},
    )
    to_judge = serializers.PrimaryKeyRelatedField(
        queryset=get_user_model().objects.all(),
        error_messages={"does_not_exist": MESSAGES["unknown_user"]},
    )
    topic = serializers.CharField(
        max_length=100, required=False, help_text="A qid: move only this topic's pairs."
    )

    def validate(self, data):
        campaign: Campaign = self.context["campaign"]
        if data["from_judge"] == data["to_judge"]:
            raise ValidationError({"to_judge": MESSAGES["same_judge"]})
        if not CampaignJudge.objects.filter(campaign=campaign, judge=data["to_judge"]).exists():
            raise ValidationError(
                {"to_judge": MESSAGES["not_campaign_judge"].format(user=data["to_judge"])}
            )
        if "topic" in data:
            topic = campaign.topics.filter(qid=data["topic"]).first()
            if topic is None:
                raise ValidationError(
                    {"topic": MESSAGES["unknown_topics"].format(qids=repr(data["topic"]))}
                )
            data["topic"] = topic
        return data


class MovedSerializer(serializers.Serializer):
    moved = serializers.IntegerField(help_text="Open assignments moved to the other judge.")
