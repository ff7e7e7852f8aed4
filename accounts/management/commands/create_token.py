from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.services.tokens import create_token


class Command(BaseCommand):
    help = (
        "Make a personal API token for a user and print its key, once: only its hash is "
        "stored. Send it as `Authorization: Bearer KEY`. Users can also make and revoke "
        "tokens at /accounts/tokens/."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--name", required=True, help="what will use the token, e.g. 'nightly evaluation'"
        )

    def handle(self, *args, username, name, **options):
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist:
            raise CommandError(f"No user named {username!r}.") from None
        try:
            _token, key = create_token(user=user, name=name)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        # The key alone on stdout, so scripts can capture it; the note goes to stderr.
        self.stderr.write(f"Token {name!r} for {username}: the key is shown this once.")
        self.stdout.write(key)
