from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import backup
from common.uploads import max_upload_bytes


class Command(BaseCommand):
    help = (
        "Create a campaign from a file written by export_campaign (plain or gzip), with "
        "everything in it, as a new campaign. All or nothing: the whole file is checked first "
        "and every problem is listed with its JSON path. Users missing here are created "
        "inactive without a password, unless --no-create-users."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="backup file (.json or .json.gz)")
        parser.add_argument(
            "--no-create-users",
            action="store_true",
            help="refuse the import when a user it names does not exist here",
        )

    def handle(self, *args, path, no_create_users, **options):
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            summary = backup.import_campaign(
                file,
                name=str(file),
                max_bytes=max_upload_bytes(),
                create_users=not no_create_users,
            )
        except backup.BackupError as error:
            raise CommandError(f"nothing imported:\n{error}") from None
        for line in summary.lines:
            self.stdout.write(line)
