from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from accounts.services.teams import team_named
from evaluation import services, trec


class Command(BaseCommand):
    help = "Import a TREC qrels file (plain or gzip) as the next published version of NAME."

    def add_arguments(self, parser):
        parser.add_argument("path", help="qrels file: qid iter docno grade")
        parser.add_argument("--name", required=True, help="qrels name, e.g. dl19-passage")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--team", default="", help="the team's slug (default: the default team)"
        )

    def handle(self, *args, path, name, description, team, **options):
        try:
            team = team_named(team)
        except ValueError as error:
            raise CommandError(f"--team: {error}") from None
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            qrels = services.import_qrels(
                source=file.read_bytes(),
                filename=str(file),
                name=name,
                description=description,
                team=team.pk,
            )
        except (trec.TrecFormatError, services.ImportRejected) as error:
            raise CommandError(f"nothing imported:\n{error}") from None
        self.stdout.write(
            f"Imported {qrels.label}: {qrels.topic_count} topics, {qrels.judgment_count} judgments."
        )
