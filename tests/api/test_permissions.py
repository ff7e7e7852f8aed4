"""The API's permission matrix: every role × endpoint × method, with the status it gets.

Columns (tests/api/conftest.py, ``world``): anonymous; ``nobody`` (logged in, no role);
``judge`` (judges the campaign, owns the assignment and judgment); ``other_judge`` (judges the
same campaign, owns neither: guessing their ids); ``lead`` (leads the campaign);
``other_lead`` (leads another campaign); ``engineer`` (owns the job); ``admin`` (superuser);
and the team axis: ``other_team_lead``, ``other_team_engineer`` and ``other_team_judge`` hold
their roles in another team only (accounts/services/teams.py), so everything of the world
(all in the default team) is a 404 for them wherever their role would reach it, and an id of
it in a request's body or query is unknown (400, as an id that does not exist).

Rules: objects a user may not see are 404 (a guessed id confirms nothing); what only a
campaign's lead may do is 404 for everyone else, its judges included, as on the pages; other
objects they see but may not change are 403; a whole resource type their role may not use is
403; a method an endpoint does not offer is 405 for every logged-in user. Anonymous requests are 403 ("Authentication
credentials were not provided.": the session authenticator comes first in settings).
"""

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from tests.api.conftest import signed_in
from tests.api.permission_bodies import BODIES

pytestmark = pytest.mark.django_db

ROLES = (
    "anonymous",
    "nobody",
    "judge",
    "other_judge",
    "lead",
    "other_lead",
    "engineer",
    "admin",
)
TEAM_ROLES = ("other_team_lead", "other_team_engineer", "other_team_judge")


def everyone(ok):
    return (403, ok, ok, ok, ok, ok, ok, ok)


def campaign_members(ok):
    """Whoever judges or leads the campaign; the rest cannot see it."""
    return (403, 404, ok, ok, ok, 404, 404, ok)


def campaign_lead(ok):
    """The campaign's lead (and admins); anybody else, its judges included, finds nothing
    (annotation/access.py: one answer for a lead's campaign, the pages' too)."""
    return (403, 404, 404, 404, ok, 404, 404, ok)


def judge_reads(ok):
    """The assignment's judge and the campaign's lead; nobody else sees it."""
    return (403, 404, ok, 404, ok, 404, 404, ok)


def judge_acts(ok):
    """Only the assignment's own judge; the lead (and admins) see it but may not grade."""
    return (403, 404, ok, 404, 403, 404, 404, 403)


def leads_and_engineers(ok):
    return (403, 403, 403, 403, ok, ok, ok, ok)


def qrels_readers(ok):
    """Leads, engineers and admins; judges read only the qrels of campaigns closed for them
    (the world's are an imported file and a campaign the judges still judge)."""
    return (403, 404, 404, 404, ok, ok, ok, ok)


def leads(ok):
    return (403, 403, 403, 403, ok, ok, 403, ok)


def engineers(ok):
    return (403, 403, 403, 403, 403, 403, ok, ok)


def job_owner(ok):
    return (403, 404, 404, 404, 404, 404, ok, ok)


def schedule_owner(ok):
    """A schedule's owner (the world's lead) and admins; other leads and engineers find
    nothing (404); judges and people without a role may not use schedules (403)."""
    return (403, 403, 403, 403, ok, 404, 404, ok)


def not_allowed():
    return everyone(405)


C = "campaigns/{campaign}"

# Parameters that name the world's objects: another team's leads and engineers are told the
# qrels version (or run) is unknown, 400, before anything else is read.
UNKNOWN_TO_OTHER_TEAMS = (400, 400, 403)

