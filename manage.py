#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if sys.argv[1:2] == ["evaluate"]:
        # Scoring uses no multithreaded BLAS; without this, the BLAS threads numpy starts on
        # import spin for a while, taking a core from reading and scoring (~0.1 s of CPU).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        # Scoring two plain files needs neither the database nor Django: skip its start-up.
        # Both files start being read before the scoring engine is imported, so that the
        # other core parses them meanwhile.
        from evaluation import cli_start

        if cli_start.files_only(sys.argv[2:]):
            started = cli_start.start(sys.argv[2:])
            from evaluation import cli

            code = cli.main(sys.argv[2:], started)
            sys.stdout.flush()
            sys.stderr.flush()
            # Nothing is left to clean up; skipping polars' and numpy's teardown saves ~0.1 s.
            os._exit(code)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
