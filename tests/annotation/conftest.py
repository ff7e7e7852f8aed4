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


def user_with(user_model, name, *roles):
    """A user holding ``roles`` (no password: hashing is slow)."""
    user = user_model.objects.create_user(name)
    for role in roles:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


@pytest.fixture
def lead(django_user_model):
    """``lea``, a user in the lead's role."""
    return user_with(django_user_model, "lea", "lead")
