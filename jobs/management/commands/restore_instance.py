"""Restore an archive written by backup_instance (jobs/backup.py)."""

from django.core.management.base import BaseCommand, CommandError

from jobs.backup import BackupError, restore_instance


class Command(BaseCommand):
    help = (
        "Restore an instance archive (backup_instance) into a new, migrated, empty database "
        "and empty file storage; all or nothing, every file's checksum verified first."
    )

    def add_arguments(self, parser):
        parser.add_argument("archive", help="a .tar.gz written by backup_instance")

    def handle(self, *args, archive, **options):
        try:
            summary = restore_instance(path=archive)
        except BackupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{archive}: restored {summary.text}")
