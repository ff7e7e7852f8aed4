"""A real OpenID Connect provider on loopback (tests/oidc_provider.mjs: `oidc-provider` from
the npm registry, installed under .cache/oidc by scripts/ensure-oidc-provider), for the
single sign-on tests; and a walk through its sign-in page over plain HTTP, for the tests that
need no browser.

One provider serves a whole test session: its clients are registered with the live server's
callback, and each test writes its own users (``add_user``), so tests never share one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

import requests

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "oidc_provider.mjs"
MODULES = Path(os.environ.get("OIDC_PROVIDER_MODULES") or ROOT / ".cache/oidc/node_modules")
CLIENT_ID = "qrelsmith"
CLIENT_SECRET = "a-test-client-secret-" + uuid.uuid4().hex
OTHER_CLIENT_ID = "another-app"  # the provider's other client (the "audience" fault's aud)
PASSWORD = "provider-password"
START_SECONDS = 30


def missing() -> str | None:
    """Why the provider cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed: the single sign-on tests need Node.js for oidc-provider"
    if not (MODULES / "oidc-provider" / "package.json").is_file():
        return (
            f"oidc-provider is not installed under {MODULES}: run `make chromium` "
            "(scripts/ensure-oidc-provider; `make test` runs it)"
        )
    return None


@dataclass
class Provider:
    issuer: str
    accounts: Path
    process: subprocess.Popen
    base_url: str  # the app's, whose callback the client is registered with
    users: list[str] = field(default_factory=list)

    def add_user(self, *, groups=(), email=None, fault=None, **claims) -> str:
        """A new user at the provider (a fresh login name); returns the login, which is also
        the provider's subject (``sub``) for them."""
        login = "u" + uuid.uuid4().hex[:12]
        self.write_user(
            login, groups=groups, email=email or f"{login}@example.com", fault=fault, **claims
        )
        return login

    def write_user(self, login: str, *, groups, email, fault=None, **claims) -> None:
        account = {
            "password": PASSWORD,
            "email": email,
            "name": claims.pop("name", login),
            "groups": list(groups),
            **claims,
        }
        if fault:
            account["fault"] = fault
        path = self.accounts / f"{login}.json"
        path.with_suffix(".tmp").write_text(json.dumps(account))
        path.with_suffix(".tmp").replace(path)  # the provider never reads half a file

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_provider(base_url: str) -> Provider:
    """Starts the provider with our client registered for ``base_url``'s callback and
    post-logout page; returns once it listens."""
    folder = Path(tempfile.mkdtemp(prefix="oidc-provider-"))
    accounts = folder / "accounts"
    accounts.mkdir()
    config = {
        "modules": str(MODULES),
        "accounts": str(accounts),
        "clients": [
            {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": [f"{base_url}/accounts/oidc/callback/"],
                "post_logout_redirect_uris": [f"{base_url}/accounts/login/"],
            },
            {
                "client_id": OTHER_CLIENT_ID,
                "client_secret": "another-secret-" + uuid.uuid4().hex,
                "redirect_uris": ["http://127.0.0.1:9/callback"],
            },
        ],
    }
    (folder / "config.json").write_text(json.dumps(config))
    process = subprocess.Popen(
        ["node", str(SCRIPT), str(folder / "config.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = _first_line(process)
    except Exception:
        process.kill()
        raise
    return Provider(
        issuer=json.loads(line)["issuer"], accounts=accounts, process=process, base_url=base_url
    )


def _first_line(process: subprocess.Popen) -> str:
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=START_SECONDS):
            raise RuntimeError(f"oidc-provider did not start within {START_SECONDS} s")
    line = process.stdout.readline()
    if not line:
        raise RuntimeError(f"oidc-provider exited with {process.wait()}")
    return line


def sign_in_at_provider(
    authorize_url: str,
    login: str,
    *,
    password: str = PASSWORD,
    stop_at: str,
    browser: requests.Session | None = None,
) -> str:
    """What a browser does at the provider: follows its redirects to the sign-in page, signs
    in, and follows on until a redirect leads to ``stop_at`` (our callback); returns that
    URL. ``browser`` keeps the provider's cookies between sign-ins."""
    browser = browser or requests.Session()
    url = authorize_url
    for _ in range(10):
        if url.startswith(stop_at):
            return url
        answer = browser.get(url, allow_redirects=False, timeout=10)
        if answer.status_code in (302, 303):
            url = urljoin(url, answer.headers["Location"])
            continue
        form = re.search(r'<form method="post" action="([^"]+)"', answer.text)
        if answer.status_code != 200 or form is None:
            raise AssertionError(f"the provider answered {answer.status_code}: {answer.text[:300]}")
        answer = browser.post(
            urljoin(url, form.group(1)),
            allow_redirects=False,
            timeout=10,
            data={"login": login, "password": password},
        )
        if answer.status_code != 303:
            raise AssertionError(f"sign-in at the provider failed: {answer.status_code}")
        url = urljoin(url, answer.headers["Location"])
    raise AssertionError(f"no redirect to {stop_at} after 10 steps")
