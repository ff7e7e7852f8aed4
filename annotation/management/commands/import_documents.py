from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import formats
from annotation.management.commands.import_topics import describe, find_campaign
from annotation.services import campaign_files
from evaluation.trec import TrecFormatError


class Command(BaseCommand):
    help = (
        "Import documents into a campaign from JSONL or CSV/TSV with a header row (docno and "
        "any of title, text, url), plain or gzip. A docno already in the campaign gets the "
        "file's title, text and url. All or nothing, with every problem listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("path", help="documents file")
        parser.add_argument(
            "--format", choices=sorted(formats.DOCUMENT_FORMATS), help="default: detect"
        )

    def handle(self, *args, campaign, path, format, **options):
        campaign = find_campaign(campaign)
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            counts = campaign_files.import_documents(
                campaign=campaign, source=file, filename=str(file), fmt=format
            )
        except (TrecFormatError, ValidationError) as error:
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        self.stdout.write(f"{campaign.name}: {counts.summary}")
