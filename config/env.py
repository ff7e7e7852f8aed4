"""Typed readers for environment variables: a mistyped value stops start-up instead of
silently becoming a default (``DEBUG=flase`` is an error, not ``False``)."""

import ipaddress
import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off"
    )


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of IP addresses or networks (``10.0.0.5,172.16.0.0/12``); an
    entry that is neither stops start-up."""
    items = env_list(name, default)
    for item in items:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not an IP address or network (e.g. 10.0.0.5 or 172.16.0.0/12)"
            ) from None
    return items
