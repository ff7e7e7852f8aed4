"""The web pages' permission matrix: every role × page × method, with the status it gets.

The API has its own matrix (tests/api/test_permissions.py); the pages follow the same rules
with the browser's conventions:

- anonymous visitors are sent to the login page (302); the judging endpoints, called by
  judge.js with fetch, answer 401 instead, so a script never mistakes the login page for
  success;
- an object a user may not see is a 404, so guessing ids reveals nothing (another judge's
  assignment, another lead's campaign, another user's job or token);
- a page the user's role may not use is a 403 (a judge or a user without a role on a run, the
  leaderboard or the upload page: judges never learn which system retrieved what);
- a method a page does not offer is a 405.

Columns (tests/api/conftest.py, ``world``): anonymous; ``nobody`` (logged in, no role);
``judge`` (judges the campaign, owns the assignment); ``other_judge`` (judges the same
campaign, owns neither the assignment nor anything guessed here); ``lead`` (leads the
campaign); ``other_lead`` (leads no campaign here); ``engineer`` (owns the job and the token);
``admin`` (superuser); and the team axis (tests/api/test_permissions.py, ``other_teams``):
``other_team_lead``, ``other_team_engineer`` and ``other_team_judge`` hold their roles in
another team only, so every page of the world's objects is a 404 for them.
``test_the_matrix_covers_every_page`` makes a new page add its row.
"""

import pytest
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from annotation.models import Document
from tests.api.conftest import signed_in
from tests.api.test_permissions import ALL_ROLES, other_teams
from tests.pages.permission_bodies import BODIES

pytestmark = pytest.mark.django_db

LOGIN = 302  # anonymous visitors are redirected to the login page


def everyone(ok):
    return (LOGIN, ok, ok, ok, ok, ok, ok, ok)


QRELS_READERS = (LOGIN, 404, 404, 404, 200, 200, 200, 200)
QRELS_READERS_REDIRECT = (LOGIN, 404, 404, 404, 302, 302, 302, 302)


def members(ok):
    """Whoever judges or leads the campaign (admins lead every campaign)."""
    return (LOGIN, 404, ok, ok, ok, 404, 404, ok)


def campaign_lead(ok):
    """The campaign's lead and admins; anybody else, its judges included, finds nothing."""
    return (LOGIN, 404, 404, 404, ok, 404, 404, ok)


def leads(ok):
    return (LOGIN, 403, 403, 403, ok, ok, 403, ok)


def readers(ok):
    """Leads and engineers: runs, evaluations and dashboards."""
    return (LOGIN, 403, 403, 403, ok, ok, ok, ok)


def engineers(ok):
    return (LOGIN, 403, 403, 403, 403, 403, ok, ok)


def campaign_text(ok):
    """A campaign's document on the dashboards: readers, but only the campaign's lead (and
    admins) find it; another lead and an engineer get the API's 404 (issue 27)."""
    return (LOGIN, 403, 403, 403, ok, 404, 404, ok)


def owner(ok):
    """The engineer's own job or token; admins see every job."""
    return (LOGIN, 404, 404, 404, 404, 404, ok, ok)


def schedule_owner(ok):
    """A schedule's owner (the world's lead) and admins; other readers find nothing."""
    return (LOGIN, 403, 403, 403, ok, 404, 404, ok)


def token_owner(ok):
    """A personal token is its owner's alone: not even an admin revokes it here."""
    return (LOGIN, 404, 404, 404, 404, 404, ok, 404)


def judge_page(ok):
    """The campaign's judges; its lead reads the campaign's pages, not a judge's queue."""
    return (LOGIN, 404, ok, ok, 404, 404, 404, 404)


def own_assignment(ok):
    """The assignment's own judge; fetch gets 401 for a lost session, not the login page."""
    return (401, 404, ok, 404, 404, 404, 404, 404)


def not_allowed():
    return (LOGIN, 405, 405, 405, 405, 405, 405, 405)


C = "campaigns/{campaign}"
# The options the world's evaluation was scored with.
SCORED = "qrels={qrels}&measures=ndcg_cut.10&measures=map"
J = C + "/judge/{assignment}"

