"""`trec_eval` with the same flags and byte-identical `trec` output, on files or stored data.

Two plain files never reach this class when started from `manage.py` (it runs
evaluation.cli directly, without setting Django up); `call_command` and stored names do.
"""

import argparse
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import cli, services, trec
from evaluation.models import QrelsVersion, Run


class Command(BaseCommand):
    help = cli.DESCRIPTION
    # Scoring plain files needs no database, so skip the checks that would open it.
    requires_system_checks = []

    def add_arguments(self, parser):
        cli.add_arguments(parser)

    def handle(self, *args, **opts):
        try:
            specs, options = cli.options_from(argparse.Namespace(**opts))
            qrels_frame, stored_qrels = self._load_qrels(opts["qrels"])
            run_frame, stored_run, runid = self._load_run(opts["run"])
            if opts["save"]:
                if stored_qrels is None or stored_run is None:
                    raise CommandError("--save needs a stored qrels version and a stored run")
                services.evaluate_run(
                    run=stored_run, qrels=stored_qrels, measure_specs=specs, options=options
                )
            result = cli.score(qrels_frame, run_frame, specs, options)
        except cli.UsageError as error:
            raise CommandError(str(error)) from None
        # Byte for byte: no styling and no extra newline from self.stdout.write.
        sys.stdout.write(
            cli.render(result, fmt=opts["format"], per_topic=opts["per_topic"], runid=runid)
        )
        sys.stdout.flush()

    def _load_qrels(self, label):
        path = Path(label)
        if path.is_file():
            return cli.read_file(trec.read_qrels, path), None
        try:
            stored = services.find_qrels(label)
        except QrelsVersion.DoesNotExist as error:
            raise CommandError(f"{label}: not a file, and {error}") from None
        return services.load_qrels_frame(stored), stored

    def _load_run(self, label):
        path = Path(label)
        if path.is_file():
            frame = cli.read_file(trec.read_run, path)
            return frame, None, cli.runid_of(frame)
        try:
            stored = services.find_run(label)
        except Run.DoesNotExist as error:
            raise CommandError(f"{label}: not a file, and {error or 'no such run'}") from None
        return services.load_run_frame(stored), stored, stored.tag
