"""Every POST of both permission matrices, retried with the same Idempotency-Key, gets the first
answer again and creates nothing (accounts/services/idempotency.py): campaigns, systems, runs, qrels,
evaluations, imports, judges, decisions, publications, grades, tokens, pools...

Each row runs as a role the matrix lets through: the API with a personal token, the pages
with a session. Every table's row count after the retry equals its count after the first
request, and the retry's status, body and Location are the first answer's."""

import pytest
from django.db import transaction
from django.test import Client

from accounts.services.idempotency import REPLAYED
from accounts.services.tokens import create_token
from tests.api import test_permissions as api_matrix
from tests.api.conftest import OTHER_RUN, upload
from tests.pages import test_permissions as page_matrix
from tests.rows import row_counts

pytestmark = pytest.mark.django_db


def page_ids(world) -> dict:
    """The pages' matrix ids (tests/pages/conftest.py): world's, a token, an upload job and a
    service token of the world's team."""
    from accounts.services.service_tokens import create_service_token
    from evaluation.views.upload import JOB_KIND
    from jobs.models import Job

    token, _ = create_token(user=world.users["engineer"], name="ci")
    upload = Job.objects.create(kind=JOB_KIND, title="Upload", created_by=world.users["engineer"])
    service, _ = create_service_token(
        team=world.campaign.team, name="ci gate", scope="read", created_by=world.users["lead"]
    )
    return {**world.ids, "token": token.pk, "upload": upload.pk, "service_token": service.pk}


def allowed_role(statuses) -> str:
    for role, status in zip(api_matrix.ROLES, statuses, strict=True):
        if role != "anonymous" and status < 400:
            return role
    raise AssertionError(f"no role may POST here: {statuses}")


# Logging out ends the session the key belongs to: the retry is anonymous, and passes through.
NOT_RETRIED = {"accounts/logout/"}


def posts(matrix):
    return [
        pytest.param(path, body, statuses, id=path)
        for method, path, body, statuses in matrix
        if method == "POST"
        and any(status < 400 for status in statuses[1:])
        and path not in NOT_RETRIED
    ]


def assert_replayed(first, second, counts_after_first: dict, url: str):
    assert second.status_code == first.status_code, (url, second.content[:300])
    assert second.content == first.content, url
    assert second.get("Location") == first.get("Location"), url
    assert second[REPLAYED] == "true", url
    counts = row_counts()
    grown = {label: (counts_after_first[label], n) for label, n in counts.items()}
    grown = {label: pair for label, pair in grown.items() if pair[0] != pair[1]}
    assert not grown, f"the retry of POST {url} changed row counts (first, retry): {grown}"


def test_every_api_post_retried_with_its_key_creates_nothing_more(
    client, world, run_jobs, subtests
):
    """One subtest per POST of the API's matrix, each rolled back afterwards."""
    tokens = {}
    for param in posts(api_matrix.MATRIX):
        path, body, statuses = param.values
        role = allowed_role(statuses)
        if role not in tokens:
            tokens[role] = create_token(user=world.users[role], name="retries")[1]
        url = "/api/v1/" + path.format(**world.ids)
        headers = {"Authorization": f"Bearer {tokens[role]}", "Idempotency-Key": path}

        def send(url=url, body=body, headers=headers):
            data, fmt = api_matrix.BODIES[body](world) if body else ({}, "json")
            if fmt == "json":
                return client.post(url, data, content_type="application/json", headers=headers)
            return client.post(url, data, headers=headers)  # multipart, a fresh upload each time

        with subtests.test(msg=f"POST {url} as {role}"), transaction.atomic():
            retried(send, url, run_jobs)
            transaction.set_rollback(True)


# Pages that take a POST on a route the matrix lists by its GET: (path, role, form).
PAGE_FORMS = [
    (
        "evaluation/runs/upload/",
        "engineer",
        lambda w: {
            "files": upload("dense.run", OTHER_RUN),
            "system": str(w.ids["system"]),
            "gain": "linear",
            "relevance_level": 1,
        },
    ),
    ("campaigns/{campaign}/adjudicate/{pair}/", "lead", lambda w: {"grade": 1, "reason": "ok"}),
    (
        "campaigns/{campaign}/publish/",
        "lead",
        lambda w: {"name": "robust-final", "leave_out": "on"},
    ),
]


def page_posts() -> list[tuple]:
    rows = [
        (path, allowed_role(statuses), page_matrix.BODIES.get(body))
        for path, body, statuses in (param.values for param in posts(page_matrix.MATRIX))
    ]
    return rows + PAGE_FORMS


def test_every_page_post_retried_with_its_key_creates_nothing_more(world, run_jobs, subtests):
    """One subtest per page POST, each rolled back afterwards."""
    ids = page_ids(world)
    clients = {}
    for path, role, form in page_posts():
        if role not in clients:
            clients[role] = Client()
            clients[role].force_login(world.users[role])
        url = "/" + path.format(**ids)
        headers = {"Idempotency-Key": path}

        def send(url=url, form=form, headers=headers, client=clients[role]):
            return client.post(url, form(world) if form else {}, headers=headers)

        with subtests.test(msg=f"POST {url} as {role}"), transaction.atomic():
            retried(send, url, run_jobs)
            transaction.set_rollback(True)


def retried(send, url: str, run_jobs) -> None:
    with run_jobs():
        first = send()
    assert first.status_code < 400, (url, first.content[:300])
    after_first = row_counts()
    with run_jobs():
        second = send()
    assert_replayed(first, second, after_first, url)


def test_a_created_campaign_retried_is_the_same_campaign(client, world):
    """The case of issue 19: the client did not see the first answer and sends it again."""
    from annotation.models import Campaign

    token = create_token(user=world.users["lead"], name="retries")[1]
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "create-robust-2"}
    before = Campaign.objects.count()
    answers = [
        client.post(
            "/api/v1/campaigns/",
            {"name": "Robust 2"},
            content_type="application/json",
            headers=headers,
        )
        for _ in range(3)
    ]
    assert [answer.status_code for answer in answers] == [201, 201, 201]
    assert len({answer["Location"] for answer in answers}) == 1
    assert Campaign.objects.count() == before + 1
    assert REPLAYED not in answers[0] and answers[2][REPLAYED] == "true"
