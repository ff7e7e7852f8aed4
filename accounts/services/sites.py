"""The admin site, with the same login rate limit as our login page (accounts/apps.py makes
it the default site)."""

from django.contrib import admin

from accounts.forms import AdminLoginForm
from accounts.services.login_limits import answer_refusal


class AdminSite(admin.AdminSite):
    login_form = AdminLoginForm

    def login(self, request, extra_context=None):
        response = super().login(request, extra_context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        return answer_refusal(response, form)