# A page whose query or form names the world's qrels version: another team's leads and
# engineers are told it is unknown (the options form says so, 400), as for one that does
# not exist.
UNKNOWN_TO_OTHER_TEAMS = (400, 400, 403)

# (method, path, body, statuses in ROLES order[, statuses in TEAM_ROLES order when they are
# not what other_teams() derives]); bodies are form posts.
ROWS = [
    ("GET", "", None, everyone(200)),
    # accounts
    ("GET", "accounts/login/", None, (200, 302, 302, 302, 302, 302, 302, 302)),
    ("POST", "accounts/logout/", None, (302, 302, 302, 302, 302, 302, 302, 302)),
    # single sign-on's two legs are open to anybody; single sign-on is off here (no
    # OIDC_ISSUER), so there is nothing to start (tests/accounts/test_oidc_sign_in.py: on)
    ("GET", "accounts/oidc/login/", None, (404, 404, 404, 404, 404, 404, 404, 404)),
    ("GET", "accounts/oidc/callback/", None, (404, 404, 404, 404, 404, 404, 404, 404)),
    ("GET", "accounts/password/", None, everyone(200)),
    ("POST", "accounts/password/", None, everyone(200)),  # no old password: the form again
    ("GET", "accounts/tokens/", None, everyone(200)),
    ("POST", "accounts/tokens/", "token", everyone(201)),
    ("POST", "accounts/tokens/{token}/revoke/", None, token_owner(302)),
    # teams: each sees their own; a team's leads (and admins) make and revoke its service
    # tokens (the world's are the default team's; another team's lead has none of it)
    ("GET", "accounts/teams/", None, everyone(200)),
    (
        "POST",
        "accounts/teams/",
        "service_token",
        (LOGIN, 404, 404, 404, 201, 201, 404, 201),
        (404, 404, 404),
    ),
    (
        "POST",
        "accounts/teams/tokens/{service_token}/revoke/",
        None,
        (LOGIN, 404, 404, 404, 302, 302, 404, 302),
    ),
    # qrels: listed to everyone logged in; read by leads, engineers and admins, and by judges
    # only once their campaign has closed for them (evaluation/access.py)
    ("GET", "evaluation/qrels/", None, everyone(200)),
    ("GET", "evaluation/qrels/{qrels}/", None, QRELS_READERS),
    ("GET", "evaluation/qrels/{qrels}/download/", None, QRELS_READERS),
    ("GET", "evaluation/qrels/{qrels}/diff/{qrels}/", None, QRELS_READERS),
    # the compare form of a version's page redirects to the diff (issue 28, item 4)
    ("GET", "evaluation/qrels/{qrels}/compare/?other={qrels}", None, QRELS_READERS_REDIRECT),
    # sharing a version read-only with other teams: a lead of its team (others: nothing to
    # share, 404; the engineer reads it but may not share it)
    (
        "POST",
        "evaluation/qrels/{qrels}/sharing/",
        "share",
        (LOGIN, 404, 404, 404, 302, 302, 404, 302),
    ),
    ("GET", "evaluation/qrels/{qrels}/sharing/", None, (405,) * 8),
    # runs and dashboards: leads and engineers
    ("GET", "evaluation/runs/", None, readers(200)),
    ("GET", "evaluation/runs/{run}/", None, readers(200)),
    ("GET", "evaluation/runs/{run}/topics.csv?" + SCORED, None, readers(200)),
    ("GET", "evaluation/runs/{run}/download/", None, readers(200)),
    ("GET", "evaluation/runs/upload/", None, engineers(200)),
    ("GET", "evaluation/runs/upload/status/?jobs={upload}", None, owner(200), (404, 404, 404)),
    (
        "GET",
        "evaluation/runs/upload/jobs/{upload}/",
        None,
        owner(302),
    ),  # a row for htmx; else the job
    ("GET", "evaluation/measures/", None, readers(200)),
    ("GET", "evaluation/leaderboard/", None, readers(200)),
    ("POST", "evaluation/leaderboard/score/", "score", engineers(302)),
    ("POST", "evaluation/leaderboard/pool-fairness/", "score", readers(302)),
    (
        "GET",
        "evaluation/leaderboard/download/?layout=tot&" + SCORED,
        None,
        readers(200),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "evaluation/leaderboard/check/?" + SCORED, None, readers(200)),
    ("POST", "evaluation/leaderboard/check/", "check", readers(200)),
    ("GET", "evaluation/topics/{qid}/?" + SCORED, None, readers(200)),
    ("GET", "evaluation/documents/?docno=d1&qid=1", None, campaign_text(200), (404, 404, 403)),
    ("GET", "evaluation/compare/", None, readers(200)),
    ("POST", "evaluation/unjudged/send/", "send", campaign_lead(302), (404, 404, 404)),
    ("GET", "evaluation/diff/", None, readers(200)),
    ("POST", "evaluation/diff/send/", "diff_send", campaign_lead(302), (404, 404, 404)),
    ("GET", "evaluation/rankings/", None, readers(200)),
    # search endpoints: leads and engineers configure, test and run them
    ("GET", "evaluation/search/", None, readers(200)),
    ("POST", "evaluation/search/new/", "search_endpoint", readers(302)),
    ("GET", "evaluation/search/{search_endpoint}/", None, readers(200)),
    ("POST", "evaluation/search/{search_endpoint}/edit/", "search_edit", readers(302)),
    ("POST", "evaluation/search/{search_endpoint}/test/", "search_test", readers(200)),
    ("GET", "evaluation/search/{search_endpoint}/test/", None, readers(302)),
    # a qrels version's query texts come from the campaigns one leads: the world's lead and an
    # admin run its topics; another lead and an engineer are told they may read none (400)
    (
        "POST",
        "evaluation/search/{search_endpoint}/run/",
        "search_run",
        (LOGIN, 403, 403, 403, 302, 400, 400, 302),
    ),
    # the query sandbox: leads and engineers share an endpoint; a trial is its starter's
    # (the world's the lead's); a qrels version's topics are refused as for a run (400)
    ("GET", "evaluation/search/{search_endpoint}/sandbox/", None, readers(200)),
    (
        "POST",
        "evaluation/search/{search_endpoint}/sandbox/",
        "search_trial",
        (LOGIN, 403, 403, 403, 302, 400, 400, 302),
    ),
    (
        "GET",
        "evaluation/search/{search_endpoint}/trials/{search_trial}/",
        None,
        (LOGIN, 403, 403, 403, 200, 404, 404, 200),
    ),
    (
        "POST",
        "evaluation/search/{search_endpoint}/trials/{search_trial}/save/",
        None,
        (LOGIN, 403, 403, 403, 302, 404, 404, 302),
    ),
    ("GET", "evaluation/search/{search_endpoint}/versions/", None, readers(200)),
    # schedules: their owner (the world's lead) and admins; anyone else finds nothing (404)
    ("GET", "evaluation/schedules/", None, readers(200)),  # each sees their own
    # the campaign's topics: its lead (and an admin) schedule them; others are told no (400),
    # another team's leads and engineers that the endpoint is none of their teams' (400)
    (
        "POST",
        "evaluation/schedules/new/",
        "schedule",
        (LOGIN, 403, 403, 403, 302, 400, 400, 302),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "evaluation/schedules/new/", None, (405,) * 8),
    ("GET", "evaluation/schedules/{schedule}/", None, schedule_owner(200)),
    ("GET", "evaluation/schedules/{schedule}/edit/", None, schedule_owner(200)),
    ("POST", "evaluation/schedules/{schedule}/edit/", "schedule_edit", schedule_owner(302)),
    ("POST", "evaluation/schedules/{schedule}/pause/", "pause", schedule_owner(302)),
    ("POST", "evaluation/schedules/{schedule}/delete/", None, schedule_owner(302)),
    (
        "POST",
        "evaluation/schedules/alerts/{schedule_alert}/acknowledge/",
        None,
        schedule_owner(302),
    ),
    ("GET", "jobs/{job}/", None, owner(200)),
    ("POST", "jobs/{job}/retry/", None, owner(302)),  # back to the job's page, which says why
    # campaigns: leads manage their own; judges see the campaigns they judge
    ("GET", "campaigns/", None, everyone(200)),  # each sees the campaigns they lead or judge
    ("GET", "campaigns/new/", None, leads(200)),
    ("POST", "campaigns/new/", "campaign", leads(302)),
    ("GET", C + "/", None, campaign_lead(200)),
    ("GET", C + "/edit/", None, campaign_lead(200)),
    ("POST", C + "/edit/", "campaign", campaign_lead(302)),
    ("POST", C + "/judges/", "judges", campaign_lead(302)),
    ("POST", C + "/topics/import/", "topics", campaign_lead(302)),
    ("POST", C + "/documents/import/", "documents", campaign_lead(302)),
    ("GET", C + "/pool/", None, campaign_lead(200)),
    ("POST", C + "/pool/runs/", "pool", campaign_lead(302)),
    ("POST", C + "/pool/pairs/", "pairs", campaign_lead(302)),
    ("POST", C + "/pool/gold/", "gold_pair", campaign_lead(302)),
    ("GET", C + "/progress/", None, campaign_lead(200)),
    ("POST", C + "/reassign/", "reassign", campaign_lead(302)),
    ("GET", C + "/agreement/", None, campaign_lead(200)),
    ("GET", C + "/live/", None, campaign_lead(200)),
    ("GET", C + "/live.csv", None, campaign_lead(200)),
    ("POST", C + "/stop-rule/", "stop_rule", campaign_lead(302)),
    ("POST", C + "/resume/", None, campaign_lead(302)),
    ("GET", C + "/agreement/download/json/", None, campaign_lead(200)),
    ("GET", C + "/agreement/download/csv/?table=pairwise", None, campaign_lead(200)),
    ("GET", C + "/calibration/", None, campaign_lead(200)),
    ("POST", C + "/calibration/gold/", "gold", campaign_lead(302)),
    ("GET", C + "/judgments/", None, campaign_lead(200)),
    ("POST", C + "/judgments/", None, not_allowed()),
    ("POST", C + "/judgments/import/", "judgments", campaign_lead(302)),
    ("GET", C + "/judgments/import/", None, (405,) * 8),
    ("POST", C + "/judgments/settings/", "machine_settings", campaign_lead(302)),
    ("GET", C + "/adjudicate/", None, campaign_lead(200)),
    ("GET", C + "/adjudicate/{pair}/", None, campaign_lead(200)),
    ("GET", C + "/publish/", None, campaign_lead(200)),
    ("GET", C + "/download/judgments/", None, campaign_lead(200)),
    ("GET", C + "/download/provenance/", None, campaign_lead(200)),
    ("GET", C + "/machines/", None, campaign_lead(200)),
    ("POST", C + "/machines/new/", "machine", campaign_lead(302)),
    ("POST", C + "/machines/audit/", "audit", campaign_lead(302)),
    ("GET", C + "/machines/audit/", None, (405,) * 8),
    ("GET", C + "/machines/{machine}/", None, campaign_lead(200)),
    ("POST", C + "/machines/{machine}/run/", "machine_run", campaign_lead(302)),
    ("POST", C + "/machines/{machine}/edit/", "machine_edit", campaign_lead(302)),
    ("POST", C + "/machines/{machine}/test/", None, campaign_lead(200)),
    ("GET", C + "/machines/{machine}/test/", None, campaign_lead(302)),
    ("POST", C + "/machines/{machine}/runs/{machine_run}/cancel/", None, campaign_lead(302)),
    # machine judges you can trust: the certified leaderboard (the world's machine graded no
    # pair, so a draw is refused and the CSV says why, 409) and the gullibility gate
    ("GET", C + "/certified/", None, campaign_lead(200)),
    ("POST", C + "/certified/draw/", "certified_draw", campaign_lead(400)),
    ("GET", C + "/certified/draw/", None, (405,) * 8),
    ("POST", C + "/certified/redraw/", None, campaign_lead(400)),  # nothing drawn to redraw
    ("GET", C + "/certified.csv", None, campaign_lead(409)),
    ("GET", C + "/machines/{machine}/gate/", None, campaign_lead(200)),
    ("POST", C + "/machines/{machine}/gate/run/", "gate_run", campaign_lead(302)),
    ("POST", C + "/machines/{machine}/gate/cancel/", None, campaign_lead(302)),
    ("POST", C + "/machines/{machine}/gate/override/", "gate_override", campaign_lead(302)),
    # judging: a judge's own queue; another judge's assignment is not there
    ("GET", C + "/judge/", None, judge_page(200)),
    ("GET", J + "/", None, (LOGIN, 404, 200, 404, 404, 404, 404, 404)),
    ("POST", J + "/grade/", "grade", own_assignment(200)),
    ("POST", J + "/skip/", "skip", own_assignment(200)),
    ("POST", J + "/undo/", None, own_assignment(200)),
    ("POST", J + "/note/", "note", own_assignment(200)),
    ("GET", J + "/grade/", None, (405, 405, 405, 405, 405, 405, 405, 405)),
]


