"""A file store that fails while a request writes an upload is the store's failure, not the
user's and not a bug: answer 503 with what to do (try again), on pages and in the API, never
a 500. The work raising it (jobs.services.stage_upload) has stored nothing and started
nothing, so sending the same request again is safe."""

from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from jobs.services import StorageUnavailable

RETRY_AFTER_SECONDS = 30


class StorageUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, StorageUnavailable):
            return None
        message = str(exception)
        if request.path_info.startswith("/api/"):
            response = JsonResponse({"detail": message}, status=503)
        else:
            page = render_to_string("503.html", {"message": message})
            response = HttpResponse(page, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
