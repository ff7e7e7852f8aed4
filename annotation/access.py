"""Who may see and do what in a campaign. Views and the API fetch objects through these, so
a guessed id of someone else's campaign or assignment is a 404, never a leak.

A lead's campaign has one rule (:func:`leads`) and one answer (:func:`get_campaign_for_lead`):
whatever only a campaign's lead may do is a 404 for everyone else, its judges included, on
pages, in the API and in evaluation's API (through evaluation.judging) alike. Not 403: a
403 would tell another lead that the campaign exists, and a judge would be answered apart
from everyone else for no gain; DRF answers an object outside a view's queryset with 404 too.

Campaigns belong to a team (accounts/services/teams.py): a campaign's lead manages it while
a lead of its team, and its judges (chosen among the team's judges) see it; to anyone else it
does not exist. Its machine judges, pool, judgments and publications follow it.
"""

from django.contrib.auth import get_user_model
from django.db.models import Exists, Q
from django.http import Http404
from django.shortcuts import get_object_or_404

from accounts.models import Team
from accounts.services.roles import Role
from accounts.services.teams import holds, in_teams, team_ids
from annotation.models import Assignment, Campaign
from common.compiled import Statement
from common.ids import is_id
from evaluation.models import Run

NOT_LED = "No such campaign among those you lead."


def leads(user, campaign: Campaign) -> bool:
    """Whether ``user`` manages ``campaign``: its lead while in the lead group, or an admin
    (admins lead every campaign). campaigns_led_by is the same rule as a queryset."""
    return user.is_superuser or (
        campaign.lead_id == user.pk and holds(user, campaign.team_id, Role.LEAD)
    )


def get_campaign_for_lead(user, pk, *, campaigns=None) -> Campaign:
    """A campaign the user leads, else Http404 (see the module's docstring); ``campaigns``:
    the queryset to fetch it from (its select_related and prefetches), by default all."""
    if campaigns is None and is_id(pk):
        campaign = campaign_by_pk(pk)
    else:
        campaign = (
            (Campaign.objects.all() if campaigns is None else campaigns).filter(pk=pk).first()
        )
    if campaign is None or not leads(user, campaign):
        raise Http404(NOT_LED)
    return campaign


def campaign_by_pk(pk: int) -> Campaign | None:
    """The campaign whose id is ``pk`` (common.ids.is_id), whoever may see it: the statement is
    compiled once and, on PostgreSQL, prepared (common.compiled). Every lead's page and
    endpoint under a campaign fetches it first, and the ORM compiled it again each time
    (issue 35); a grade reads it too (annotation/services/judging.py)."""
    found = _CAMPAIGN.instances(pk)
    return found[0] if found else None


_CAMPAIGN = Statement("annotation.campaign", lambda pk: Campaign.objects.filter(pk=pk), 1)


def get_campaign_for_judge(user, pk) -> Campaign:
    """A campaign the user judges."""
    return get_object_or_404(campaigns_judged_by(user), pk=pk)


def get_assignment_for_judge(user, campaign: Campaign, pk) -> Assignment:
    """One of the user's own assignments in this campaign; other judges' are invisible."""
    return get_object_or_404(
        Assignment.objects.select_related("pair__topic", "pair__document", "judgment"),
        pk=pk,
        judge=user,
        pair__campaign=campaign,
    )


def campaigns_led_by(user):
    if user.is_superuser:
        return Campaign.objects.all()
    if not user.is_authenticated:
        return Campaign.objects.none()
    return in_teams(Campaign.objects.filter(lead=user), user, Role.LEAD)


def campaigns_judged_by(user):
    """The campaigns ``user`` judges. A lead makes judges of their campaign's team only
    (:func:`judge_users`), so judging one is the team's access its lead gave."""
    if not user.is_authenticated:
        return Campaign.objects.none()
    return Campaign.objects.filter(judges=user)


def judge_users(teams=None):
    """Who may be made a campaign's judge: the active users who are judges (the pages'
    forms, the API and ``manage.py create_campaign`` alike); with ``teams`` (team pks),
    judges of those teams (members with the judge role, and the judge group's users in the
    default team)."""
    users = get_user_model().objects.filter(is_active=True)
    if teams is None:
        return users.filter(Q(memberships__role=Role.JUDGE) | Q(groups__name=Role.JUDGE)).distinct()
    teams = set(teams)
    in_team = Q(memberships__role=Role.JUDGE, memberships__team_id__in=teams)
    # The judge group's users are the default team's judges (one query, no lookup first).
    default_among = Exists(Team.objects.filter(pk__in=teams, slug=Team.DEFAULT_SLUG))
    in_team |= Q(groups__name=Role.JUDGE) & Q(default_among)
    return users.filter(in_team).distinct()


def judges_for(user, campaign: Campaign | None = None):
    """The judges a form or the API offers: a campaign's team's, or for a new campaign those
    of the teams where ``user`` is a lead (every judge for an admin)."""
    if campaign is not None:
        return judge_users([campaign.team_id])
    if user.is_superuser:
        return judge_users()
    return judge_users(team_ids(user, Role.LEAD))


def runs_for_pool(campaign: Campaign):
    """The runs a campaign may pool: its team's (a run of another team is unknown)."""
    return Run.objects.filter(system__team_id=campaign.team_id)
