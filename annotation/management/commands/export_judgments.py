import sys

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands.import_topics import find_campaign
from annotation.models import Publication
from annotation.services import adjudication
from config.exports import write_csv


class Command(BaseCommand):
    help = (
        "Write a campaign's raw judgments (every judge's own grade of every pair) as CSV, or "
        "with --provenance the basis of every grade of one of its publications."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "--provenance",
            metavar="VERSION",
            type=int,
            help="the qrels version the campaign published",
        )
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, campaign, provenance, output, **options):
        campaign = find_campaign(campaign)
        if provenance is None:
            header, rows = adjudication.JUDGMENT_HEADER, adjudication.judgment_table(campaign)
        else:
            publication = Publication.objects.filter(
                campaign=campaign, qrels__version=provenance
            ).first()
            if publication is None:
                raise CommandError(f"campaign {campaign.pk} published no version {provenance}")
            header = adjudication.PROVENANCE_HEADER
            rows = adjudication.provenance_table(publication)
        if output:
            with open(output, "w", newline="", encoding="utf-8") as out:
                write_csv(out, header, rows)
        else:
            write_csv(sys.stdout, header, rows)
