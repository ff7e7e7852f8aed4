"""axe-core on every page of every role: no serious or critical violation (issue 28).

The pages are the page permission matrix's (tests/pages/test_permissions.py): every GET row a
role gets a 200 for, on the matrix's own small world (tests/api/conftest.py) with two more
runs and a newer qrels version, so a new page is checked here as soon as it has its row.
Rows that answer something other than a whole HTML page (downloads, CSV, htmx fragments) are
left out by what they answer, not by name. A few pages show their real content only with
options in the query (a comparison of two runs, a diff, two qrels versions side by side):
``VARIANTS`` adds those. Besides: every page the matrix lets anonymous visitors see (the
login page) and a 404, the 403 page as each role but admin meets it, and every other error
page (``templates/NNN.html``) rendered as its handler renders it.

axe-core comes from the npm registry (scripts/ensure-axe, which ``make test`` runs through
``make chromium``, installs the pinned version under .cache/axe); ``AXE_CORE_JS`` points
elsewhere. It is injected into each page by a browser context that bypasses the Content
Security Policy (the policy forbids inline scripts, rightly, for the site's own pages).

Every page is checked at 1280 px, then narrowed to 390 px and checked again with the rules
the layout changes; every role's home, the campaign list and the judge's page are also
loaded at 390 px and checked whole, with the header's menus open. At 390 px no page may scroll
sideways as a whole (axe does not look at that): what is wider scrolls in its own box.
"""

import itertools
import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client
from django.urls import resolve

from evaluation import services as evaluation
from tests.api.conftest import OTHER_RUN, QRELS, make_user, world  # noqa: F401 (fixtures)
from tests.api.test_permissions import ROLES
from tests.browser.conftest import page_widths
from tests.pages.conftest import ids  # noqa: F401 (fixture)
from tests.pages.test_permissions import MATRIX, SCORED

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = Path(os.environ.get("AXE_CORE_JS") or ROOT / ".cache/axe/node_modules/axe-core/axe.min.js")
BLOCKING = ("serious", "critical")
# Rules that fail the test whatever their impact: issue 28 named empty table headers (axe
# calls them minor: a column a screen reader announces without a name).
ALWAYS_BLOCKING = {"empty-table-header"}
WIDE, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}
DASHBOARD = list(evaluation.DASHBOARD_MEASURES)
THIRD_RUN = b"1 Q0 d1 1 2.0 lex\n2 Q0 d3 1 1.0 lex\n2 Q0 d4 2 0.5 lex\n"
ERROR_PAGE = re.compile(r"\A(\d{3})\.html\Z")

# Pages whose real content needs options or other objects than the matrix's row names (a
# comparison of two runs, a diff of two versions): route -> more paths, with the matrix's
# placeholders plus the world's second run, the newer version of its qrels and the version
# the campaign published. A role reaches them where the matrix says it reaches the route.
VARIANTS = {
    "evaluation/compare/": ["evaluation/compare/?baseline={run}&runs={other_run}&" + SCORED],
    "evaluation/diff/": ["evaluation/diff/?a={run}&b={other_run}&" + SCORED],
    "evaluation/leaderboard/": ["evaluation/leaderboard/?" + SCORED],
    "evaluation/rankings/": ["evaluation/rankings/?old={qrels}&new={newer}"],
    "evaluation/qrels/<int:pk>/": ["evaluation/qrels/{published}/"],
    "evaluation/qrels/<int:pk>/diff/<int:other>/": ["evaluation/qrels/{qrels}/diff/{newer}/"],
    "campaigns/<int:pk>/adjudicate/": ["campaigns/{campaign}/adjudicate/?show=all"],
}
# Every page, once checked at 1280 px, is narrowed to 390 px where it stands and checked
# again with the rules whose answer depends on the layout: text that wraps onto another
# background, a table that starts to scroll and must then take the keyboard's focus.
NARROW_RULES = ["color-contrast", "scrollable-region-focusable"]
# These are also loaded afresh at 390 px (a phone's own layout and scripts) and checked with
# every rule, the header's menus open: every role's home and the judge's page.
PHONE_ROUTES = {"", "campaigns/", "campaigns/<int:pk>/judge/"}


def axe_source() -> str:
    if not AXE_JS.is_file():
        pytest.fail(
            f"axe-core not found at {AXE_JS}: run `make chromium` (scripts/ensure-axe installs "
            "it from the npm registry; `make test` runs it) or set AXE_CORE_JS to an axe.min.js"
        )
    return AXE_JS.read_text()


def route_of(url: str) -> str:
    return resolve(url.split("?")[0]).route


