"""Who may see and do what in a campaign. Views and the API fetch objects through these, so
a guessed id of someone else's campaign or assignment is a 404, never a leak.

A lead's campaign has one rule (:func:`leads`) and one answer (:func:`get_campaign_for_lead`):
whatever only a campaign's lead may do is a 404 for everyone else, its judges included, on
pages, in the API and in evaluation's API (through evaluation.judging) alike. Not 403: a
403 would tell another lead that the campaign exists, and a judge would be answered apart
from everyone else for no gain; DRF answers an object outside a view's queryset with 404 too.
"""

from django.contrib.auth import get_user_model
from django.http import Http404
from django.shortcuts import get_object_or_404

from accounts.services.roles import Role, has_role
from annotation.models import Assignment, Campaign

NOT_LED = "No such campaign among those you lead."


def leads(user, campaign: Campaign) -> bool:
    """Whether ``user`` manages ``campaign``: its lead while in the lead group, or an admin
    (admins lead every campaign). campaigns_led_by is the same rule as a queryset."""
    return user.is_superuser or (campaign.lead_id == user.pk and has_role(user, Role.LEAD))


def get_campaign_for_lead(user, pk, *, campaigns=None) -> Campaign:
    """A campaign the user leads, else Http404 (see the module's docstring); ``campaigns``:
    the queryset to fetch it from (its select_related and prefetches), by default all."""
    campaign = (Campaign.objects.all() if campaigns is None else campaigns).filter(pk=pk).first()
    if campaign is None or not leads(user, campaign):
        raise Http404(NOT_LED)
    return campaign


def get_campaign_for_judge(user, pk) -> Campaign:
    """A campaign the user judges."""
    return get_object_or_404(Campaign, pk=pk, judges=user)


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
    if not has_role(user, Role.LEAD):
        return Campaign.objects.none()
    return Campaign.objects.filter(lead=user)


def campaigns_judged_by(user):
    return Campaign.objects.filter(judges=user)


def judge_users():
    """Who may be made a campaign's judge: the active users in the judge group (the pages'
    forms, the API and ``manage.py create_campaign`` alike)."""
    return get_user_model().objects.filter(is_active=True, groups__name=Role.JUDGE).distinct()
