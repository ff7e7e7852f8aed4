"""Log in (rate limited, or through the company's provider), log out, change one's
password, personal API tokens, and one's teams with their service tokens."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login as auth_login
from django.contrib.auth import logout as auth_logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.forms import LoginForm, ServiceTokenForm, TokenForm
from accounts.models import PersonalToken, ServiceToken
from accounts.services import oidc, service_tokens
from accounts.services.login_limits import answer_refusal
from accounts.services.teams import team_roles, teams_of
from accounts.services.tokens import active_tokens, create_token, revoke_token

REVOKED_SHOWN = 20
MESSAGES = {
    "revoked": "Token “{name}” revoked: requests with its key are refused from now on.",
    "already_revoked": "Token “{name}” was already revoked.",
    "password_changed": "Your password was changed.",
    "local_login_off": "Password login is turned off here: sign in with {provider}.",
    "password_changed_tokens": (
        "Your password was changed and your {count} API token{plural} revoked: "
        "make new ones for your scripts below."
    ),
}


ID_TOKEN_KEY = "oidc_id_token"  # kept in the session for the provider's logout


class LoginView(auth_views.LoginView):
    """The password form (unless LOCAL_LOGIN is off) and the single sign-on button (when
    OIDC_ISSUER is set)."""

    authentication_form = LoginForm
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        if not settings.LOCAL_LOGIN:
            # No password here: superusers use the admin site's login (the break-glass way).
            context = self.get_context_data()
            context["refusal"] = MESSAGES["local_login_off"].format(
                provider=settings.OIDC_PROVIDER.name
            )
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        provider = settings.OIDC_PROVIDER
        context["local_login"] = settings.LOCAL_LOGIN
        context["sso_name"] = provider.name if provider else None
        next_url = context.get("next") or ""
        query = f"?{urlencode({self.redirect_field_name: next_url})}" if next_url else ""
        context["sso_url"] = reverse("accounts:oidc-login") + query
        return context

    def form_invalid(self, form):
        return answer_refusal(super().form_invalid(form), form)


def _safe_next(request, url: str) -> str:
    allowed = url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return url if url and allowed else ""


@require_GET
@never_cache
def oidc_login(request):
    """Off to the provider's sign-in page (the state, nonce and PKCE verifier wait in the
    session)."""
    next_url = _safe_next(request, request.GET.get("next", ""))
    redirect_uri = request.build_absolute_uri(reverse("accounts:oidc-callback"))
    try:
        return oidc.authorization_redirect(request, redirect_uri=redirect_uri, next_url=next_url)
    except oidc.SignInRefused as refused:
        return _refused(request, refused)


@require_GET
@never_cache
def oidc_callback(request):
    """The provider's answer: signed in with the mapped roles, or a page saying why not."""
    try:
        signed_in = oidc.complete_sign_in(request)
    except oidc.SignInRefused as refused:
        return _refused(request, refused)
    auth_login(request, signed_in.user, backend=settings.AUTHENTICATION_BACKENDS[0])
    request.session[ID_TOKEN_KEY] = signed_in.id_token
    return redirect(_safe_next(request, signed_in.next_url) or settings.LOGIN_REDIRECT_URL)


def _refused(request, refused: oidc.SignInRefused):
    context = {
        "refusal": refused,
        "groups": refused.details.get("groups", []),
        "wanted": sorted(refused.details.get("wanted", {}).items()),
        "local_login": settings.LOCAL_LOGIN,
    }
    return render(request, "accounts/sso_refused.html", context, status=refused.status)


@require_POST
def logout(request):
    """Ends the session here and, for a user who came through the provider, sends the
    browser on to end the provider's session too (RP-initiated logout) where it offers
    that. A page with a link (and a refresh) rather than a redirect: the CSP's form-action
    keeps a form's redirects on this site."""
    id_token = request.session.get(ID_TOKEN_KEY)
    auth_logout(request)
    login_url = resolve_url(settings.LOGOUT_REDIRECT_URL)
    if id_token and settings.OIDC_PROVIDER is not None:
        url = oidc.end_session_url(
            id_token=id_token, post_logout_redirect_uri=request.build_absolute_uri(login_url)
        )
        if url:
            context = {"end_session_url": url, "provider": settings.OIDC_PROVIDER.name}
            return render(request, "accounts/signed_out.html", context)
    return redirect(login_url)


