#!/usr/bin/env python
import gc
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if sys.argv[1:2] == ["evaluate"]:
        # Scoring uses no multithreaded BLAS; without this, the BLAS threads numpy starts on
        # import spin for a while, taking a core from reading and scoring (~0.1 s of CPU).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        # Importing polars, numpy and the engine makes many objects and no garbage, yet sets
        # off the cycle collector again and again (~0.1 s): it waits until they are loaded,
        # and then leaves them out of every later collection.
        gc.disable()
        # Scoring two plain files needs neither the database nor Django: skip its start-up.
        # Both files start being read before the scoring engine is imported, so that the
        # other core parses them meanwhile.
        from evaluation.cli import start as cli_start

        plain_files = cli_start.files_only(sys.argv[2:])
        if plain_files:
            started = cli_start.start(sys.argv[2:])
            from evaluation.cli import main as cli
        gc.freeze()
        gc.enable()
        if plain_files:
            code = cli.main(sys.argv[2:], started)
            sys.stdout.flush()
            sys.stderr.flush()
            # Nothing is left to clean up; skipping polars' and numpy's teardown saves ~0.1 s.
            os._exit(code)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
