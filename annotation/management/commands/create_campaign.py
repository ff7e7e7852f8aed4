import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.services.roles import Role, has_role
from accounts.services.teams import choose_team
from annotation import services
from annotation.access import judge_users
from annotation.api.campaigns import CampaignCreateSerializer
from annotation.api.common import MESSAGES as API_MESSAGES
from annotation.models import AdjudicationRule, PoolOrdering
from annotation.scales import SCALES

# The API's field names as this command's options, for its error messages.
OPTIONS = {
    "name": "--name",
    "description": "--description",
    "scale": "--scale",
    "guidelines": "--guidelines",
    "overlap": "--judges-per-pair",
    "relevance_threshold": "--relevance-threshold",
    "adjudication_rule": "--adjudication-rule",
    "gold_min_accuracy": "--gold-min-accuracy",
    "pool_ordering": "--pool-ordering",
    "judges": "--judge",
}


class Command(BaseCommand):
    help = (
        "Create a campaign, as POST /api/v1/campaigns/ and the New campaign page do (the same "
        "checks and messages), led by --lead. Prints the new campaign's id alone on stdout."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--lead", required=True, help="username of the lead (a user with the lead role)"
        )
        parser.add_argument(
            "--team",
            default="",
            help="slug of the campaign's team (one where --lead is a lead; default: their only one)",
        )
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--scale",
            default="0-3",
            help=f"a preset ({', '.join(SCALES)}) or a JSON file holding a list of "
            '{"grade": 0, "label": "…", "definition": "…"} (default: 0-3)',
        )
        parser.add_argument("--guidelines", metavar="FILE", help="a Markdown file")
        parser.add_argument(
            "--judges-per-pair",
            "--overlap",
            dest="overlap",
            type=int,
            default=1,
            help="how many judges grade each pair (default: 1)",
        )
        parser.add_argument("--relevance-threshold", type=int, default=1)
        parser.add_argument(
            "--adjudication-rule",
            choices=AdjudicationRule.values,
            default=AdjudicationRule.MAJORITY,
        )
        parser.add_argument("--gold-min-accuracy", type=float, default=0.7)
        parser.add_argument(
            "--pool-ordering", choices=PoolOrdering.values, default=PoolOrdering.RANDOM
        )
        parser.add_argument(
            "--judge",
            dest="judges",
            action="append",
            default=[],
            metavar="USERNAME",
            help="a judge of the campaign (a user with the judge role); repeat for more",
        )

    def handle(self, *args, **options):
        lead = _user(options["lead"])
        if not (lead.is_superuser or has_role(lead, Role.LEAD)):
            raise CommandError(f"--lead {lead.get_username()}: only leads create campaigns.")
        try:
            team = choose_team(lead, options["team"], Role.LEAD)
        except ValidationError as error:
            raise CommandError(f"--team: {' '.join(error.messages)}") from None
        data = {
            "name": options["name"],
            "description": options["description"],
            "scale": _scale(options["scale"]),
            "overlap": options["overlap"],
            "relevance_threshold": options["relevance_threshold"],
            "adjudication_rule": options["adjudication_rule"],
            "gold_min_accuracy": options["gold_min_accuracy"],
            "pool_ordering": options["pool_ordering"],
            "judges": [_judge(name).pk for name in options["judges"]],
        }
        if options["guidelines"]:
            data["guidelines"] = _read(options["guidelines"], "--guidelines")
        # The API's own input checks, then the service's: the same rules and words.
        form = CampaignCreateSerializer(data=data)
        if not form.is_valid():
            raise CommandError(_problems(form.errors))
        values = {k: v for k, v in form.validated_data.items() if k != "team"}
        try:
            campaign = services.create_campaign(lead=lead, team=team, **values)
        except ValidationError as error:
            raise CommandError(_problems(error.message_dict)) from None
        self.stderr.write(f"Created campaign {campaign.pk}: {campaign.name} (lead {lead}).")
        warning = services.overlap_warning(
            campaign=campaign, judges=len(form.validated_data["judges"])
        )
        if warning:
            self.stderr.write(warning)
        self.stdout.write(str(campaign.pk))


def _user(username: str):
    User = get_user_model()
    try:
        return User.objects.get(**{User.USERNAME_FIELD: username})
    except User.DoesNotExist:
        raise CommandError(f"No user named {username!r}.") from None


def _judge(username: str):
    """The API's check (judge_users), named by username rather than the API's id."""
    user = _user(username)
    if not judge_users().filter(pk=user.pk).exists():
        raise CommandError(
            "nothing created:\n--judge: "
            + API_MESSAGES["not_a_judge_user"].format(pk_value=username)
        )
    return user


def _read(path: str, option: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else error.strerror
        raise CommandError(f"{option} {path}: {reason}") from None


def _scale(value: str):
    """A preset's name as it is (the API's ScaleField checks it), or a JSON file's list."""
    if value in SCALES or not value.lower().endswith(".json"):
        return value
    try:
        return json.loads(_read(value, "--scale"))
    except json.JSONDecodeError as error:
        raise CommandError(f"--scale {value}:{error.lineno}: not JSON ({error.msg})") from None


def _problems(errors: dict) -> str:
    lines = []
    for field, messages in errors.items():
        where = OPTIONS.get(field, "")
        for message in messages if isinstance(messages, list) else [messages]:
            lines.append(f"{where}: {message}" if where else str(message))
    return "nothing created:\n" + "\n".join(lines)
