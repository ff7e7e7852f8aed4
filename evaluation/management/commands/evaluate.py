"""`trec_eval` with the same flags and byte-identical `trec` output, on files or stored data;
with ``--baseline`` also a paired comparison per measure, and with ``--fail-if-worse`` a gate
a CI pipeline can use (exit status 1 when the run is significantly worse).

The command line, the comparison and the gate live in evaluation/cli/ (start.py: trec_eval's
flags; gate.py: the baseline's and the gate's); this command finds stored qrels and runs,
scores them, and hands the results there.

Two plain files never reach this class when started from `manage.py` (it runs
evaluation.cli.main directly, without setting Django up); `call_command`, stored names and
``--baseline`` do.
"""

import argparse
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import services
from evaluation.cli import gate as gate_cli
from evaluation.cli import inputs as cli_inputs
from evaluation.cli import main as cli
from evaluation.cli import start as cli_start
from evaluation.measures import reference
from evaluation.models import QrelsVersion, Run


class Command(BaseCommand):
    help = cli_start.DESCRIPTION
    # Scoring plain files needs no database, so skip the checks that would open it.
    requires_system_checks = []

    def add_arguments(self, parser):
        cli_start.add_arguments(parser)
        gate_cli.add_gate_arguments(parser)

    def handle(self, *args, **opts):
        if opts["list_measures"]:
            sys.stdout.write(reference.format_text())
            return
        if not opts["qrels"] or not opts["run"]:
            raise CommandError(cli_start.MISSING_FILES)
        try:
            gate_cli.check_gate_options(opts)
            specs, options = cli.options_from(argparse.Namespace(**opts))
            rel_format = opts["rel_format"]
            qrels_frame, stored_qrels = self._load_qrels(opts["qrels"], rel_format)
            stored_run = self._stored_run(opts["run"])
            zscores = cli_inputs.read_zscores(opts["zscores"], cli.read_file)
            scored = {"rel_format": rel_format, "zscores": zscores}
            if opts["save"]:
                if stored_qrels is None or stored_run is None:
                    raise CommandError("--save needs a stored qrels version and a stored run")
                if zscores is not None:
                    raise CommandError("--save stores raw values: leave out -Z")
                services.score_run(
                    run=stored_run, qrels=stored_qrels, measure_specs=specs, options=options
                )
            result, runid = self._score(
                opts["run"], stored_run, qrels_frame, specs, options, scored
            )
            gate = None
            if opts["baseline"]:
                stored_baseline = self._stored_run(opts["baseline"])
                baseline, _ = self._score(
                    opts["baseline"], stored_baseline, qrels_frame, specs, options, scored
                )
                gate = gate_cli.compare_evaluations(
                    baseline, result, permutations=opts["permutations"], seed=opts["seed"]
                )
        except cli.UsageError as error:
            raise CommandError(str(error)) from None
        output = cli.render(
            result,
            fmt=opts["format"],
            per_topic=opts["per_topic"],
            runid=runid,
            summary=opts["summary"],
            places=opts["places"],
        )
        if gate is not None:
            output = gate_cli.with_comparison(output, gate, opts)
        # Byte for byte: no styling and no extra newline from self.stdout.write.
        sys.stdout.write(output)
        sys.stdout.flush()
        failure = gate_cli.gate_failure(gate, opts) if gate is not None else None
        if failure:
            raise CommandError(failure)

    def _load_qrels(self, label, rel_format="qrels"):
        path = Path(label)
        if path.is_file():
            return cli_inputs.read_relevance(rel_format, path, cli.read_file), None
        if rel_format != "qrels":
            raise CommandError(f"{label}: not a file (-R {rel_format} reads a file)")
        try:
            stored = services.find_qrels(label)
        except QrelsVersion.DoesNotExist as error:
            raise CommandError(f"{label}: not a file, and {error}") from None
        return services.load_qrels_frame(stored), stored

    def _stored_run(self, label):
        """The stored run ``label`` names, or None when it is a file."""
        if Path(label).is_file():
            return None
        try:
            return services.find_run(label)
        except Run.DoesNotExist as error:
            raise CommandError(f"{label}: not a file, and {error or 'no such run'}") from None

    def _score(self, label, stored, qrels_frame, specs, options, scored):
        """The run ``label`` (a file, or ``stored``) scored, and its runid; a large file is
        read and scored in chunks as the plain-file path does (cli.score_run_file)."""
        if stored is None:
            return cli.score_run_file(qrels_frame, Path(label), specs, options, **scored)
        frame = services.load_run_frame(stored)
        return cli.score(qrels_frame, frame, specs, options, **scored), stored.tag
