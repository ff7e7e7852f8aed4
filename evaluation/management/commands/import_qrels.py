from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import services, trec


class Command(BaseCommand):
    help = "Import a TREC qrels file (plain or gzip) as the next published version of NAME."

    def add_arguments(self, parser):
        parser.add_argument("path", help="qrels file: qid iter docno grade")
        parser.add_argument("--name", required=True, help="qrels name, e.g. dl19-passage")
        parser.add_argument("--description", default="")

    def handle(self, *args, path, name, description, **options):
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            qrels = services.import_qrels(
                source=file.read_bytes(), filename=str(file), name=name, description=description
            )
        except (trec.TrecFormatError, services.ImportRejected) as error:
            raise CommandError(f"nothing imported:\n{error}") from None
        self.stdout.write(
            f"Imported {qrels.label}: {qrels.topic_count} topics, {qrels.judgment_count} judgments."
        )
