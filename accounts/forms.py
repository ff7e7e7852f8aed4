"""The login forms (our page and the admin's), rate limited, the new-token form, and the
team picker of the forms that make something."""

import math

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from accounts.models import ServiceScope
from accounts.services.login_limits import (
    LoginRefused,
    clear_login_failures,
    client_ip,
    start_login_attempt,
)
from accounts.services.teams import teams_of
from accounts.services.tokens import NAME_MAX_LENGTH

INVALID_LOGIN = "Your username and password didn't match. Please try again."
REFUSED = (
    "Too many failed logins for this username or from your network. "
    "Try again in {minutes} minute{plural}, after {time}."
)


def refused_message(refused: LoginRefused, now=None) -> str:
    minutes = math.ceil(refused.seconds_left(now) / 60)
    return REFUSED.format(
        minutes=minutes,
        plural="" if minutes == 1 else "s",
        time=timezone.localtime(refused.until).strftime("%H:%M %Z"),
    )


class RateLimitedLoginMixin:
    """Refuses the attempt, without checking the password, when the client's address has
    too many recent failures for the username or overall, or has failed while the account or
    the site is under attack (accounts/services/login_limits.py). ``refused`` is then the
    ``LoginRefused``, for the view to answer 429 with a Retry-After."""

    refused: LoginRefused | None = None

    @sensitive_variables()
    def clean(self):
        username = self.cleaned_data.get("username")
        if username is None or not self.cleaned_data.get("password"):
            return super().clean()  # a missing field: its own error, no password check
        ip = client_ip(self.request) if self.request is not None else None
        try:
            start_login_attempt(username=username, ip=ip)
        except LoginRefused as refused:
            self.refused = refused
            raise ValidationError(refused_message(refused), code="refused") from None
        cleaned = super().clean()  # a wrong password raises here and the attempt stays
        clear_login_failures(username=username, ip=ip)
        return cleaned


class LoginForm(RateLimitedLoginMixin, AuthenticationForm):
    error_messages = {**AuthenticationForm.error_messages, "invalid_login": INVALID_LOGIN}


class AdminLoginForm(RateLimitedLoginMixin, AdminAuthenticationForm):
    pass


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=NAME_MAX_LENGTH,
        help_text="What will use it, e.g. “laptop” or “nightly evaluation”.",
    )


def team_picker(user, form, *roles: str) -> dict:
    """What templates/accounts/_team_picker.html needs for ``form``'s ``team`` field (a new
    thing's team): the teams where ``user`` holds one of ``roles``, the chosen one, its
    errors."""
    return {
        "teams": list(teams_of(user, *roles)),
        "team_value": form["team"].value() or "",
        "team_errors": form["team"].errors,
    }


class ServiceTokenForm(forms.Form):
    """A team's new service token: a name and what it may do."""

    name = forms.CharField(max_length=100, help_text="E.g. the CI job that will use it.")
    scope = forms.ChoiceField(choices=ServiceScope.choices, initial=ServiceScope.READ)
