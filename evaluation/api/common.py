"""What the evaluation API's modules share (and the annotation API borrows): validation
messages, list filters read from the query string, and the answers to an upload."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse

from common import text_limits
from common.ids import MAX_ID
from evaluation import services
from evaluation.measures import specs
from evaluation.trec import TrecFormatError

MESSAGES = {
    "system_name_taken": "A system with this name already exists.",
    "duplicate_run": services.MESSAGES["duplicate_run"],
    "run_name_taken": services.MESSAGES["run_name_taken"],
    "unknown_run": "No run with id {pk_value}.",
    "unknown_qrels": "No qrels version with id {pk_value}.",
    "unknown_teams": "No team named {teams}.",
    "duplicate_elsewhere": "This run file is stored already, in a team you are not in: the "
    "same file cannot be stored twice.",
    "not_your_qrels": "No such qrels version among those your teams' leads share.",
    "no_measures": specs.MESSAGES["no_measures"],
    "tag_too_long": f"A tag has at most {text_limits.TAG} characters.",
    "whole_number": "Send a whole number.",
    "qrels_name": "A qrels name is letters, digits, hyphens and underscores, e.g. dl-2019.",
    "query_in_post": "Send this in the request body with the other fields, not in the query "
    "string.",
}

MAX_TAGS = text_limits.TAGS
MAX_MEASURES = specs.MAX_MEASURES


# --- scoring options: the fields of every request that scores (evaluations, run uploads,
# the dashboards' parameters), read by evaluation.measures.specs, with its messages.


class ScoringOptionField(serializers.Field):
    """One scoring option, read (and refused, in its words) by evaluation.measures.specs."""

    reader = staticmethod(lambda value: value)

    def to_internal_value(self, data):
        try:
            return type(self).reader(data)
        except specs.OptionsError as error:
            raise serializers.ValidationError(str(error)) from None

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "string", "enum": list(specs.GAINS), "default": "linear"})
class GainField(ScoringOptionField):
    reader = staticmethod(specs.read_gain)


@extend_schema_field(
    {"type": "integer", "minimum": 1, "maximum": specs.MAX_RELEVANCE_LEVEL, "default": 1}
)
class RelevanceLevelField(ScoringOptionField):
    reader = staticmethod(specs.read_relevance_level)


@extend_schema_field({"type": "boolean", "default": False})
class CompleteField(ScoringOptionField):
    reader = staticmethod(specs.read_complete)


@extend_schema_field({"type": "integer", "enum": [9, 10], "default": 9})
class TrecEvalVersionField(ScoringOptionField):
    reader = staticmethod(specs.read_trec_eval_version)


@extend_schema_field({"type": "integer", "minimum": 1, "nullable": True, "default": None})
class DepthField(ScoringOptionField):
    reader = staticmethod(specs.read_depth)


MEASURES_HELP = (
    "Measures in either dialect, repeated: trec_eval's (ndcg_cut.10, P.5,10, map) or "
    "ir_measures' (nDCG@10, P(rel=2)@5, AP, RR@10, ERR@20, RBP(p=0.8))"
)


def measures_field(help_text: str, **kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=MAX_MEASURES,
        help_text=f"{MEASURES_HELP}; {help_text}",
        **kwargs,
    )


class ScoringOptionsSerializer(serializers.Serializer):
    """The options every scoring request shares; subclasses add what is theirs."""

    gain = GainField(
        required=False, default="linear", help_text="nDCG gain: the grade, or 2^grade - 1."
    )
    relevance_level = RelevanceLevelField(
        required=False, default=1, help_text="Lowest grade that counts as relevant (-l)."
    )
    complete = CompleteField(
        required=False,
        default=False,
        help_text="Topics judged but missing from a run score 0 (-c).",
    )


def created(body, request, view_name: str, pk: int) -> Response:
    location = reverse(view_name, args=[pk], request=request)
    return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})


class TrecErrorsSerializer(serializers.Serializer):
    """A refused file: every problem as ``file:line: problem`` (the first ones), and how many
    there were in all."""

    errors = serializers.ListField(child=serializers.CharField())
    total = serializers.IntegerField()


# The parts of a refused upload's 400 that every upload shares (UPLOAD_REFUSED, and the
# leaderboard check's): the file's problems, or why the request could not be read.
FILE_PROBLEMS = {
    "type": "object",
    "description": "A refused file: its first problems as file:line: problem, "
    "and how many there were in all.",
    "properties": {
        "errors": {"type": "array", "items": {"type": "string"}},
        "total": {"type": "integer"},
    },
    "required": ["errors", "total"],
}
REQUEST_UNREADABLE = {
    "type": "object",
    "description": "Why the request could not be read (a malformed body, a malformed "
    "Idempotency-Key).",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}

# What a file upload's 400 holds: the file's problems (TrecErrorsSerializer), or, when the
# request itself is wrong (no file, a bad field), DRF's messages by field, or, when it could
# not be read at all (a malformed body, a malformed Idempotency-Key), DRF's {"detail": …}.
UPLOAD_REFUSED = OpenApiResponse(
    {
        "oneOf": [
            FILE_PROBLEMS,
            {
                "type": "object",
                "description": "Messages by field name.",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
            },
            REQUEST_UNREADABLE,
        ]
    },
    description="The file, or a field, was refused, or the request could not be read.",
)


def trec_errors(error: TrecFormatError) -> Response:
    return Response(
        {"errors": [str(line) for line in error.errors], "total": error.total},
        status=status.HTTP_400_BAD_REQUEST,
    )


class VisibleField(serializers.PrimaryKeyRelatedField):
    """An id among what the request's user may see: ``visible(user)`` gives the queryset
    (evaluation/access.py); another id is unknown, whether it exists or not. ``queryset``
    (the whole model's) only names the type for the schema."""

    def __init__(self, *, visible, **kwargs):
        self.visible = visible
        super().__init__(**kwargs)

    def get_queryset(self):
        return self.visible(self.context["request"].user)


class QueryParameters(serializers.Serializer):
    """Base of the list filters: validated like a body, so a bad filter is a 400 naming it.
    ``lookups`` maps a parameter to the queryset lookup it filters on (default: its name)."""

    lookups: dict[str, str] = {}

    @classmethod
    def read(cls, request) -> dict:
        """The filters given, as lookups: ``runs.filter(**RunFilter.read(request))``."""
        params = cls(data=request.query_params)
        params.is_valid(raise_exception=True)
        return {
            cls.lookups.get(name, name): value
            for name, value in params.validated_data.items()
            if value is not None
        }


def whole_number(**kwargs) -> serializers.IntegerField:
    # Capped at the largest database id: a larger number must be a 400, not an overflow.
    kwargs.setdefault("required", False)
    return serializers.IntegerField(
        min_value=1,
        max_value=MAX_ID,
        error_messages={"invalid": MESSAGES["whole_number"]},
        **kwargs,
    )
