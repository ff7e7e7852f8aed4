from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import formats
from annotation.models import Campaign
from annotation.services import campaign_files
from evaluation.trec import TrecFormatError


class Command(BaseCommand):
    help = (
        "Import topics into a campaign from a TSV (qid<TAB>query), JSONL "
        "(qid/title/description/narrative) or TREC topic file, plain or gzip. All or nothing: "
        "a file with any bad line is refused with every problem listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("path", help="topics file")
        parser.add_argument(
            "--format", choices=sorted(formats.TOPIC_FORMATS), help="default: detect"
        )

    def handle(self, *args, campaign, path, format, **options):
        campaign = find_campaign(campaign)
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            counts = campaign_files.import_topics(
                campaign=campaign, source=file, filename=str(file), fmt=format
            )
        except (TrecFormatError, ValidationError) as error:
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        self.stdout.write(f"{campaign.name}: {counts.summary}")


def find_campaign(pk: int) -> Campaign:
    campaign = Campaign.objects.filter(pk=pk).first()
    if campaign is None:
        raise CommandError(f"no campaign with id {pk}")
    return campaign


def describe(error: Exception) -> str:
    """file:line problems of a bad file, or the message of a refusal."""
    if isinstance(error, ValidationError):
        return " ".join(error.messages)
    return str(error)
