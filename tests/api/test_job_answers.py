"""An endpoint whose whole work is a job says truly where the job is (issue 28: the machine
judge's run answered 202 "queued" after doing the whole run inline): 202 with the queued job
while a worker has it, 200 with the finished job when the server ran it before answering
(TASKS_BACKEND's inline default). Transactional, so the job is enqueued when the request
commits, as on a real server."""

import pytest

from tests.api.permission_bodies import BODIES

pytestmark = pytest.mark.django_db(transaction=True)

C = "campaigns/{campaign}"
# (what, path under /api/v1/, body in test_permissions.BODIES, who, the job's end)
STARTS = [
    ("topics", C + "/topics/", "topics_file", "lead", "succeeded"),
    ("documents", C + "/documents/", "documents_file", "lead", "succeeded"),
    ("pool", C + "/pairs/pool/", "pool", "lead", "succeeded"),
    # the world's machine endpoint does not exist: the run stops, its failures recorded
    ("machine run", C + "/machine-judges/{machine}/run/", "machine_run", "lead", None),
    ("run upload", "runs/", "run_file", "engineer", "succeeded"),
    # the world has one scored run: a finished job that failed, said so with a 200 too
    ("pool fairness", "leaderboard/pool-fairness/", "scoring", "engineer", "failed"),
]
IDS = [s[0] for s in STARTS]
A_QUEUE = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


def start(api, world, path, body, who):
    data, fmt = BODIES[body](world)
    return api(world.users[who]).post("/api/v1/" + path.format(**world.ids), data, format=fmt)


@pytest.mark.parametrize(("path", "body", "who", "end"), [s[1:] for s in STARTS], ids=IDS)
def test_work_done_before_the_answer_is_200_with_the_finished_job(api, world, path, body, who, end):
    response = start(api, world, path, body, who)

    assert response.status_code == 200, response.content[:300]
    job = response.json()
    assert job["finished"] and job["status"] == (end or job["status"]), (job["status"], job["step"])
    assert response["Location"].endswith(f"/api/v1/jobs/{job['id']}/")


@pytest.mark.parametrize(("path", "body", "who"), [s[1:4] for s in STARTS], ids=IDS)
def test_work_handed_to_a_worker_is_202_with_the_queued_job(api, world, settings, path, body, who):
    settings.TASKS = A_QUEUE  # a queue no worker drains here

    response = start(api, world, path, body, who)

    assert response.status_code == 202, response.content[:300]
    assert (response.json()["status"], response.json()["finished"]) == ("queued", False)
