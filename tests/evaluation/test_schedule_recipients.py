"""The mail domains a schedule's alert e-mails may go to (evaluation/schedules/recipients.py)."""

import pytest

from evaluation.schedules.recipients import domain_allowed, parse_domains


def test_the_setting_is_read_lower_cased_without_trailing_dots_or_repeats():
    assert parse_domains([" Example.ORG. ", "example.org", "oncall.example.net"]) == (
        "example.org",
        "oncall.example.net",
    )


@pytest.mark.parametrize(
    "item", ["@example.org", "a@example.org", "https://example.org", "*.example.org", "localhost"]
)
def test_what_is_not_a_mail_domain_is_refused_with_its_value(item):
    with pytest.raises(ValueError, match=f"{item!r} is not a mail domain".replace("*", r"\*")):
        parse_domains(["example.org", item])


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("a@example.org", True),
        ("a@EXAMPLE.org", True),
        ("a@mail.example.org", True),
        ("a@badexample.org", False),
        ("a@example.org.evil.test", False),
        ("a@gmail.com", False),
    ],
)
def test_a_domain_admits_itself_and_its_subdomains_only(address, allowed):
    assert domain_allowed(address, ("example.org",)) is allowed


def test_no_domain_listed_admits_any_address():
    assert domain_allowed("anyone@anywhere.test", ())
