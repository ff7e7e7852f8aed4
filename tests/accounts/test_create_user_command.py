"""``manage.py create_user USERNAME --role ROLE``: a user with roles from the command line,
the password from a prompt, a file or an environment variable, never from argv (issue 28:
no command created a lead)."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from accounts.management.commands import create_user as command
from accounts.services.roles import Role, roles_of
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def create_user(*args) -> str:
    out = io.StringIO()
    call_command("create_user", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_lead_is_made_with_the_password_from_a_file_and_can_log_in(tmp_path, client):
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\nignored second line\n")

    out = create_user(
        "lea", "--role", "lead", "--email", "lea@example.org", "--password-file", str(secret)
    )

    assert out == "Created lea (lead).\n"
    user = get_user_model().objects.get(username="lea")
    assert roles_of(user) == {Role.LEAD} and user.email == "lea@example.org"
    assert not user.is_superuser and not user.is_staff
    assert client.login(username="lea", password=PASSWORD)


def test_roles_repeat_and_the_password_may_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(command.PASSWORD_VARIABLE, PASSWORD)

    create_user("both", "--role", "judge", "--role", "lead", "--no-input")

    user = get_user_model().objects.get(username="both")
    assert roles_of(user) == {Role.JUDGE, Role.LEAD} and user.check_password(PASSWORD)


def test_the_password_is_asked_twice_at_a_terminal(monkeypatch):
    answers = iter([PASSWORD, PASSWORD])
    monkeypatch.setattr(command.getpass, "getpass", lambda prompt: next(answers))
    monkeypatch.setattr(command.sys.stdin, "isatty", lambda: True, raising=False)

    create_user("eng", "--role", "engineer")

    assert get_user_model().objects.get(username="eng").check_password(PASSWORD)


def test_two_different_answers_at_the_prompt_create_nobody(monkeypatch):
    answers = iter([PASSWORD, PASSWORD + "x"])
    monkeypatch.setattr(command.getpass, "getpass", lambda prompt: next(answers))
    monkeypatch.setattr(command.sys.stdin, "isatty", lambda: True, raising=False)

    with pytest.raises(CommandError, match="The two passwords differ"):
        create_user("eng", "--role", "engineer")
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize(
    ("password", "problem"),
    [("short", "too short"), ("password123", "too common"), ("", "the first line is empty")],
)
def test_a_weak_or_empty_password_is_refused_by_the_password_rules(tmp_path, password, problem):
    secret = tmp_path / "password"
    secret.write_text(password + "\n")

    with pytest.raises(CommandError, match=problem):
        create_user("weak", "--role", "judge", "--password-file", str(secret))
    assert not get_user_model().objects.exists()


def test_without_a_terminal_file_or_variable_it_says_how_to_give_the_password(monkeypatch):
    monkeypatch.delenv(command.PASSWORD_VARIABLE, raising=False)
    with pytest.raises(
        CommandError, match=f"--no-input needs --password-file FILE or {command.PASSWORD_VARIABLE}"
    ):
        create_user("x", "--role", "judge", "--no-input")
    monkeypatch.setattr(command.sys.stdin, "isatty", lambda: False, raising=False)
    with pytest.raises(CommandError, match="No terminal to ask for the password"):
        create_user("x", "--role", "judge")


def test_an_existing_user_a_bad_username_or_an_unknown_role_is_refused(tmp_path, make_user):
    make_user("lea")
    secret = tmp_path / "password"
    secret.write_text(PASSWORD)
    with pytest.raises(CommandError, match="'lea' exists already"):
        create_user("lea", "--role", "lead", "--password-file", str(secret))
    with pytest.raises(CommandError, match="username 'a b'"):
        create_user("a b", "--role", "lead", "--password-file", str(secret))
    with pytest.raises(CommandError, match="invalid choice: 'admin'"):
        create_user("new", "--role", "admin", "--password-file", str(secret))
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["lea"]
