"""common/uploads.py: MAX_UPLOAD_MB is enforced before a body is read, on every upload route
(web import forms, the web run upload, the API), with a 413 and nothing stored or staged."""

from __future__ import annotations

import http.client
import io
import json

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http.multipartparser import MultiPartParser
from django.test import AsyncClient, RequestFactory
from django.test.client import BOUNDARY, MULTIPART_CONTENT, FakePayload, encode_multipart

from annotation import services
from annotation.models import Topic
from common import uploads
from tests.rows import row_counts

pytestmark = pytest.mark.django_db

MIB = 1024 * 1024
MESSAGE = uploads.UPLOAD_TOO_LARGE.format(limit=1)


def user_with(django_user_model, name, *roles):
    user = django_user_model.objects.create_user(name)
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


@pytest.fixture
def limit_1mb(settings):
    settings.MAX_UPLOAD_MB = 1


@pytest.fixture
def lead(django_user_model):
    return user_with(django_user_model, "lea", "lead")


@pytest.fixture
def campaign(lead):
    return services.create_campaign(lead=lead, name="Robust")


def big_topics(size: int = 2 * MIB) -> SimpleUploadedFile:
    lines, total = [], 0
    while total <= size:
        lines.append(b"%d\tcheap flights\n" % len(lines))
        total += len(lines[-1])
    return SimpleUploadedFile("topics.tsv", b"".join(lines))


def assert_refused_html(response):
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert MESSAGE in page
    assert uploads.NEXT_STEP in page


def test_a_web_import_over_the_limit_is_a_413_page_and_stores_nothing(
    client, lead, campaign, limit_1mb, media_root
):
    client.force_login(lead)
    before = row_counts()
    response = client.post(f"/campaigns/{campaign.pk}/topics/import/", {"file": big_topics()})
    assert_refused_html(response)
    assert row_counts() == before
    assert media_root() == []


def test_the_web_run_upload_over_the_limit_is_a_413_page_and_stores_nothing(
    client, django_user_model, limit_1mb, media_root
):
    client.force_login(user_with(django_user_model, "eng", "engineer"))
    run = b"1 Q0 d1 1 1.0 bm25\n" * (2 * MIB // 19 + 1)
    before = row_counts()
    response = client.post(
        "/evaluation/runs/upload/",
        {
            "files": [SimpleUploadedFile("bm25.run", run)],
            "system": "new",
            "new_name": "bm25",
            "gain": "linear",
            "relevance_level": 1,
        },
    )
    assert_refused_html(response)
    assert row_counts() == before
    assert media_root() == []


def test_an_api_upload_over_the_limit_is_a_413_json_error_and_stores_nothing(
    client, lead, campaign, limit_1mb, media_root
):
    client.force_login(lead)
    before = row_counts()
    response = client.post(
        f"/api/v1/campaigns/{campaign.pk}/topics/", {"file": big_topics()}, HTTP_ACCEPT="*/*"
    )
    assert response.status_code == 413
    assert response.json() == {"detail": MESSAGE}
    assert row_counts() == before
    assert media_root() == []


def test_the_limit_is_checked_before_login_so_no_body_is_read_for_anyone(
    client, campaign, limit_1mb, media_root
):
    response = client.post(f"/campaigns/{campaign.pk}/topics/import/", {"file": big_topics()})
    assert response.status_code == 413


def test_an_upload_under_the_limit_goes_through(
    client, lead, campaign, limit_1mb, media_root, django_capture_on_commit_callbacks
):
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/campaigns/{campaign.pk}/topics/import/",
            {"file": big_topics(size=MIB // 2)},
        )
    assert response.status_code == 302
    assert Topic.objects.filter(campaign=campaign).count() > 20_000


def test_other_requests_are_not_touched(client, lead, limit_1mb):
    client.force_login(lead)
    assert client.get("/campaigns/").status_code == 200


def _asgi_post(path: str, body: bytes, declared: int):
    """POST ``body`` through the ASGI handler with a Content-Length that lies: under ASGI the
    multipart parser reads the body whatever the header says."""
    client = AsyncClient()
    headers = [
        (b"host", b"testserver"),
        (b"content-type", MULTIPART_CONTENT.encode()),
        (b"content-length", str(declared).encode()),
    ]
    return async_to_sync(client.request)(
        method="POST", path=path, headers=headers, _body_file=FakePayload(body)
    )


def test_a_body_longer_than_its_content_length_stops_at_the_limit(campaign, limit_1mb, media_root):
    body = encode_multipart(BOUNDARY, {"file": big_topics()})
    before = row_counts()
    response = _asgi_post(f"/campaigns/{campaign.pk}/topics/import/", body, declared=1000)
    assert response.status_code == 413
    assert MESSAGE in response.content.decode()
    assert row_counts() == before
    assert media_root() == []


def test_the_handler_stops_reading_once_the_files_pass_the_limit(limit_1mb):
    body = encode_multipart(BOUNDARY, {"file": big_topics(size=3 * MIB), "note": "x"})
    stream = io.BytesIO(body)
    request = RequestFactory().get("/")
    handlers = [uploads.UploadLimitHandler(request)]
    meta = {"CONTENT_TYPE": MULTIPART_CONTENT, "CONTENT_LENGTH": "1000"}
    _post, files = MultiPartParser(meta, stream, handlers).parse()
    assert "file" not in files
    assert getattr(request, "_upload_limit_exceeded", False)
    # The connection is dropped rather than read to the end: most of the body is left.
    assert len(body) - stream.tell() > MIB


def test_a_declared_length_over_the_limit_is_not_parsed_by_the_handler(limit_1mb):
    request = RequestFactory().get("/")
    handler = uploads.UploadLimitHandler(request)
    post, files = handler.handle_raw_input(io.BytesIO(b""), {}, 2 * MIB, BOUNDARY)
    assert (dict(post), dict(files)) == ({}, {})
    assert request._upload_limit_exceeded


@pytest.mark.django_db(transaction=True)
def test_a_real_server_answers_413_before_the_client_sends_the_body(live_server, settings):
    """Over a socket: the headers announce 2 MiB, no byte of the body is sent, and the 413
    comes back anyway, so nothing waited for (or read) the body."""
    settings.MAX_UPLOAD_MB = 1
    host, port = live_server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.putrequest("POST", "/api/v1/runs/")
    connection.putheader("Content-Type", f"multipart/form-data; boundary={BOUNDARY}")
    connection.putheader("Content-Length", str(2 * MIB))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413
    # The body is read as it arrives: the development server then waits for the upload
    # it announced (to drain it), so reading to the end of the connection would hang.
    assert json.loads(response.read1(4096)) == {"detail": MESSAGE}
    connection.close()
