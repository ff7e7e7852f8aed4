"""What annotation's management commands share: the campaign a command names, a refused
file said as a command says it, and the shape of a command that imports one file into a
campaign."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from evaluation.trec import TrecFormatError


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


class CampaignFileCommand(BaseCommand):
    """Import one file into a campaign with ``read`` (an importer of
    annotation.services.campaign_files), in one of ``formats`` or the one detected."""

    noun = ""  # "topics", "documents": what the file holds
    formats: dict = {}

    @staticmethod
    def read(**options):
        raise NotImplementedError

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("path", help=f"{self.noun} file")
        parser.add_argument("--format", choices=sorted(self.formats), help="default: detect")

    def handle(self, *args, campaign, path, format, **options):
        campaign = find_campaign(campaign)
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            counts = self.read(campaign=campaign, source=file, filename=str(file), fmt=format)
        except (TrecFormatError, ValidationError) as error:
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        self.stdout.write(f"{campaign.name}: {counts.summary}")
