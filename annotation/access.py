"""Who may see and do what in a campaign. Views and the API fetch objects through these, so
a guessed id of someone else's campaign or assignment is a 404, never a leak."""

from django.http import Http404
from django.shortcuts import get_object_or_404

from accounts.roles import Role, has_role
from annotation.models import Assignment, Campaign


def get_campaign_for_lead(user, pk) -> Campaign:
    """A campaign the user leads (admins lead every campaign)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    if not (user.is_superuser or (campaign.lead_id == user.pk and has_role(user, Role.LEAD))):
        raise Http404("No such campaign")
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
