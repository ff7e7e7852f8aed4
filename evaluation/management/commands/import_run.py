from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from accounts.services.teams import team_named
from evaluation import services, trec


class Command(BaseCommand):
    help = "Import TREC run files (plain or gzip) for a system. Each file is all-or-nothing."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="run files: qid Q0 docno rank score tag")
        parser.add_argument("--system", required=True, help="system name (created if new)")
        parser.add_argument("--name", default="", help="run name (default: the file name)")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--team", default="", help="the team's slug (default: the default team)"
        )

    def handle(self, *args, paths, system, name, description, team, **options):
        if name and len(paths) > 1:
            raise CommandError("--name applies to one file; omit it to name runs after their files")
        try:
            team = team_named(team)
        except ValueError as error:
            raise CommandError(f"--team: {error}") from None
        failed = 0
        for path in paths:
            file = Path(path)
            if not file.is_file():
                self.stderr.write(f"{path}: no such file")
                failed += 1
                continue
            notices = []
            try:
                run = services.import_run(
                    source=file.read_bytes(),
                    filename=file.name,
                    system=system,
                    name=name,
                    description=description,
                    notices=notices,
                    team=team.pk,
                )
            except (trec.TrecFormatError, services.ImportRejected) as error:
                self.stderr.write(f"{path}: nothing imported:\n{error}")
                failed += 1
                continue
            for notice in notices:
                self.stderr.write(f"notice: {notice}")
            header = ""
            if run.ir_metadata_text:
                header = f" ir_metadata: {', '.join(run.ir_metadata) or 'empty'}."
            self.stdout.write(
                f"Imported {run}: {run.topic_count} topics, {run.line_count} lines.{header}"
            )
        if failed:
            raise CommandError(f"{failed} of {len(paths)} files were not imported")
