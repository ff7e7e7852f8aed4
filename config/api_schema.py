"""The OpenAPI schema view, building and rendering the schema once per process.

The schema follows from the code alone: it is public (the same for every user), in one
version and one language. drf-spectacular's view builds and renders it again on each
request, about a second of CPU that any logged-in user could ask for in a loop, and its
``?version=`` and ``?lang=`` parameters would make each request a new one. This view
ignores both and keeps the schema, and each format's rendering of it, from the first time.
"""

import threading

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView

_lock = threading.Lock()
_schema = {}
_rendered = {}


class SchemaView(SpectacularAPIView):
    @extend_schema(**SCHEMA_KWARGS)
    def get(self, request, *args, **kwargs):
        renderer, media_type = request.accepted_renderer, request.accepted_media_type
        with _lock:
            if "schema" not in _schema:
                generator = self.generator_class(urlconf=self.urlconf, patterns=self.patterns)
                _schema["schema"] = generator.get_schema(request=request, public=True)
            if media_type not in _rendered:
                _rendered[media_type] = renderer.render(_schema["schema"], media_type, {})
        charset = f"; charset={renderer.charset}" if renderer.charset else ""  # as DRF says it
        response = HttpResponse(_rendered[media_type], content_type=media_type + charset)
        filename = self._get_filename(request, None)
        response["Content-Disposition"] = f'inline; filename="{filename}"'
        return response