def pages_for(role: str, placeholders: dict) -> list[str]:
    """The paths (with their queries) ``role`` gets a 200 for in the matrix, and variants."""
    column = ROLES.index(role)
    paths = []
    for method, path, _, statuses in MATRIX:
        if method != "GET" or statuses[column] != 200:
            continue
        url = "/" + path.format(**placeholders)
        paths.append(url)
        paths += [
            "/" + variant.format(**placeholders) for variant in VARIANTS.get(route_of(url), [])
        ]
    return paths


def first_forbidden(role: str, placeholders: dict) -> str | None:
    """A page ``role`` is refused (403): the error page as that role meets it (None: an admin
    is refused nothing)."""
    column = ROLES.index(role)
    forbidden = (
        "/" + path.format(**placeholders)
        for method, path, _, statuses in MATRIX
        if method == "GET" and statuses[column] == 403
    )
    return next(forbidden, None)


@pytest.fixture
def seeded(world, ids):  # noqa: F811 (the fixtures imported above)
    """The matrix's world and ids, with two more runs and a second version of the qrels (a
    grade changed, a pair added), every run scored with both versions, as comparisons, diffs
    and rankings (three runs at least) need; and the qrels version the campaign published."""
    engineer = world.users["engineer"]
    other = evaluation.import_run(
        source=OTHER_RUN, filename="dense.run", system="dense", user=engineer
    )
    third = evaluation.import_run(source=THIRD_RUN, filename="lex.run", system="lex", user=engineer)
    newer = evaluation.import_qrels(
        source=QRELS.replace(b"1 0 d2 0", b"1 0 d2 1") + b"2 0 d5 2\n",
        filename="dl.qrels",
        name=world.qrels.name,
    )
    runs = (world.run, other, third)
    for run, qrels in itertools.product(runs, (world.qrels, newer)):  # the dashboards' measures
        evaluation.evaluate_run(run=run, qrels=qrels, measure_specs=DASHBOARD)
    for run in (other, third):  # the matrix's (SCORED), as the world scored its run
        evaluation.evaluate_run(run=run, qrels=world.qrels, measure_specs=["ndcg_cut.10", "map"])
    extra = {"other_run": other.pk, "newer": newer.pk, "published": world.publication.qrels_id}
    return world, {**ids, **extra}


def session_cookie(live_server, user) -> dict:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    return {"name": cookie.key, "value": cookie.value, "url": live_server.url}


def check(page, source: str, label: str, open_menus=False, rules=None) -> list[str]:
    """Inject axe-core, run it (``rules``: only those), and describe each serious or critical
    violation. With ``open_menus`` the header's menus (<details>) are opened first, so their
    links are checked too."""
    if open_menus:
        page.eval_on_selector_all("header details", "menus => menus.forEach(m => m.open = true)")
    if not page.evaluate("typeof axe !== 'undefined'"):  # set_content runs no init script
        page.add_script_tag(content=source)
    # Violations only: the "no-passes" reporter leaves out the passes, incomplete and
    # inapplicable results (a node each, with its selector) that are never read here, and
    # sending them back to Python cost more than half of what a full run of axe costs.
    options = {"resultTypes": ["violations"], "reporter": "no-passes"}
    if rules:
        options["runOnly"] = {"type": "rule", "values": rules}
    result = page.evaluate("async (options) => await axe.run(document, options)", options)
    problems = []
    for violation in result["violations"]:
        if violation["impact"] not in BLOCKING and violation["id"] not in ALWAYS_BLOCKING:
            continue
        nodes = [
            " ".join(map(str, node["target"]))
            + "".join(f" ({check['message']})" for check in node["any"][:1])
            for node in violation["nodes"]
        ]
        problems.append(
            f"{label}: {violation['id']} ({violation['impact']}): {violation['help']}; "
            f"{len(nodes)} node(s): " + "; ".join(nodes[:5])
        )
    return problems


