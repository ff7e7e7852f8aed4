"""An endpoint's versions: each change to what its request is or how its answer is read
(services/search.py VERSIONED) is kept as a SearchEndpointVersion (who, when, a note), so
versions can be listed, read again, compared by a sandbox trial (services/sandbox.py) and
their templates diffed (evaluation.search.sandbox.text_diff)."""

from __future__ import annotations

from evaluation.models import SearchEndpoint, SearchEndpointVersion

NOTE_MAX = 300


def record_version(endpoint: SearchEndpoint, *, by=None, note: str = "") -> SearchEndpointVersion:
    """The endpoint as it is now, kept as its version ``endpoint.version`` (once: a second
    call for the same number returns the first)."""
    version, _ = SearchEndpointVersion.objects.get_or_create(
        endpoint=endpoint,
        number=endpoint.version,
        defaults={
            "kind": endpoint.kind,
            "url": endpoint.url,
            "method": endpoint.method,
            "template": endpoint.template,
            "mapping": endpoint.mapping,
            "auth": endpoint.auth,
            "auth_header": endpoint.auth_header,
            "note": note.strip()[:NOTE_MAX],
            "created_by": by,
        },
    )
    return version


def versions_of(endpoint: SearchEndpoint) -> list[SearchEndpointVersion]:
    """Newest first, each with who saved it."""
    return list(
        SearchEndpointVersion.objects.filter(endpoint=endpoint)
        .select_related("created_by")
        .order_by("-number")
    )