# (method, path under /api/v1/, body, statuses in ROLES order[, statuses in TEAM_ROLES
# order when they are not what other_teams() derives])
ROWS = [
    # campaigns
    ("GET", "campaigns/", None, everyone(200)),
    ("POST", "campaigns/", "campaign", leads(201)),
    ("GET", C + "/", None, campaign_members(200)),
    ("PATCH", C + "/", "campaign_patch", campaign_lead(200)),
    ("PUT", C + "/", "campaign_patch", not_allowed()),
    ("DELETE", C + "/", None, not_allowed()),
    ("GET", C + "/progress/", None, campaign_lead(200)),
    ("POST", C + "/reassign/", "reassign", campaign_lead(200)),
    ("GET", C + "/agreement/", None, campaign_lead(200)),
    ("GET", C + "/live/", None, campaign_lead(200)),
    ("GET", C + "/stop-rule/", None, campaign_lead(200)),
    ("PUT", C + "/stop-rule/", "stop_rule", campaign_lead(200)),
    ("POST", C + "/resume/", None, campaign_lead(200)),
    ("GET", C + "/agreement/machines/", None, campaign_lead(200)),
    ("GET", C + "/agreement/suggestions/", None, campaign_lead(200)),
    ("POST", C + "/gold/", "gold_file", campaign_lead(200)),
    ("PUT", C + "/gold/{pair}/", "gold_grade", campaign_lead(200)),
    ("DELETE", C + "/gold/{pair}/", None, campaign_lead(200)),
    ("POST", C + "/gold/{pair}/", "gold_grade", not_allowed()),
    ("GET", C + "/calibration/", None, campaign_lead(200)),
    # a campaign's topics, documents, pool and judges
    ("GET", C + "/topics/", None, campaign_lead(200)),
    ("POST", C + "/topics/", "topics_file", campaign_lead(202)),
    ("GET", C + "/topics/{topic}/", None, campaign_lead(200)),
    ("PUT", C + "/topics/{topic}/", None, campaign_lead(405)),
    ("GET", C + "/documents/", None, campaign_lead(200)),
    ("POST", C + "/documents/", "documents_file", campaign_lead(202)),
    ("GET", C + "/documents/{document}/", None, campaign_lead(200)),
    ("GET", C + "/pairs/", None, campaign_lead(200)),
    ("POST", C + "/pairs/", "pairs", campaign_lead(200)),
    ("GET", C + "/pairs/{pair}/", None, campaign_lead(200)),
    ("POST", C + "/pairs/pool/", "pool", campaign_lead(202)),
    ("GET", C + "/judges/", None, campaign_lead(200)),
    ("POST", C + "/judges/", "add_judge", campaign_lead(201)),
    ("DELETE", C + "/judges/{other_judge}/", None, campaign_lead(200)),
    # adjudication and publishing
    ("GET", C + "/disagreements/", None, campaign_lead(200)),
    ("GET", C + "/decisions/", None, campaign_lead(200)),
    ("POST", C + "/decisions/", "decision", campaign_lead(201)),
    ("GET", C + "/publications/", None, campaign_lead(200)),
    ("POST", C + "/publications/", "publish", campaign_lead(201)),
    ("GET", C + "/publications/{publication}/", None, campaign_lead(200)),
    ("DELETE", C + "/publications/{publication}/", None, campaign_lead(405)),
    ("GET", C + "/publications/{publication}/provenance/", None, campaign_lead(200)),
    ("GET", C + "/raw-judgments/", None, campaign_lead(200)),
    # machine (LLM) judges: the lead's; runs start a job (202) that never reaches an endpoint
    ("GET", C + "/machine-judges/", None, campaign_lead(200)),
    ("POST", C + "/machine-judges/", "machine", campaign_lead(201)),
    ("GET", C + "/machine-judges/{machine}/", None, campaign_lead(200)),
    ("PATCH", C + "/machine-judges/{machine}/", "machine_patch", campaign_lead(200)),
    ("PUT", C + "/machine-judges/{machine}/", "machine_patch", campaign_lead(405)),
    ("DELETE", C + "/machine-judges/{machine}/", None, campaign_lead(405)),
    ("GET", C + "/machine-judges/{machine}/answers/", None, campaign_lead(200)),
    ("POST", C + "/machine-judges/{machine}/run/", "machine_run", campaign_lead(202)),
    ("POST", C + "/machine-judges/{machine}/test/", None, campaign_lead(200)),
    ("GET", C + "/machine-runs/", None, campaign_lead(200)),
    ("GET", C + "/machine-runs/{machine_run}/", None, campaign_lead(200)),
    ("POST", C + "/machine-runs/{machine_run}/cancel/", None, campaign_lead(200)),
    ("DELETE", C + "/machine-runs/{machine_run}/", None, campaign_lead(405)),
    # audits: pairs sent to the human judges to check the machines (the world has none to send)
    ("GET", C + "/machine-audits/", None, campaign_lead(200)),
    ("POST", C + "/machine-audits/", "audit", campaign_lead(200)),
    ("GET", C + "/machine-audits/{machine_audit}/", None, campaign_lead(200)),
    ("DELETE", C + "/machine-audits/{machine_audit}/", None, campaign_lead(405)),
    # certified leaderboard (the world's machine has graded no pair: a draw is refused, 400)
    ("GET", C + "/certified/", None, campaign_lead(200)),
    ("POST", C + "/certified/", "certified_draw", campaign_lead(400)),
    ("DELETE", C + "/certified/", None, campaign_lead(405)),
    ("POST", C + "/certified/redraw/", None, campaign_lead(400)),  # nothing drawn to redraw
    # gullibility gates (the world's blocks; starting one is a job that never reaches the endpoint)
    ("GET", C + "/machine-gates/", None, campaign_lead(200)),
    ("POST", C + "/machine-gates/", "machine_gate", campaign_lead(202)),
    ("GET", C + "/machine-gates/{machine_gate}/", None, campaign_lead(200)),
    ("POST", C + "/machine-gates/{machine_gate}/override/", "gate_override", campaign_lead(200)),
    ("POST", C + "/machine-gates/{machine_gate}/cancel/", None, campaign_lead(200)),
    ("DELETE", C + "/machine-gates/{machine_gate}/", None, campaign_lead(405)),
    # judgments made elsewhere: outside and machine judges, imports with their provenance
    ("GET", C + "/external-judges/", None, campaign_lead(200)),
    ("GET", C + "/judgment-imports/", None, campaign_lead(200)),
    ("POST", C + "/judgment-imports/", "judgments_file", campaign_lead(201)),
    ("PUT", C + "/judgment-imports/", None, campaign_lead(405)),
    ("GET", C + "/judgment-imports/{judgment_import}/", None, campaign_lead(200)),
    ("DELETE", C + "/judgment-imports/{judgment_import}/", None, campaign_lead(405)),
    # assignments and judgments
    ("GET", "assignments/", None, everyone(200)),
    ("GET", "assignments/{assignment}/", None, judge_reads(200)),
    ("GET", "assignments/{assignment}/history/", None, judge_reads(200)),
    ("POST", "assignments/{assignment}/grade/", "grade", judge_acts(200)),
    ("POST", "assignments/{assignment}/skip/", "skip", judge_acts(200)),
    ("POST", "assignments/{assignment}/undo/", None, judge_acts(200)),
    ("POST", "assignments/{assignment}/note/", "note", judge_acts(200)),
    ("DELETE", "assignments/{assignment}/", None, not_allowed()),
    ("GET", "judgments/", None, everyone(200)),
    ("GET", "judgments/{judgment}/", None, judge_reads(200)),
    ("PATCH", "judgments/{judgment}/", "grade", not_allowed()),
    # qrels
    ("GET", "qrels/", None, everyone(200)),
    ("POST", "qrels/", "qrels_file", leads_and_engineers(201)),
    ("GET", "qrels/{qrels}/", None, qrels_readers(200)),
    ("GET", "qrels/{qrels}/download/", None, qrels_readers(200)),
    ("GET", "qrels/{qrels}/download/?binary=1", None, qrels_readers(200)),
    ("GET", "qrels/{qrels}/diff/{qrels}/", None, qrels_readers(200)),
    ("DELETE", "qrels/{qrels}/", None, not_allowed()),
    # sharing a version read-only with other teams: a lead of its team
    ("PUT", "qrels/{qrels}/sharing/", "share", leads(200)),
    ("POST", "qrels/{qrels}/sharing/", "share", not_allowed()),
    # systems
    ("GET", "systems/", None, leads_and_engineers(200)),
    ("POST", "systems/", "system", engineers(201)),
    ("GET", "systems/{system}/", None, leads_and_engineers(200)),
    ("PATCH", "systems/{system}/", "system_patch", engineers(200)),
    ("PUT", "systems/{system}/", "system", not_allowed()),
    ("DELETE", "systems/{system}/", None, engineers(204)),
    # runs
    ("GET", "runs/", None, leads_and_engineers(200)),
    ("POST", "runs/", "run_file", engineers(202)),
    ("GET", "runs/{run}/", None, leads_and_engineers(200)),
    ("PATCH", "runs/{run}/", "system_patch", not_allowed()),
    ("DELETE", "runs/{run}/", None, engineers(204)),
    # evaluations
    ("GET", "evaluations/", None, leads_and_engineers(200)),
    ("POST", "evaluations/", "evaluation", engineers(201), (403, 400, 403)),
    ("GET", "evaluations/{evaluation}/", None, leads_and_engineers(200)),
    ("DELETE", "evaluations/{evaluation}/", None, not_allowed()),
    # dashboards: read like runs and evaluations (judges never learn which system ranked what)
    ("GET", "leaderboard/", "scoring", leads_and_engineers(200), UNKNOWN_TO_OTHER_TEAMS),
    (
        "GET",
        "leaderboard/topics/{qid}/",
        "scoring",
        leads_and_engineers(200),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "leaderboard/download/", "download", leads_and_engineers(200), UNKNOWN_TO_OTHER_TEAMS),
    ("POST", "leaderboard/download/", None, not_allowed()),
    ("POST", "leaderboard/check/", "check", leads_and_engineers(200), UNKNOWN_TO_OTHER_TEAMS),
    ("GET", "leaderboard/check/", None, not_allowed()),
    # not computed yet: a 404 that says how to start it, for those who may read it
    (
        "GET",
        "leaderboard/pool-fairness/",
        "scoring",
        leads_and_engineers(404),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    (
        "POST",
        "leaderboard/pool-fairness/",
        "scoring",
        leads_and_engineers(202),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "runs/{run}/topics/", "scoring", leads_and_engineers(200)),
    ("POST", "runs/{run}/topics/", None, not_allowed()),
    ("GET", "comparison/", "comparison", leads_and_engineers(200), UNKNOWN_TO_OTHER_TEAMS),
    ("POST", "comparison/", None, not_allowed()),
    # closing the loop: into a campaign the user leads (engineers lead none: 404)
    (
        "POST",
        "unjudged/",
        "unjudged",
        (403, 403, 403, 403, 200, 404, 404, 200),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "unjudged/", None, not_allowed()),
    # the run diff: read like the dashboards; its "send" like unjudged/
    ("GET", "diff/", "diff", leads_and_engineers(200), UNKNOWN_TO_OTHER_TEAMS),
    ("POST", "diff/", None, not_allowed()),
    (
        "POST",
        "diff/unjudged/",
        "diff_unjudged",
        (403, 403, 403, 403, 200, 404, 404, 200),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "diff/unjudged/", None, not_allowed()),
    # two qrels versions' rankings: read like the dashboards (the world's one version against
    # itself is a 400 once the reader is let in)
    ("GET", "rankings/", "rankings", leads_and_engineers(400), UNKNOWN_TO_OTHER_TEAMS),
    ("POST", "rankings/", None, not_allowed()),
    # search endpoints: leads and engineers configure, test and run them
    ("GET", "search-endpoints/", None, leads_and_engineers(200)),
    ("POST", "search-endpoints/", "search_endpoint", leads_and_engineers(201)),
    ("GET", "search-endpoints/{search_endpoint}/", None, leads_and_engineers(200)),
    ("PATCH", "search-endpoints/{search_endpoint}/", "search_patch", leads_and_engineers(200)),
    ("PUT", "search-endpoints/{search_endpoint}/", "search_patch", not_allowed()),
    ("DELETE", "search-endpoints/{search_endpoint}/", None, leads_and_engineers(204)),
    # the world's endpoint is at an address nothing answers: the test says so (200, ok false)
    ("POST", "search-endpoints/{search_endpoint}/test/", "search_test", leads_and_engineers(200)),
    ("GET", "search-endpoints/{search_endpoint}/test/", None, not_allowed()),
    # a job, queued (the test's transaction never commits, so no task runs)
    # a qrels version's query texts come from the campaigns one leads: the world's lead and an
    # admin run its topics; another lead and an engineer are told they may read none (400)
    (
        "POST",
        "search-endpoints/{search_endpoint}/runs/",
        "search_run",
        (403, 403, 403, 403, 202, 400, 400, 202),
    ),
    # the query sandbox: versions and trials of an endpoint (leads and engineers share the
    # endpoint; a trial is its starter's, the world's the lead's: anybody else finds nothing);
    # a trial of a qrels version's topics is refused like a run of them (400: no text to ask)
    ("GET", "search-endpoints/{search_endpoint}/versions/", None, leads_and_engineers(200)),
    ("POST", "search-endpoints/{search_endpoint}/versions/", None, not_allowed()),
    (
        "GET",
        "search-endpoints/{search_endpoint}/versions/diff/?a=1&b=1",
        None,
        leads_and_engineers(200),
    ),
    ("GET", "search-endpoints/{search_endpoint}/trials/", None, leads_and_engineers(200)),
    (
        "POST",
        "search-endpoints/{search_endpoint}/trials/",
        "search_trial",
        (403, 403, 403, 403, 202, 400, 400, 202),
    ),
    (
        "GET",
        "search-endpoints/{search_endpoint}/trials/{search_trial}/",
        None,
        (403, 403, 403, 403, 200, 404, 404, 200),
    ),
    (
        "POST",
        "search-endpoints/{search_endpoint}/trials/{search_trial}/save/",
        None,
        (403, 403, 403, 403, 200, 404, 404, 200),
    ),
    (
        "GET",
        "search-endpoints/{search_endpoint}/trials/{search_trial}/save/",
        None,
        not_allowed(),
    ),
    # schedules: their owner (the world's lead) and admins; anyone else finds nothing (404)
    ("GET", "schedules/", None, leads_and_engineers(200)),  # each sees their own
    # the campaign's topics: its lead (and an admin) schedule them; others are told no (400),
    # another team's leads and engineers that the endpoint is none of their teams' (400)
    (
        "POST",
        "schedules/",
        "schedule",
        (403, 403, 403, 403, 201, 400, 400, 201),
        UNKNOWN_TO_OTHER_TEAMS,
    ),
    ("GET", "schedules/{schedule}/", None, schedule_owner(200)),
    ("PATCH", "schedules/{schedule}/", "schedule_patch", schedule_owner(200)),
    ("PUT", "schedules/{schedule}/", "schedule_patch", not_allowed()),
    ("DELETE", "schedules/{schedule}/", None, schedule_owner(204)),
    ("GET", "schedules/{schedule}/firings/", None, schedule_owner(200)),
    ("GET", "schedules/{schedule}/changes/", None, schedule_owner(200)),
    ("GET", "schedule-alerts/", None, leads_and_engineers(200)),  # their own schedules'
    ("GET", "schedule-alerts/{schedule_alert}/", None, schedule_owner(200)),
    ("POST", "schedule-alerts/{schedule_alert}/acknowledge/", None, schedule_owner(200)),
    ("DELETE", "schedule-alerts/{schedule_alert}/", None, not_allowed()),
    # jobs
    ("GET", "jobs/", None, everyone(200)),
    ("GET", "jobs/{job}/", None, job_owner(200)),
    # the world's job is still queued: its owner is told it cannot be started again (409)
    ("POST", "jobs/{job}/retry/", None, job_owner(409)),
    ("DELETE", "jobs/{job}/", None, not_allowed()),
    # the contract itself
    ("GET", "", None, everyone(200)),
    ("GET", "schema/", None, everyone(200)),
    ("GET", "docs/", None, everyone(200)),
]


def other_teams(path: str, statuses: tuple) -> tuple:
    """What another team's lead, engineer and judge get, derived from the world's columns:
    on a path naming one of the world's objects, what a user of their role who has no part
    in it gets (``other_lead``, ``engineer``, ``other_judge``), with every answer that
    would let them in turned into 404 (403 and 405 say nothing about the object and stay);
    elsewhere (lists, making something in their own team, the contract) what the world's
    user of their role gets."""
    mine = dict(zip(ROLES, statuses, strict=True))
    if "{" not in path.replace("{qid}", ""):
        return (mine["lead"], mine["engineer"], mine["judge"])
    alike = (mine["other_lead"], mine["engineer"], mine["other_judge"])
    return tuple(status if status in (403, 405) else 404 for status in alike)


MATRIX = [
    (method, path, body, statuses + (rest[0] if rest else other_teams(path, statuses)))
    for method, path, body, statuses, *rest in ROWS
]
ALL_ROLES = ROLES + TEAM_ROLES


@pytest.fixture
def world(module_world, db):
    """One world for the module (tests/api/conftest.py, ``module_world``), rolled back to
    after each test as each role's request is rolled back within it."""
    return module_world


@pytest.mark.parametrize(
    ("method", "path", "body", "statuses"),
    [pytest.param(*row, id=f"{row[0]} {row[1]}") for row in MATRIX],
)
def test_permission_matrix(world, subtests, method, path, body, statuses):
    """One subtest per role. Each role's request runs in a transaction rolled back
    afterwards, so every role meets the same world (a deletion by one is not a 404 for the
    next)."""
    url = "/api/v1/" + path.format(**world.ids)
    for role, expected in zip(ALL_ROLES, statuses, strict=True):
        with subtests.test(msg=f"as {role}"), transaction.atomic():
            client = signed_in(APIClient(), world, role)
            data, fmt = BODIES[body](world) if body else (None, None)
            call = getattr(client, method.lower())
            response = call(url) if data is None else call(url, data, format=fmt)
            transaction.set_rollback(True)
            assert response.status_code == expected, (
                f"{role} {method} {url}: the matrix says {expected}, the API answered "
                f"{response.status_code}: {response.content[:300]!r}"
            )


def test_the_matrix_covers_every_route_of_the_api():
    """A new endpoint must get its row: every routed path appears in MATRIX."""
    from django.urls import get_resolver

    resolver = get_resolver()
    routed = set()
    for pattern in resolver.url_patterns:
        if str(pattern.pattern) == "api/v1/":
            for inner in pattern.url_patterns:
                routed.add(str(inner.pattern))
    in_matrix = {path for _, path, _, _ in MATRIX}
    normalised = {_route_of(path) for path in in_matrix}
    missing = sorted(route for route in routed if _route_of(route) not in normalised)
    assert not missing, f"add rows to MATRIX for {missing}"


def _route_of(path: str) -> str:
    """'campaigns/<int:campaign_pk>/topics/<int:pk>/' and 'campaigns/{campaign}/topics/{topic}/'
    both become 'campaigns/*/topics/*/'."""
    parts = [part for part in path.split("?")[0].strip("/").split("/") if part]
    return "/".join("*" if part.startswith(("<", "{")) else part for part in parts) + "/"


def matrix_as_markdown() -> str:
    """The README's table (the lead pastes it): one row per endpoint and method."""
    header = "| method | endpoint | " + " | ".join(ALL_ROLES) + " |"
    rule = "| --- | --- |" + " --- |" * len(ALL_ROLES)
    rows = [
        f"| {method} | `/api/v1/{path}` | " + " | ".join(map(str, statuses)) + " |"
        for method, path, _, statuses in MATRIX
    ]
    return "\n".join([header, rule, *rows])
