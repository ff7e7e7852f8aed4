"""Single sign-on with OpenID Connect: the pure parts (no Django). ``config`` reads the
operator's settings, ``mapping`` turns a provider's groups into our roles, ``transport``
carries the provider requests through the outbound policy (common/outbound.py). The Django
side (the client, users and their roles, the pages) is accounts/services/oidc.py and
accounts/views.py."""
