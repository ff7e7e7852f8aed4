"""Playwright drives Debian's Chromium (`playwright install` cannot download here): its
headless shell, as Playwright's own headless runs do (scripts/ensure-chromium says why)."""

import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium-headless-shell")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: run `make test` (it installs it) or set CHROMIUM_PATH"
        )
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 800}}


def save_screenshot(page, path: Path) -> None:
    """A full-page screenshot at ``path`` (under SCREENSHOTS) for people to look at; none
    with ``SCREENSHOTS=0`` (CI's lanes: nobody looks at a clone's pictures, and drawing and
    encoding them cost Chromium a sixth of the browser tests' CPU). No test reads them."""
    if os.environ.get("SCREENSHOTS", "1") == "0":
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=path, full_page=True)


@pytest.fixture
def screenshot(page, request):
    """Save a full-page screenshot under test-artifacts/screenshots/ (``save_screenshot``)."""

    def take(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        save_screenshot(page, path)
        return path

    return take


@pytest.fixture
def login(page, live_server):
    def log_in(username: str, password: str) -> None:
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()

    return log_in


# What follows the window's width (charts redrawn by a ResizeObserver) has redrawn two
# animation frames later: measured at once, a chart still drawn at its first width made a
# page wider than the phone for a frame (CI, the run diff at 390 px: 488 px).
SETTLED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
WIDTHS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def page_widths(page) -> tuple[int, int]:
    """The page's width (what scrolls) and its window's, once the layout has settled."""
    page.evaluate(SETTLED)
    scroll, window = page.evaluate(WIDTHS)
    return scroll, window


def scroll_width(page) -> int:
    return page_widths(page)[0]


def no_sideways_scroll(page) -> None:
    """A phone must never scroll the whole page sideways."""
    scroll, window = page_widths(page)
    assert scroll <= window, (
        f"the page scrolls sideways at {window} px: {scroll} px wide in a {window} px window"
    )
