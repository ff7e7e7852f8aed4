from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import describe, find_campaign
from annotation.services import campaign_files
from evaluation.trec import TrecFormatError


class Command(BaseCommand):
    help = (
        "Add pairs (qid docno per line, plain or gzip) to a campaign's pool and assign them to "
        "its judges. Every qid must be a topic of the campaign. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("path", help="pairs file: qid docno")

    def handle(self, *args, campaign, path, **options):
        campaign = find_campaign(campaign)
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            change = campaign_files.import_pairs(campaign=campaign, source=file, filename=str(file))
        except (TrecFormatError, ValidationError) as error:
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        self.stdout.write(f"{campaign.name}: {campaign_files.pool_summary(change)}")
