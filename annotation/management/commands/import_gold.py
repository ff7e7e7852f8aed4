from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import describe, find_campaign
from annotation.services import gold as gold_service
from evaluation.trec import TrecFormatError


class Command(BaseCommand):
    help = (
        "Mark pairs of a campaign as calibration (gold) pairs with a known grade, from a file "
        "of 'qid docno grade' or TREC qrels lines 'qid iter docno grade' (plain or gzip). "
        "Pairs not in the pool are added; every judge gets every gold pair. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("path", help="gold file")

    def handle(self, *args, campaign, path, **options):
        campaign = find_campaign(campaign)
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            done = gold_service.import_gold(
                campaign=campaign, source=file, filename=str(file), max_bytes=None
            )
        except (TrecFormatError, ValidationError) as error:
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        change = done.change
        self.stdout.write(
            f"{campaign.name}: {done.marked} gold pairs ({change.added} new to the pool, "
            f"{change.already} already in it); {change.assigned} new assignments"
        )
