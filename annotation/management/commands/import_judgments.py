from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.formats import describe_judgment_formats
from annotation.management.lookups import describe, find_campaign
from annotation.models import ImportFormat, JudgeKind
from annotation.services.imports import import_judgments, parse_mapping
from common.commands import user_named
from evaluation.trec import TrecFormatError


class Command(BaseCommand):
    help = (
        "Import judgments made elsewhere into a campaign, plain or gzip, in one of the formats: "
        f"{describe_judgment_formats()}. All or nothing; the same file again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("path", help="judgments file")
        parser.add_argument(
            "--format", choices=ImportFormat.values, help="the file's format (default: detected)"
        )
        parser.add_argument(
            "--kind",
            choices=[JudgeKind.OUTSIDE, JudgeKind.MACHINE],
            help="the file's judges are outside people or machines "
            "(default: machines for UMBRELA, outside people otherwise)",
        )
        parser.add_argument(
            "--judge", default="", help="the judge of a qrels file (or of every grade of the file)"
        )
        parser.add_argument(
            "--map",
            default="",
            help="grade mapping, e.g. '0:0,1:1,2:1,3:2,4:3' or 'Perfect=3;So-so=1;Bad=0'",
        )
        parser.add_argument(
            "--add-missing-pairs",
            action="store_true",
            help="add pairs missing from the pool instead of refusing them",
        )
        parser.add_argument("--user", default="", help="username recorded as the importer")

    def handle(self, *args, campaign, path, **options):
        campaign = find_campaign(campaign)
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        user = user_named(options["user"])
        try:
            result = import_judgments(
                campaign=campaign,
                source=file.read_bytes(),
                file_name=file.name,
                user=user,
                fmt=options["format"],
                judge_kind=options["kind"],
                judge_name=options["judge"],
                mapping=parse_mapping(options["map"]),
                add_missing_pairs=options["add_missing_pairs"],
                max_bytes=None,
            )
        except ValidationError as error:
            if any(e.code == "qrels_needs_judge" for e in getattr(error, "error_list", ())):
                raise CommandError(
                    f"nothing imported: {file.name} is a TREC qrels file, which holds one judge's "
                    "grades: name the judge with --judge NAME (e.g. --judge assessor-1)"
                ) from None
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        except TrecFormatError as error:
            raise CommandError(f"nothing imported:\n{describe(error)}") from None
        self.stdout.write(f"{campaign.name}: {file.name}: {result.summary()}")
