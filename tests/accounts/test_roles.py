import pytest
from django.contrib.auth.models import Group

from accounts.services.roles import Role, has_role, roles_of


@pytest.mark.django_db
def test_migration_creates_one_group_per_role():
    assert set(Group.objects.values_list("name", flat=True)) >= {"judge", "lead", "engineer"}


@pytest.mark.django_db
def test_roles_of_a_user_are_their_groups(django_user_model):
    user = django_user_model.objects.create_user("ann")
    user.groups.add(Group.objects.get(name=Role.JUDGE))
    assert roles_of(user) == {"judge"}
    assert has_role(user, Role.JUDGE)
    assert not has_role(user, Role.LEAD)


@pytest.mark.django_db
def test_a_superuser_holds_every_role(django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="x")
    assert roles_of(admin) == {"judge", "lead", "engineer"}


@pytest.mark.django_db
def test_login_page_renders_and_home_requires_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"
    assert client.get("/accounts/login/").status_code == 200


@pytest.mark.django_db
def test_logout_is_post_only_and_ends_the_session(client, django_user_model):
    user = django_user_model.objects.create_user("ann", password="pw-for-ann-123")
    client.force_login(user)
    assert client.get("/accounts/logout/").status_code == 405
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302
