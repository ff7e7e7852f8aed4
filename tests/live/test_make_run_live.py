"""``make run`` itself, on a port and a data folder of its own (issue 28: it ran with DEBUG=1,
so a 404 listed every URL pattern and a POST-only page opened by its address was blank).
The demo shows the product's own error pages, serves its static files and keeps a login over
plain http on loopback, and its log prints an expected refusal on one line."""

import http.cookiejar
import os
import re
import signal
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.faults.conftest import ROOT, wait_for
from tests.live.servers import free_port

pytestmark = pytest.mark.live

# What a fresh shell has: none of the settings a test run or a developer may have exported.
CLEARED = (
    "DATABASE_URL",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "SECURE_SSL_REDIRECT",
    "SECURE_COOKIES",
    "SECURE_HSTS_SECONDS",
    "TASKS_BACKEND",
    "MEDIA_ROOT",
    "STATIC_ROOT",
    "DJANGO_SETTINGS_MODULE",
)


class Browser:
    """Cookies kept, redirects followed, 4xx and 5xx answers returned rather than raised."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str):
        return self._open(urllib.request.Request(self.base + path))

    def post(self, path: str, fields: dict):
        body = urllib.parse.urlencode(fields).encode()
        return self._open(
            urllib.request.Request(self.base + path, data=body, headers={"Referer": self.base})
        )

    def _open(self, request):
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read().decode()

    def log_in(self, username: str, password: str) -> None:
        _, _, page = self.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        status, _, home = self.post(
            "/accounts/login/",
            {"csrfmiddlewaretoken": token, "username": username, "password": password},
        )
        assert status == 200 and "Log out" in home, f"the login over http failed: {status}"


def answers(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def make_run(tmp_path):
    """(base URL, log file) of ``make run`` on a free port, its data in tmp_path."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env["DATA_DIR"] = str(tmp_path / "data")
    log = tmp_path / "make-run.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: answers(base), seconds=300, what="make run to answer", process=process)
        yield base, log
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # as Ctrl-C: the trap stops the worker
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)


def test_make_run_serves_the_products_error_pages_over_plain_http(make_run):
    base, log = make_run
    browser = Browser(base)

    status, _, page = browser.get("/no-such-page/")
    assert status == 404
    assert "<title>Not found · Qrelsmith</title>" in page
    for debug in ("URLconf", "urlpatterns", "DEBUG = True", "Page not found at"):
        assert debug not in page, f"the 404 is Django's debug page ({debug!r})"

    status, headers, css = browser.get("/static/css/app.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css") and css

    browser.log_in("lead", "lead-demo")  # no https redirect, no https-only cookie
    _, _, campaigns = browser.get("/campaigns/")
    campaign = re.search(r'href="/campaigns/(\d+)/"', campaigns).group(1)
    status, headers, page = browser.get(f"/campaigns/{campaign}/machines/new/")
    assert status == 405 and headers["Allow"] == "POST"
    assert "<h1>Not available this way</h1>" in page and "does not take a GET request" in page

    judge = Browser(base)
    judge.log_in("judge", "judge-demo")
    status, _, page = judge.get("/campaigns/new/")
    assert status == 403 and "<h1>Not allowed</h1>" in page

    printed = log.read_text()
    refusal = [line for line in printed.splitlines() if "Forbidden" in line]
    assert len(refusal) == 1 and "/campaigns/new/" in refusal[0], printed[-3000:]
    assert "Traceback" not in printed, printed[-3000:]
