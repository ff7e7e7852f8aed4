"""Schemathesis against the OpenAPI schema (issue 6, item 2): every operation, authenticated as
each role with a personal token, with a few generated requests each; no answer is a server
error, and every answer's body and content type match what the schema documents for its
status.

The schema is drf-spectacular's own (what /api/v1/schema/ serves); requests go through the
WSGI app, inside the test's transaction, against ``world`` (tests/api/conftest.py), made once
for the module and rolled back to after each operation and role. Path ids are world's real
objects, so the generated bodies and query parameters reach the code behind them instead of
a 404. Upload endpoints stay in the
run: Schemathesis cannot make a meaningful run or qrels file, so they mostly test refusals.

Bounded: 5 examples per operation, each sent as every role, no shrinking, derandomized (the
same requests on every run). Each request is generated once and sent four times (once per
role, each in a savepoint rolled back to the world as it was made): generating the cases
costs as much as sending them, and a role changes only the token, never the case."""

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from accounts.services.tokens import create_token

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))

ROLES = ["judge", "lead", "engineer", "admin"]
# The app as gunicorn runs it (config/wsgi.py adds only start-up work: the check of the secret
# and loading the URLconf).
application = WSGIHandler()


@pytest.fixture
def test_transaction_kept():
    """The requests run in the test's transaction, as the test client's do: the handler must
    not close the connection when a request starts or ends."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


# Which of world's objects a path's {id} names, by the collection before it: generated ids
# would nearly all be 404s, which test nothing but the router.
COLLECTIONS = {
    "assignments": "assignment",
    "campaigns": "campaign",
    "documents": "document",
    "judges": "judge",
    "pairs": "pair",
    "publications": "publication",
    "topics": "topic",
    "evaluations": "evaluation",
    "jobs": "job",
    "judgments": "judgment",
    "judgment-imports": "judgment_import",
    "machine-judges": "machine",
    "machine-runs": "machine_run",
    "machine-audits": "machine_audit",
    "machine-gates": "machine_gate",
    "search-endpoints": "search_endpoint",
    "schedules": "schedule",
    "schedule-alerts": "schedule_alert",
    "qrels": "qrels",
    "runs": "run",
    "systems": "system",
}
OTHER_PARAMETERS = {
    "campaign_pk": "campaign",
    "pair": "pair",
    "other": "qrels",
    "qid": "qid",
    "trial_pk": "search_trial",
}


def real_ids(path: str, generated: dict, world) -> dict:
    """``generated`` path parameters with world's ids put in."""
    parts = path.strip("/").split("/")
    chosen = dict(generated)
    for name in generated:
        if name == "id":
            collection = parts[parts.index("{id}") - 1]
            assert collection in COLLECTIONS, f"add {collection!r} to COLLECTIONS"
            chosen[name] = world.ids[COLLECTIONS[collection]]
        else:
            assert name in OTHER_PARAMETERS, f"add {name!r} to OTHER_PARAMETERS"
            chosen[name] = world.ids[OTHER_PARAMETERS[name]]
    return chosen


@pytest.fixture
def world(module_world, db):
    """One world for the module (tests/api/conftest.py, ``module_world``): each test's
    requests run in its own transaction, rolled back to this world when it ends, so every
    operation and role still meets the world as it was made."""
    return module_world


@pytest.fixture
def tokens(world) -> dict[str, str]:
    """A personal API token of each role's user in ``world``."""
    return {role: create_token(user=world.users[role], name="contract")[1] for role in ROLES}


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=5,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_documented_and_never_with_a_server_error(
    case, world, tokens, test_transaction_kept
):
    case.path_parameters = real_ids(case.path, case.path_parameters or {}, world)
    for role in ROLES:
        with transaction.atomic():
            try:
                case.call_and_validate(
                    app=application,
                    base_url="http://testserver",
                    headers={"Authorization": f"Bearer {tokens[role]}"},
                    checks=[
                        not_a_server_error,
                        response_schema_conformance,
                        content_type_conformance,
                    ],
                )
            except BaseException as error:
                error.add_note(f"sent as the {role} (a personal token of world.users[{role!r}])")
                raise
            finally:
                transaction.set_rollback(True)
