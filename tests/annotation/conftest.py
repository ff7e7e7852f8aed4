import pytest
from django.contrib.auth.models import Group

from annotation import services
from annotation.models import PairSource, Topic


@pytest.fixture
def setup(django_user_model):
    """A lead, three judges and a campaign with overlap 3: two topics of three pairs each
    (grade them with tests/annotation/adjudication_data.grade_all)."""
    return three_judges(django_user_model)


def three_judges(user_model):
    """``setup``'s campaign, lead and judges (for a world made once, tests/worlds.py)."""
    lead = user_model.objects.create_user("lead")
    judges = [user_model.objects.create_user(f"j{i}") for i in range(3)]
    campaign = services.create_campaign(lead=lead, name="Web Track 2026", overlap=3, judges=judges)
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, f"d{i}") for q in ("1", "2") for i in range(3)],
        source=PairSource.IMPORTED,
    )
    return campaign, lead, judges


@pytest.fixture
def lead(django_user_model):
    """A user in the lead's role (the machine judges' tests)."""
    user = django_user_model.objects.create_user("lea")
    user.groups.add(Group.objects.get_or_create(name="lead")[0])
    return user
