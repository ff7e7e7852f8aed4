"""The whole instance, database and stored files, as one archive (jobs/backup.py)."""

from django.core.management.base import BaseCommand

from jobs.backup import backup_instance


class Command(BaseCommand):
    help = (
        "Write every table and every stored file (runs, artifacts, staged uploads) to one "
        ".tar.gz archive; restore it with restore_instance into a new, migrated database."
    )

    def add_arguments(self, parser):
        parser.add_argument("-o", "--output", required=True, help="the archive to write")

    def handle(self, *args, output, **options):
        summary = backup_instance(path=output)
        self.stdout.write(f"{output}: {summary.text}")
