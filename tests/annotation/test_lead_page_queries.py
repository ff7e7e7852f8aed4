"""What each lead page of a campaign costs in queries, named one by one: the same for a
campaign twice as large with more judges (issue 18: a page reads the topics' tallies and
one page of pairs, never every pair or judgment)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.services.roles import Role
from annotation import services
from annotation.models import Pair, PairSource, Topic
from tests.annotation.adjudication_data import GRADES, grade_all
from tests.annotation.conftest import three_judges
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


def graded():
    """tests/annotation/conftest.py's campaign with its lead in the lead's role, every pair
    graded (GRADES)."""
    campaign, lead, judges = three_judges(get_user_model())
    lead.groups.add(Group.objects.get(name=Role.LEAD))
    grade_all(campaign, judges, GRADES)
    return campaign, lead, judges


world_made = made_once(graded)


@pytest.fixture
def world(world_copy, client):
    """graded(), made once for the module (tests/worlds.py), and the lead's client."""
    campaign, lead, judges = world_copy
    client.force_login(lead)
    return campaign, lead, judges, client


def grow(campaign, judges, django_user_model):
    """More topics, pairs and judges, all graded (some disputed)."""
    for judge in [django_user_model.objects.create_user(f"more{i}") for i in range(2)]:
        services.add_judge(campaign=campaign, judge=judge)
        judges.append(judge)
    Topic.objects.create(campaign=campaign, qid="3", query="query 3")
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, f"e{i}") for q in ("1", "3") for i in range(6)],
        source=PairSource.IMPORTED,
    )
    for n, pair in enumerate(
        Pair.objects.filter(campaign=campaign, document__docno__startswith="e")
    ):
        for k, a in enumerate(pair.assignments.select_related("judge")):
            services.record_judgment(assignment_id=a.pk, judge=a.judge, grade=(n + k) % 4)


def page(name, campaign, *args, query=""):
    return reverse(f"annotation:{name}", args=[campaign.pk, *args]) + query


# 1 session, 2 user, 3 the campaign if the user leads it (access.get_campaign_for_lead), 4
# the user's roles (accounts.context_processors), then per page:
SESSION = 4
PAGES = {
    # the figures (topics' tallies summed), the queue's count (the same sums: the paginator
    # is given it), the page's pair ids (ordered, LIMIT), then the page's pairs in full
    # (services.final_grades.pair_states): pairs with topic and document, assignments with
    # judgments, outside grades, current decisions.
    "queue": SESSION + 7,
    "queue, all disputed": SESSION + 7,
    # the pair with topic and document; its state (the four queries of pair_states); the
    # queue's ids in order (its neighbours); its decisions.
    "one pair": SESSION + 7,
    # the figures (topics' tallies), the first undecided pairs' ids (LIMIT) and their state
    # (four), the publications.
    "publish": SESSION + 7,
    # members, judge tallies, medians (computed inline without a task worker), topics'
    # tallies per topic, then campaign_figures: documents, tallies summed, judges, topics;
    # the forms' choices: judges with open work (from their tallies), the campaign's judges,
    # whether any user is a judge, the add-judge choices (2).
    "progress": SESSION + 13,
    # pooled documents (distinct), campaign_figures (4), topics with pairs (tallies), the
    # topics page (count, rows with tallies and lacking text), documents without text (count,
    # rows), gold pairs, recent jobs, whether any run exists (the pooling form).
    "pool": SESSION + 13,
    # campaign_figures (4), judge tallies, members, the topics page (count, rows with
    # tallies), recent jobs, the add-judge choices (2).
    "campaign": SESSION + 11,
}


def urls(campaign):
    disputed = Pair.objects.filter(campaign=campaign, highest_grade__gt=0, lowest_grade=0).first()
    return {
        "queue": page("adjudication", campaign),
        "queue, all disputed": page("adjudication", campaign, query="?show=all"),
        "one pair": page("adjudicate-pair", campaign, disputed.pk, query="?show=all"),
        "publish": page("publish", campaign),
        "progress": page("progress", campaign),
        "pool": page("pool-detail", campaign),
        "campaign": page("campaign-detail", campaign),
    }


@pytest.mark.parametrize("bigger", [False, True], ids=["small", "bigger"])
@pytest.mark.parametrize("name", list(PAGES))
def test_each_lead_page_costs_a_fixed_number_of_queries(
    world, bigger, name, django_user_model, django_assert_num_queries
):
    campaign, _, judges, client = world
    if bigger:
        grow(campaign, judges, django_user_model)
    url = urls(campaign)[name]
    with django_assert_num_queries(PAGES[name]):
        assert client.get(url).status_code == 200
