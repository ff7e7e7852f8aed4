"""``manage.py create_token USERNAME --name NAME``: prints the key once, stores its hash."""

import io

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from accounts.models import PersonalToken
from accounts.services.tokens import MESSAGES, hash_key

pytestmark = pytest.mark.django_db


def create_token(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_key_alone_goes_to_stdout_and_only_its_hash_is_stored(make_user):
    user = make_user("eng", "engineer")

    out, err = create_token("eng", "--name", "nightly evaluation")

    key = out.strip()
    assert out == key + "\n"
    assert "shown this once" in err and key not in err
    token = PersonalToken.objects.get()
    assert (token.user, token.name, token.key_hash) == (user, "nightly evaluation", hash_key(key))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/v1/runs/").status_code == 200


def test_each_run_makes_a_new_key(make_user):
    make_user("eng")

    first, _ = create_token("eng", "--name", "a")
    second, _ = create_token("eng", "--name", "b")

    assert first != second
    assert PersonalToken.objects.count() == 2


def test_an_unknown_user_is_an_error():
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        create_token("nobody", "--name", "ci")


def test_a_name_already_in_use_is_an_error(make_user):
    make_user("eng")
    create_token("eng", "--name", "ci")

    with pytest.raises(CommandError) as error:
        create_token("eng", "--name", "ci")

    assert str(error.value) == MESSAGES["duplicate_name"].format(name="ci")
    assert PersonalToken.objects.count() == 1


def test_the_name_is_required(make_user):
    make_user("eng")

    with pytest.raises(CommandError, match="--name"):
        create_token("eng")
