"""The pages' tests meet the same small instance as the API's (tests/api/conftest.py)."""

import pytest

from accounts.services.service_tokens import create_service_token
from accounts.services.tokens import create_token
from evaluation.views.upload import JOB_KIND as UPLOAD_JOB
from jobs.models import Job
from tests.api.conftest import (  # noqa: F401 (fixtures)
    api,
    make_user,
    module_world,
    run_jobs,
    world,
    world_made,
)


@pytest.fixture
def ids(world) -> dict:  # noqa: F811 (the fixture imported above)
    token, _ = create_token(user=world.users["engineer"], name="ci")
    upload = Job.objects.create(kind=UPLOAD_JOB, title="Upload", created_by=world.users["engineer"])
    service, _ = create_service_token(
        team=world.campaign.team, name="ci gate", scope="read", created_by=world.users["lead"]
    )
    return {**world.ids, "token": token.pk, "upload": upload.pk, "service_token": service.pk}
