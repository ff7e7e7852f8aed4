"""How one JSON value of a campaign backup is checked against the model field it is stored
in (:mod:`annotation.backup.schema` lists the keys and re-exports these). A checker takes a
JSON value and returns what goes into the model field, or raises :class:`Bad`."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

from annotation.models import (
    Campaign,
    GullibilityGate,
    Judgment,
    JudgmentChange,
    LeadDecision,
    Topic,
)
from common import text_limits

# Text columns without a length of their own that hold what a person typed: capped as where it
# is typed. (Generated text, such as a qrels version's description, keeps no cap here.)
TEXT_CAPS = {
    (Campaign, "description"): text_limits.DESCRIPTION,
    (Campaign, "guidelines"): text_limits.GUIDELINES,
    (Topic, "query"): text_limits.QUERY,
    (Topic, "description"): text_limits.TOPIC_TEXT,
    (Topic, "narrative"): text_limits.TOPIC_TEXT,
    (Judgment, "note"): text_limits.NOTE,
    (JudgmentChange, "note"): text_limits.NOTE,
    (LeadDecision, "reason"): text_limits.REASON,
    (GullibilityGate, "override_reason"): text_limits.DESCRIPTION,
}


class Bad(Exception):
    """A JSON value the field cannot take; the message follows the value's path."""


Checker = Callable[[Any], Any]

INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges


def to_json_time(value: dt.datetime) -> str:
    """ISO 8601 in UTC with its offset, microseconds kept (what the reader takes back)."""
    if value.tzinfo is not dt.UTC:  # what the database gives is UTC already
        value = value.astimezone(dt.UTC)
    return value.isoformat()


def checkers(model: type[models.Model], keys: dict[str, str]) -> dict[str, Checker]:
    """One checker per JSON key, for the model fields the keys name."""
    return {key: field_checker(model._meta.get_field(name)) for key, name in keys.items()}


def field_checker(field: models.Field) -> Checker:
    """The checker for one concrete model field (text, integer, float, date-time, UUID, JSON)."""
    if isinstance(field, models.BooleanField):
        check = _check_bool
    elif isinstance(field, models.DateTimeField):
        check = _check_time
    elif isinstance(field, models.UUIDField):
        check = _check_uuid
    elif isinstance(field, models.JSONField):
        check = _check_json
    elif isinstance(field, models.FloatField):
        check = _check_float
    elif isinstance(field, models.IntegerField):
        check = integer_checker(*INTEGER_RANGES[field.get_internal_type()])
    elif isinstance(field, models.CharField | models.TextField):
        check = text_checker(field.max_length or TEXT_CAPS.get((field.model, field.name)))
    else:  # a field type this format does not know yet: fail loudly, in development
        raise TypeError(f"no backup checker for {field!r}")
    if field.choices:
        check = _with_choices(check, [value for value, _ in field.flatchoices])
    if field.null:
        check = _or_null(check)
    return check


def username_checker() -> Checker:
    """Text that the user model accepts as a username (its length and validators)."""
    field = get_user_model()._meta.get_field("username")
    text = text_checker(field.max_length)

    def check(value):
        value = text(value)
        try:
            field.run_validators(value)
        except ValidationError as error:
            raise Bad(" ".join(error.messages)) from None
        return value

    return check


def text_checker(max_length: int | None) -> Checker:
    def check(value):
        if type(value) is not str:
            raise Bad("must be text")
        if max_length is not None and len(value) > max_length:
            raise Bad(f"is longer than {max_length} characters")
        if "\x00" in value:
            raise Bad("contains a NUL character")
        return value

    return check


def integer_checker(low: int, high: int) -> Checker:
    def check(value):
        if type(value) is not int:  # bool is not int here, nor is 1.0
            raise Bad("must be an integer")
        if not low <= value <= high:
            raise Bad(f"must be between {low} and {high}")
        return value

    return check


def _check_bool(value):
    if type(value) is not bool:
        raise Bad("must be true or false")
    return value


def _check_float(value):
    if type(value) not in (int, float):
        raise Bad("must be a number")
    if not math.isfinite(value):
        raise Bad("must be a finite number")
    return float(value)


def _check_time(value):
    if type(value) is not str:
        raise Bad("must be a date and time in ISO 8601, e.g. 2026-11-20T09:30:00.123456+00:00")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise Bad(f"{value[:40]!r} is not a date and time in ISO 8601") from None
    if parsed.tzinfo is None:
        raise Bad(f"{value[:40]!r} has no time zone (add +00:00 for UTC)")
    return parsed


def _check_uuid(value):
    if type(value) is not str:
        raise Bad("must be a UUID as text")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Bad(f"{value[:40]!r} is not a UUID") from None


def _check_json(value):
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if "\x00" in item:
                raise Bad("contains a NUL character")
        elif type(item) is list:
            stack.extend(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                if "\x00" in key:
                    raise Bad("contains a NUL character")
                stack.append(inner)
    return value


def _with_choices(check: Checker, allowed: list) -> Checker:
    shown = ", ".join(map(str, allowed))

    def checked(value):
        value = check(value)
        if value not in allowed:
            raise Bad(f"{value!r} is not one of {shown}")
        return value

    return checked


def _or_null(check: Checker) -> Checker:
    def checked(value):
        if value is None:
            return None
        try:
            return check(value)
        except Bad as bad:
            raise Bad(f"{bad} or null") from None

    return checked
