#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if sys.argv[1:2] == ["evaluate"]:
        # Scoring two plain files needs neither the database nor Django: skip its start-up.
        from evaluation import cli

        if cli.files_only(sys.argv[2:]):
            sys.exit(cli.main(sys.argv[2:]))
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
