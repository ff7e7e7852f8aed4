"""The provider requests (discovery, keys, token, user info) through the outbound policy.

Authlib speaks HTTP through a ``requests`` session; this module gives that session one
transport adapter, which sends each request with common/outbound.py: the address checked
when the connection is made, no redirect followed, the answer capped in size and the
exchange in time. requests' own connection pool, proxies from the environment and redirect
handling are never used.

The provider's issuer is operator configuration (accounts/oidc/config.py), so its host and
port are allowed even when they are on a private network (a company's Keycloak usually is):
``policy_for_issuer`` adds exactly that host and port to the operator's OUTBOUND_ALLOW.
Endpoints that the discovery document names on another host get no such pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

from common.outbound import Allowed, OutboundError, Policy, check_url, connect, exchange

TIMEOUT_SECONDS = 10.0


class ProviderUnreachable(requests.ConnectionError):
    """A provider request that the outbound policy refused or that failed; ``kind`` is the
    outbound error's class of problem (address, dns, connection, timeout, redirect...)."""

    def __init__(self, error: OutboundError) -> None:
        super().__init__(error.message)
        self.kind = error.kind
        self.message = error.message


def policy_for_issuer(policy: Policy, issuer: str) -> Policy:
    """``policy`` with the issuer's own host and port allowed."""
    parts = urlsplit(issuer)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = (parts.hostname or "").lower().rstrip(".")
    return Policy(
        allow=(*policy.allow, Allowed(host=host, port=port)),
        max_response_bytes=policy.max_response_bytes,
        max_concurrency=policy.max_concurrency,
        max_retries=policy.max_retries,
    )


class OutboundAdapter(BaseAdapter):
    def __init__(self, policy: Policy, *, timeout: float = TIMEOUT_SECONDS) -> None:
        super().__init__()
        self.policy = policy
        self.timeout = timeout

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        body = request.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = {name: value for name, value in request.headers.items()}
        # The body is handed over as it came: no compressed answers to undo.
        headers["Accept-Encoding"] = "identity"
        headers.pop("Connection", None)
        try:
            target = check_url(request.url)
            connection = connect(target, self.policy, timeout=self.timeout)
            try:
                answer = exchange(
                    connection,
                    request.method,
                    target.path,
                    body=body,
                    headers=headers,
                    policy=self.policy,
                    timeout=self.timeout,
                )
            finally:
                connection.close()
        except OutboundError as error:
            raise ProviderUnreachable(error) from None
        response = requests.Response()
        response.status_code = answer.status
        response.headers = CaseInsensitiveDict(answer.headers.items())
        response.encoding = get_encoding_from_headers(response.headers)
        response._content = answer.body
        response.url = request.url
        response.request = request
        response.reason = ""
        return response

    def close(self) -> None:
        pass


def mount(session: requests.Session, policy: Policy) -> None:
    """Send every request of ``session`` through the outbound policy."""
    adapter = OutboundAdapter(policy)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.trust_env = False  # no HTTP_PROXY/NETRC from the environment
    session.max_redirects = 0
