"""Upgrading to teams (issue 32, part 2): the migrations put every campaign, system, qrels
version and search endpoint made before into the default team, and a user's roles (their
groups) are their roles there, so an instance keeps working exactly as before."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("accounts", "0004_oidc_identities"),
    ("annotation", "0022_certified_design_redraws"),
    ("evaluation", "0010_schedule_failure_alerts_edits_and_recovery"),
]
AFTER = [
    ("accounts", "0005_teams"),
    ("annotation", "0023_campaign_team"),
    ("evaluation", "0011_teams"),
]


def test_existing_data_and_roles_land_in_the_default_team():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    User, Group = old.get_model("auth", "User"), old.get_model("auth", "Group")
    lea = User.objects.create(username="lea")
    lea.groups.add(Group.objects.get_or_create(name="lead")[0])
    campaign = old.get_model("annotation", "Campaign").objects.create(name="Old", lead=lea)
    system = old.get_model("evaluation", "System").objects.create(name="bm25")
    qrels = old.get_model("evaluation", "QrelsVersion").objects.create(
        name="old",
        version=1,
        source="imported",
        checksum="0" * 64,
        topic_count=0,
        judgment_count=0,
    )
    endpoint = old.get_model("evaluation", "SearchEndpoint").objects.create(
        name="es", kind="elasticsearch", url="https://es.example.invalid/_search", template="{}"
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the newest, for the tests

    from django.contrib.auth import get_user_model

    from accounts.models import Team
    from accounts.services.teams import team_roles
    from annotation.models import Campaign
    from evaluation.models import QrelsVersion, SearchEndpoint, System

    default = Team.objects.get(slug=Team.DEFAULT_SLUG)
    assert Campaign.objects.get(pk=campaign.pk).team == default
    assert System.objects.get(pk=system.pk).team == default
    assert QrelsVersion.objects.get(pk=qrels.pk).team == default
    assert SearchEndpoint.objects.get(pk=endpoint.pk).team == default
    assert team_roles(get_user_model().objects.get(pk=lea.pk)) == {default.pk: {"lead"}}
