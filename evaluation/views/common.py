"""What the evaluation pages share: who reads them (leads and engineers; judges never learn
which system retrieved what), the scoring a page takes from its query string, and the
campaigns a "send to judging" form offers."""

from __future__ import annotations

import dataclasses

from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from accounts.services.roles import Role, has_role
from common.ids import parse_id, parse_small_int
from evaluation import dashboards, forms
from evaluation.judging import judging

MAX_K = 1000


def is_reader(user) -> bool:
    """Leads and engineers read the dashboards, runs and their files (admins hold every
    role). Judges do not: judging is blind to which system retrieved a document."""
    return has_role(user, Role.LEAD) or has_role(user, Role.ENGINEER)


def require_reader(user) -> None:
    """403 for judges and people without a role, as from the API (IsLeadOrEngineer)."""
    if not is_reader(user):
        raise PermissionDenied("Only leads and engineers see the dashboards.")


# The qrels version a user chose last on a dashboard page, kept in their session: the pages
# (and the nav's plain links) show it until they choose another (dashboards.choose_qrels).
SESSION_QRELS = "evaluation.qrels"


def read_scoring(params, request=None, *, user):
    """(form, scoring): scoring is None when the parameters are wrong (the form says why)
    or when no qrels version exists yet (``form.no_qrels``). With ``request`` (a page's GET),
    a qrels version named in ``params`` is remembered for the user, and shown when
    ``params`` name none. ``user``: whom the page answers (the qrels they read, the runs of
    their teams: dashboards.make_scoring)."""
    session = getattr(request, "session", None)
    remembered = session.get(SESSION_QRELS) if session is not None else None
    form = forms.ScoringForm(
        params, remembered=remembered if isinstance(remembered, int) else None, user=user
    )
    form.no_qrels = False
    if form.is_valid():
        chosen = form.scoring.qrels.pk
        asked = form.qrels_reason == dashboards.QrelsReason.ASKED
        if session is not None and asked and remembered != chosen:  # no write on every view
            session[SESSION_QRELS] = chosen
        return form, form.scoring
    form.no_qrels = dashboards.default_qrels(user) is None
    return form, None


def scoring_context(request, form, scoring, **keep) -> dict:
    """What the scoring panel (templates/evaluation/_scoring.html) needs; ``keep`` are the
    page's own parameters, carried as hidden fields when the options change."""
    hidden = [(k, v) for k, values in keep.items() for v in as_list(values) if v not in (None, "")]
    choices = forms.scoring_choices(scoring, request.user)
    return {
        "scoring_form": form,
        "scoring": scoring,
        "described": scoring.describe() if scoring else None,
        "keep": hidden,
        "is_engineer": has_role(request.user, Role.ENGINEER),
        **qrels_context(request, form, scoring, versions=choices["qrels_versions"], **keep),
        **choices,
    }


def qrels_context(request, form, scoring, *, versions=None, **keep) -> dict:
    """Why the page shows its qrels version when its address names none, and the newest
    later version of the same name, with this page's address on it (``newer_url``): a
    leaderboard stays on the qrels its runs are scored on, and says so. ``versions``: every
    qrels version, when the page has them already (no query then)."""
    if scoring is None:
        return {}
    reason = getattr(form, "qrels_reason", dashboards.QrelsReason.ASKED)
    if versions is None:
        newer = dashboards.newer_versions(scoring.qrels, request.user)
    else:
        shown = scoring.qrels
        newer = sorted(
            (v for v in versions if v.name == shown.name and v.version > shown.version),
            key=lambda v: -v.version,
        )
    context = {
        "qrels_reason": "" if reason == dashboards.QrelsReason.ASKED else reason.label,
        "newer_qrels": newer[0] if newer else None,
    }
    if newer:
        moved = dataclasses.replace(scoring, qrels=newer[0])
        context["newer_url"] = request.path + moved.query(**keep)
    return context


def as_list(value):
    return value if isinstance(value, list | tuple) else [value]


def int_param(raw, default=None, *, low=1, high=MAX_K):
    """``raw`` as a whole number from ``low`` to ``high`` (ASCII digits: common/ids.py), else
    ``default``."""
    value = parse_id(raw) if low >= 1 else parse_small_int(raw)
    return value if value is not None and low <= value <= high else default


def no_scoring(request, template, form, **context):
    status = 200 if form.no_qrels else 400
    context.update(scoring_context(request, form, None))
    return render(request, template, context, status=status)


def campaigns_led_by(user):
    """The campaigns ``user`` leads (a queryset; the judging side answers)."""
    return judging().campaigns_led_by(user)


def sender_context(user) -> dict:
    """The campaigns a "send to judging" form offers: the ones the user leads (engineers
    who lead none never see the form, nor any campaign)."""
    campaigns = list(campaigns_led_by(user).order_by("name")) if has_role(user, Role.LEAD) else []
    return {"led_campaigns": campaigns}


def bounds_or_none(scoring, run, measure):
    """The run's residuals on the page's measure (issue 17): None when the measure has none
    or the run and the qrels share no topic."""
    from evaluation.dashboards import diff  # the run diff's module computes and keeps them

    return diff.residuals_or_none(scoring, run, measure)
