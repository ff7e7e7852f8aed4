import getpass
import os
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.services.roles import Role

# Read when --no-input is given without --password-file (never a password in argv, where
# `ps` and the shell's history would show it).
PASSWORD_VARIABLE = "QRELSMITH_PASSWORD"


class Command(BaseCommand):
    help = (
        "Create a user with one or more roles (judge, lead, engineer). The password comes from "
        "a prompt, from --password-file (a file's first line; - for standard input) or, with "
        f"--no-input, from the {PASSWORD_VARIABLE} environment variable; it must pass the "
        "password rules. Admins (superusers) are made with createsuperuser."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--role",
            dest="roles",
            action="append",
            choices=Role.values,
            required=True,
            help="a role to give; repeat for more (e.g. --role lead --role judge)",
        )
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-file", metavar="FILE", help="read the password from FILE's first line"
        )
        parser.add_argument(
            "--no-input",
            action="store_true",
            help=f"never prompt: the password from --password-file or ${PASSWORD_VARIABLE}",
        )

    def handle(self, *args, username, roles, email, password_file, no_input, **options):
        User = get_user_model()
        if User.objects.filter(**{User.USERNAME_FIELD: username}).exists():
            raise CommandError(
                f"A user named {username!r} exists already: change their roles in /admin/."
            )
        user = User(**{User.USERNAME_FIELD: username}, email=email)
        try:
            User.username_validator(username)
        except ValidationError as error:
            raise CommandError(f"username {username!r}: {' '.join(error.messages)}") from None
        password = self._password(password_file, no_input)
        try:
            validate_password(password, user)
        except ValidationError as error:
            raise CommandError("password: " + " ".join(error.messages)) from None
        user.set_password(password)
        with transaction.atomic():
            user.save()
            user.groups.add(*Group.objects.filter(name__in=roles))
        self.stdout.write(f"Created {username} ({', '.join(sorted(set(roles)))}).")

    def _password(self, password_file: str | None, no_input: bool) -> str:
        if password_file:
            try:
                text = (
                    sys.stdin.read()
                    if password_file == "-"
                    else Path(password_file).read_text(encoding="utf-8")
                )
            except (OSError, UnicodeDecodeError) as error:
                reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else error
                raise CommandError(f"--password-file {password_file}: {reason}") from None
            password = text.splitlines()[0] if text.strip() else ""
            if not password:
                raise CommandError(f"--password-file {password_file}: the first line is empty")
            return password
        if no_input:
            password = os.environ.get(PASSWORD_VARIABLE, "")
            if not password:
                raise CommandError(
                    f"--no-input needs --password-file FILE or {PASSWORD_VARIABLE} set"
                )
            return password
        if not sys.stdin.isatty():
            raise CommandError(
                "No terminal to ask for the password: give --password-file FILE (- for "
                f"standard input) or --no-input with {PASSWORD_VARIABLE} set"
            )
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("The two passwords differ; nothing was created.")
        return password