class PasswordChangeView(auth_views.PasswordChangeView):
    """The user's own password, behind the old one. The page lists the API tokens that the
    change will revoke (accounts/signals.py ends them with the old password); afterwards it
    says how many were, on the tokens page where new ones are made."""

    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("home")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["active_tokens"] = list(active_tokens(self.request.user))
        return context

    def form_valid(self, form):
        count = active_tokens(self.request.user).count()
        with transaction.atomic():  # the new password and the revocations, or neither
            response = super().form_valid(form)
        if not count:
            messages.success(self.request, MESSAGES["password_changed"])
            return response
        text = MESSAGES["password_changed_tokens"].format(
            count=count, plural="" if count == 1 else "s"
        )
        messages.success(self.request, text)
        return redirect("accounts:tokens")


@require_http_methods(["GET", "POST"])
@login_required
@never_cache  # the page may show a key
def tokens(request):
    form, created, status = TokenForm(), None, 200
    if request.method == "POST":
        form, status = TokenForm(request.POST), 400
        if form.is_valid():
            try:
                token, key = create_token(user=request.user, name=form.cleaned_data["name"])
            except ValidationError as error:
                form.add_error("name", error)
            else:
                # Rendered here rather than redirected: the key would otherwise have to wait
                # in the session store, in clear, for the next request.
                form, created, status = TokenForm(), {"token": token, "key": key}, 201
    mine = PersonalToken.objects.filter(user=request.user)
    revoked = mine.filter(revoked_at__isnull=False).order_by("-revoked_at", "-pk")
    context = {
        "form": form,
        "created": created,
        "active": active_tokens(request.user),
        "revoked": revoked[:REVOKED_SHOWN],
        "revoked_count": revoked.count(),
        "api_root": request.build_absolute_uri(reverse("api:api-root")),
    }
    return render(request, "accounts/tokens.html", context, status=status)


@require_POST
@login_required
def token_revoke(request, pk):
    token = get_object_or_404(PersonalToken, pk=pk, user=request.user)
    if revoke_token(token=token):
        messages.success(request, MESSAGES["revoked"].format(name=token.name))
    else:
        messages.info(request, MESSAGES["already_revoked"].format(name=token.name))
    return redirect("accounts:tokens")


# --- teams and their service tokens ----------------------------------------------------------


@require_http_methods(["GET", "POST"])
@login_required
def teams(request):
    """The user's teams, their roles there and, for a team's leads (and admins), its service
    tokens: made here (the key shown once) and revoked."""
    user = request.user
    mine = list(teams_of(user))
    if not mine and request.method == "GET":
        return render(request, "accounts/teams.html", {"teams": []})
    created, status, forms_by_team = None, 200, {}
    if request.method == "POST":
        team = next((t for t in mine if t.slug == request.POST.get("team")), None)
        if team is None or not service_tokens.may_manage(user, team):
            raise Http404("No such team among those you lead.")
        form, status = ServiceTokenForm(request.POST), 400
        if form.is_valid():
            try:
                token, key = service_tokens.create_service_token(
                    team=team, created_by=user, **form.cleaned_data
                )
            except ValidationError as error:
                form.add_error("name", error)
            else:
                form, status = ServiceTokenForm(), 201
                created = {"token": token, "key": key}
        forms_by_team[team.pk] = form
    roles = team_roles(user)
    rows = []
    for team in mine:
        managed = service_tokens.may_manage(user, team)
        rows.append(
            {
                "team": team,
                "roles": sorted(roles.get(team.pk, ())) or (["admin"] if user.is_superuser else []),
                "manages": managed,
                "tokens": list(team.service_tokens.filter(revoked_at__isnull=True))
                if managed
                else [],
                "form": forms_by_team.get(team.pk, ServiceTokenForm()) if managed else None,
            }
        )
    context = {
        "teams": rows,
        "created": created,
        "api_root": request.build_absolute_uri(reverse("api:api-root")),
    }
    return render(request, "accounts/teams.html", context, status=status)


@require_POST
@login_required
def service_token_revoke(request, pk):
    token = get_object_or_404(ServiceToken.objects.select_related("team"), pk=pk)
    if not service_tokens.may_manage(request.user, token.team):
        raise Http404("No such token among your teams'.")
    if service_tokens.revoke_service_token(token=token, by=request.user):
        messages.success(request, MESSAGES["revoked"].format(name=token.name))
    else:
        messages.info(request, MESSAGES["already_revoked"].format(name=token.name))
    return redirect("accounts:teams")
