from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import backup
from annotation.management.lookups import find_campaign


class Command(BaseCommand):
    help = (
        "Write a whole campaign (topics, documents, pool, assignments, judgments with their "
        "history, lead decisions, publications with their qrels, outside and machine judges "
        "with their grades and imports, machine runs and answers, audits; never a key) to one "
        "JSON file, gzip-compressed when the name ends in .gz. import_campaign restores it on "
        "any instance."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "-o", "--output", required=True, help="file to write (.json or .json.gz)"
        )

    def handle(self, *args, campaign, output, **options):
        campaign = find_campaign(campaign)
        path = Path(output)
        if not path.parent.is_dir():
            raise CommandError(f"{output}: no such folder {str(path.parent)!r}")
        summary = backup.write_campaign_file(campaign=campaign, path=path)
        self.stdout.write(
            f"Wrote campaign {campaign.name!r} (id {campaign.pk}) to {output} "
            f"({path.stat().st_size:,} bytes): {summary.text}."
        )
