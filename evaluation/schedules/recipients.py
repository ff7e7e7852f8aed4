"""Which addresses a schedule's alert e-mails may go to (pure: no Django).

The operator may restrict them to some mail domains (ALERT_EMAIL_DOMAINS, read once by
config/settings.py with ``parse_domains``): a domain listed admits its own addresses and its
subdomains' (``example.org`` admits ``a@example.org`` and ``a@mail.example.org``, not
``a@badexample.org``). No domain listed admits any address.
"""

from __future__ import annotations

import re

# A DNS name: dot-separated labels of letters, digits and inner hyphens (IDNs as punycode).
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")

MESSAGES = {
    "setting": "ALERT_EMAIL_DOMAINS: {value!r} is not a mail domain (e.g. example.org).",
    "refused": "{address} is not at an allowed mail domain (the operator allows {domains}).",
}


def parse_domains(items) -> tuple[str, ...]:
    """The allowed domains, lower-cased, from the setting's items; ValueError naming the
    first that is not a domain name (an address, a URL, a wildcard)."""
    domains = []
    for item in items:
        domain = str(item).strip().lower().rstrip(".")
        labels = domain.split(".")
        if len(domain) > 253 or len(labels) < 2 or not all(_LABEL.match(x) for x in labels):
            raise ValueError(MESSAGES["setting"].format(value=item))
        if domain not in domains:
            domains.append(domain)
    return tuple(domains)


def domain_allowed(address: str, domains: tuple[str, ...]) -> bool:
    """Whether ``address`` (already a valid e-mail address) is at one of ``domains``, or
    any address when there are none."""
    if not domains:
        return True
    host = address.rpartition("@")[2].lower().rstrip(".")
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def refusal(address: str, domains: tuple[str, ...]) -> str:
    return MESSAGES["refused"].format(address=address, domains=", ".join(domains))