# What sticks out of the page's width: elements whose right edge passes it, innermost first
# (a wide table rather than the body holding it).
WIDEST = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > width + 1)
    .filter(e => ![...e.children].some(c => c.getBoundingClientRect().right > width + 1))
    .slice(0, 3)
    .map(e => `${e.tagName.toLowerCase()}${e.className ? '.' + e.className : ''} `
      + `(right edge ${Math.round(e.getBoundingClientRect().right)} px)`);
}"""


def sideways(page, label: str) -> list[str]:
    """A phone must never scroll the whole page sideways: what is wider than the screen
    scrolls inside its own box (a table's .overflow-auto or .table-scroll)."""
    wide, screen = page_widths(page)
    if wide <= screen:
        return []
    return [
        f"{label}: the page scrolls sideways ({wide} px wide): " + "; ".join(page.evaluate(WIDEST))
    ]


# Transitions a change of width started (a link's colour eases over 0.2 s in Pico), ended or
# cancelled; an endless animation (a pulsing dot) is not waited for.
TRANSITIONS_ENDED = """() => Promise.all(document.getAnimations()
  .filter(a => a instanceof CSSTransition).map(a => a.finished.catch(() => null)))"""


def narrow(page) -> None:
    """Narrow the page to 390 px and wait for what the new width set in motion to end: axe
    reads computed colours, and a colour half-way through its transition is neither the wide
    page's nor the narrow page's (a contrast failure only the narrow layout has was missed
    when axe read it on the way)."""
    page.set_viewport_size(PHONE)
    page.evaluate(TRANSITIONS_ENDED)


def visit(page, live_server, path, expect, source, label, open_menus=False) -> list[str]:
    response = page.goto(live_server.url + path, wait_until="load")
    assert response is not None and response.status == expect, (
        f"{label}: {path} answered {response and response.status}, the matrix says {expect}: "
        + page.inner_text("main")[:300]
    )
    return check(page, source, label, open_menus)


def is_full_page(context, live_server, path: str, seen: dict) -> bool:
    """A whole HTML document, not a download, CSV or htmx fragment (whoever asks: ``seen``
    keeps the answers across roles)."""
    if path not in seen:
        response = context.request.get(live_server.url + path, max_redirects=0)
        kind = response.headers.get("content-type", "")
        start = response.text().lstrip()[:15].lower()
        seen[path] = kind.startswith("text/html") and start == "<!doctype html>"
    return seen[path]


def new_context(browser, browser_context_args, source: str):
    """A context that may inject scripts whatever the page's CSP, with axe-core in every page
    it opens (an init script, so each page need not be sent the 600 kB again)."""
    context = browser.new_context(**{**browser_context_args, "viewport": WIDE}, bypass_csp=True)
    context.add_init_script(script=source)
    return context


def error_templates() -> list[str]:
    """The error pages their handlers render themselves (404 and 403 are met for real)."""
    folder = ROOT / "templates"
    return sorted(
        name
        for name in os.listdir(folder)
        if ERROR_PAGE.match(name) and name not in ("403.html", "404.html")
    )


def test_every_page_of_every_role_has_no_serious_or_critical_axe_violation(
    browser, browser_context_args, live_server, seeded
):
    source = axe_source()
    seeded_world, placeholders = seeded
    problems, checked, seen, routes_met = [], 0, {}, set()

    for role in ("admin", "lead", "judge", "engineer"):
        context = new_context(browser, browser_context_args, source)
        context.add_cookies([session_cookie(live_server, seeded_world.users[role])])
        page = context.new_page()
        paths = pages_for(role, placeholders)
        paths = [p for p in paths if is_full_page(context, live_server, p, seen)]
        for path in paths:
            problems += visit(page, live_server, path, 200, source, f"{role} {path} 1280px")
            narrow(page)
            problems += check(page, source, f"{role} {path} narrowed to 390px", rules=NARROW_RULES)
            problems += sideways(page, f"{role} {path} narrowed to 390px")
            page.set_viewport_size(WIDE)
            checked += 1
        forbidden = first_forbidden(role, placeholders)
        if forbidden:
            problems += visit(
                page, live_server, forbidden, 403, source, f"{role} {forbidden} (403)"
            )
        page.set_viewport_size(PHONE)
        for path in paths:
            routes_met.add(route_of(path))
            if route_of(path) in PHONE_ROUTES:
                label = f"{role} {path} 390px"
                problems += visit(page, live_server, path, 200, source, label, open_menus=True)
                problems += sideways(page, label)
                checked += 1
        context.close()

    context = new_context(browser, browser_context_args, source)
    page = context.new_page()
    anonymous = pages_for("anonymous", placeholders)
    anonymous = [p for p in anonymous if is_full_page(context, live_server, p, seen)]
    assert "/accounts/login/" in anonymous, anonymous
    for viewport in (WIDE, PHONE):
        page.set_viewport_size(viewport)
        width = f"{viewport['width']}px"
        for path in anonymous:
            problems += visit(page, live_server, path, 200, source, f"anonymous {path} {width}")
            problems += sideways(page, f"anonymous {path} {width}")
            checked += 1
        problems += visit(page, live_server, "/no-such-page/", 404, source, f"404 {width}")
        for name in error_templates():
            # Rendered as the handlers render them (config/errors.py), shown at the site's
            # address so the stylesheets load.
            html = render_to_string(name, {"message": "Something was wrong.", "next_step": ""})
            page.set_content(html, wait_until="load")
            problems += check(page, source, f"{name} {width}")
    context.close()

    assert checked > 60, f"only {checked} pages were checked: is the matrix read right?"
    # A renamed route must not leave its variants or its phone check behind unnoticed.
    unmet = (set(VARIANTS) | PHONE_ROUTES) - routes_met
    assert not unmet, f"routes in VARIANTS or PHONE_ROUTES no page has any more: {unmet}"
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)