def _other_teams(path: str, statuses: tuple) -> tuple:
    """The API's derivation (tests/api/test_permissions.py), on the page's path alone."""
    return other_teams(path.split("?")[0], statuses)


MATRIX = [
    (method, path, body, statuses + (rest[0] if rest else _other_teams(path, statuses)))
    for method, path, body, statuses, *rest in ROWS
]


@pytest.fixture
def world(module_world, db):
    """One world for the module (tests/api/conftest.py, ``module_world``), rolled back to
    after each test as each role's request is rolled back within it."""
    return module_world


@pytest.mark.parametrize(
    ("method", "path", "body", "statuses"),
    [pytest.param(*row, id=f"{row[0]} /{row[1]}") for row in MATRIX],
)
def test_page_permission_matrix(
    client, world, ids, run_jobs, subtests, method, path, body, statuses
):
    """One subtest per role, each in a transaction rolled back afterwards, so every role
    meets the same world."""
    url = "/" + path.format(**ids)
    if body == "grade":
        # The judging page grades only pairs whose document has text; the world's d2-d4 have
        # none (the lead's pages show them as lacking it).
        Document.objects.filter(pk=world.assignment.pair.document_id).update(text="A passage.")
    for role, expected in zip(ALL_ROLES, statuses, strict=True):
        with subtests.test(msg=f"as {role}"), transaction.atomic():
            signed_in(client, world, role)
            data = BODIES[body](world) if body else {}
            with run_jobs():
                response = getattr(client, method.lower())(url, data)
            transaction.set_rollback(True)
            assert response.status_code == expected, (
                f"{role} {method} {url}: the matrix says {expected}, the page answered "
                f"{response.status_code}: {response.content[:300]!r}"
            )
            if role == "anonymous" and expected == LOGIN:
                assert response["Location"].startswith("/accounts/login/"), response["Location"]


