import sys

from django.core.management.base import BaseCommand, CommandError

from evaluation import services, trec
from evaluation.models import QrelsVersion
from evaluation.services.binary_qrels import binarise, binary_threshold


class Command(BaseCommand):
    help = (
        "Write a stored qrels version as a TREC qrels file (to stdout, or --output); with "
        "--binary, grades become 0/1 at the relevance threshold."
    )

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="NAME (latest version) or NAME@VERSION")
        parser.add_argument("--output", "-o", help="file to write; .gz compresses")
        parser.add_argument(
            "--binary",
            action="store_true",
            help=(
                "grade 1 where the grade is at least the threshold, else 0 (the threshold "
                "frozen when a campaign published the version, else 1)"
            ),
        )
        parser.add_argument(
            "--threshold",
            type=int,
            metavar="GRADE",
            help="with --binary: the lowest relevant grade, instead of the default",
        )

    def handle(self, *args, qrels, output, binary, threshold, **options):
        if threshold is not None and not binary:
            raise CommandError("--threshold only applies with --binary")
        try:
            version = services.find_qrels(qrels)
        except QrelsVersion.DoesNotExist as error:
            raise CommandError(str(error) or f"no qrels {qrels!r}") from None
        frame = services.load_qrels_frame(version)
        what = version.label
        if binary:
            threshold = binary_threshold(version, threshold)
            frame = binarise(frame, threshold)
            what += f", binary at {threshold}"
        if output:
            trec.write_qrels(frame, output)
            self.stderr.write(f"Wrote {what} ({frame.height} judgments) to {output}")
        else:
            sys.stdout.buffer.write(services.qrels_to_trec_bytes(frame))
