import sys

from django.core.management.base import BaseCommand, CommandError

from evaluation import services, trec
from evaluation.models import QrelsVersion


class Command(BaseCommand):
    help = "Write a stored qrels version as a TREC qrels file (to stdout, or --output)."

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="NAME (latest version) or NAME@VERSION")
        parser.add_argument("--output", "-o", help="file to write; .gz compresses")

    def handle(self, *args, qrels, output, **options):
        try:
            version = services.find_qrels(qrels)
        except QrelsVersion.DoesNotExist as error:
            raise CommandError(str(error) or f"no qrels {qrels!r}") from None
        frame = services.load_qrels_frame(version)
        if output:
            trec.write_qrels(frame, output)
            self.stderr.write(f"Wrote {version.label} ({frame.height} judgments) to {output}")
        else:
            sys.stdout.buffer.write(services.qrels_to_trec_bytes(frame))