def _page_routes(patterns, prefix="") -> set[str]:
    routes = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route in ("api/v1/", "admin/"):
                continue  # the API has its own matrix; Django's admin is staff-only
            routes |= _page_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            routes.add(route)
    return routes


def test_the_matrix_covers_every_page():
    """A new page must get its row: every routed path outside the API and admin is in MATRIX."""
    placeholders = dict.fromkeys(("campaign", "assignment", "pair", "qrels", "run", "job"), 1)
    placeholders.update(token=1, upload=1, qid="1", machine=1, machine_run=1, search_endpoint=1)
    placeholders.update(service_token=1, search_trial=1, schedule=1, schedule_alert=1)
    covered = {
        resolve("/" + path.format(**placeholders).split("?")[0]).route for _, path, _, _ in MATRIX
    }
    missing = sorted(set(_page_routes(get_resolver().url_patterns)) - covered)
    assert not missing, f"add rows to MATRIX in {__file__} for {missing}"


def matrix_as_markdown() -> str:
    """The README's table of pages (tests/test_readme.py checks the README carries it)."""
    header = "| method | page | " + " | ".join(ALL_ROLES) + " |"
    rule = "| --- | --- |" + " --- |" * len(ALL_ROLES)
    rows = [
        f"| {method} | `/{path.split('?')[0]}` | " + " | ".join(map(str, statuses)) + " |"
        for method, path, _, statuses in MATRIX
    ]
    return "\n".join([header, rule, *rows])
