from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import find_campaign
from annotation.models import Publication
from annotation.services import grade_tables
from common.exports import write_csv
from common.ids import parse_id


class Command(BaseCommand):
    help = (
        "Write a campaign's raw judgments (every judge's own grade of every pair) as CSV; with "
        "--decisions its decision log; with --provenance NAME@VERSION the basis of every grade "
        "of one of its publications."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        what = parser.add_mutually_exclusive_group()
        what.add_argument(
            "--provenance",
            metavar="NAME@VERSION",
            help=(
                "a qrels version the campaign published, e.g. robust@2 (a bare version number "
                "is accepted when only one of the campaign's qrels names has it)"
            ),
        )
        what.add_argument(
            "--decisions",
            action="store_true",
            help="every lead's decision: grade, reason, who, when, the rule in force",
        )
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, campaign, provenance, decisions, output, **options):
        campaign = find_campaign(campaign)
        if provenance is not None:
            publication = find_publication(campaign, provenance)
            header = grade_tables.PROVENANCE_HEADER
            rows = grade_tables.provenance_table(publication)
        elif decisions:
            header, rows = grade_tables.DECISION_HEADER, grade_tables.decision_table(campaign)
        else:
            header, rows = grade_tables.JUDGMENT_HEADER, grade_tables.judgment_table(campaign)
        if output:
            with open(output, "w", newline="", encoding="utf-8") as out:
                write_csv(out, header, rows)
        else:
            write_csv(self.stdout, header, rows)


def find_publication(campaign, label: str) -> Publication:
    """``NAME@VERSION``, or a bare ``VERSION`` when exactly one of the campaign's
    publications has that version number."""
    published = Publication.objects.filter(campaign=campaign).select_related("qrels")
    labels = ", ".join(sorted(f"{p.qrels.name}@{p.qrels.version}" for p in published)) or "none"
    name, _, number = label.strip().rpartition("@")
    version = parse_id(number)
    if version is None:
        raise CommandError(
            f"--provenance {label!r}: give NAME@VERSION, e.g. robust@2 "
            f"(campaign {campaign.pk} published: {labels})"
        )
    matches = [p for p in published if p.qrels.version == version]
    if name:
        matches = [p for p in matches if p.qrels.name == name]
    if not matches:
        raise CommandError(
            f"campaign {campaign.pk} published no version {label} (it published: {labels})"
        )
    if len(matches) > 1:
        names = ", ".join(sorted(f"{p.qrels.name}@{p.qrels.version}" for p in matches))
        raise CommandError(
            f"--provenance {label!r} is ambiguous: campaign {campaign.pk} published {names}; "
            "give NAME@VERSION"
        )
    return matches[0]
