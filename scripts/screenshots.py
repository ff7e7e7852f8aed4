"""Make the README's screenshots (docs/screenshots/*.png) from the demo data.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

A fresh SQLite database in a temporary folder gets `manage.py demo`; the development server
serves it on a free loopback port, and Playwright drives Debian's Chromium (CHROMIUM_PATH,
default /usr/bin/chromium, as the browser tests) logged in as the demo engineer (home, leaderboard), as the
demo judge (judge.png, and the judge page on a phone: judge-phone.png, 390 x 844, touch) and
as the demo lead (agreement.png, the simulated panel's agreement report). Nothing of the
project's own database or media is touched. Retake them when a page they show changes.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
VIEWPORT = {"width": 1280, "height": 800}
# name, path, whole page (True) or the first screen (False)
SHOTS = [
    ("home", "/", False),
    ("leaderboard", "/evaluation/leaderboard/", True),
]
# The judge page as a judge sees it on a phone (its bar is fixed at the bottom of the screen,
# so the first screen, not the whole page).
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "has_touch": True,
    "is_mobile": True,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the development server stopped (exit {server.returncode})")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    sys.exit(f"the development server did not answer at {url} within {seconds:.0f} s")


def demo_campaign_names() -> tuple[str, str]:
    """The demo's two campaigns: the judge's and the simulated panel's."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from annotation.services import demo

    return demo.CAMPAIGN, demo.PANEL_CAMPAIGN


def log_in(page, base: str, username: str) -> None:
    """Log in as a demo user (manage.py demo: the password is the username + "-demo")."""
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"{username}-demo")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/")


def save(page, target: Path, *, full_page: bool) -> None:
    page.screenshot(path=target, full_page=full_page)
    print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}: run `make chromium` or set CHROMIUM_PATH")
    args.out.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="screenshots-") as data_dir:
        env = {
            **os.environ,
            "DATA_DIR": data_dir,
            "DATABASE_URL": "",
            "DEBUG": "1",
            "TASKS_BACKEND": "django.tasks.backends.immediate.ImmediateBackend",
        }
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v", "0"], env=env, check=True, cwd=ROOT)
        subprocess.run([*manage, "demo"], env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{free_port()}"
        server = subprocess.Popen(
            [*manage, "runserver", base.removeprefix("http://"), "--noreload"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(f"{base}/accounts/login/", server)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
                )
                page = browser.new_page(viewport=VIEWPORT)
                log_in(page, base, "engineer")
                for name, path, full_page in SHOTS:
                    page.goto(f"{base}{path}")
                    page.wait_for_load_state("networkidle")
                    save(page, args.out / f"{name}.png", full_page=full_page)
                judge = browser.new_page(viewport=VIEWPORT)
                log_in(judge, base, "judge")
                judge.get_by_role("link", name="Judge").first.click()
                judge.locator("#document-slot [data-assignment]").wait_for()
                judge.wait_for_load_state("networkidle")
                save(judge, args.out / "judge.png", full_page=False)
                lead = browser.new_page(viewport=VIEWPORT)
                log_in(lead, base, "lead")
                lead.get_by_role("link", name=demo_campaign_names()[1]).click()
                lead.get_by_role("link", name="Agreement", exact=True).first.click()
                lead.wait_for_load_state("networkidle")
                save(lead, args.out / "agreement.png", full_page=False)
                phone = browser.new_context(**PHONE).new_page()
                log_in(phone, base, "judge")
                phone.goto(f"{base}/campaigns/")
                # the demo judge has one campaign
                phone.get_by_role("link", name="Judge").first.click()
                phone.locator("#document-slot [data-assignment]").wait_for()
                phone.wait_for_load_state("networkidle")
                save(phone, args.out / "judge-phone.png", full_page=False)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
