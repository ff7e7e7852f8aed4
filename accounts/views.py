"""Log in (rate limited), change one's password, and personal API tokens."""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.forms import LoginForm, TokenForm
from accounts.models import PersonalToken
from accounts.services.login_limits import answer_refusal
from accounts.services.tokens import active_tokens, create_token, revoke_token

REVOKED_SHOWN = 20
MESSAGES = {
    "revoked": "Token “{name}” revoked: requests with its key are refused from now on.",
    "already_revoked": "Token “{name}” was already revoked.",
    "password_changed": "Your password was changed.",
    "password_changed_tokens": (
        "Your password was changed and your {count} API token{plural} revoked: "
        "make new ones for your scripts below."
    ),
}


class LoginView(auth_views.LoginView):
    authentication_form = LoginForm
    redirect_authenticated_user = True

    def form_invalid(self, form):
        return answer_refusal(super().form_invalid(form), form)


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
