"""Admin pages for personal tokens (seen and revoked, never made here: the key is shown to
its owner only), failed logins (delete a user's rows to lift a rate-limit refusal), and
Django's users, whose password page says which API tokens a new password revokes and whose
page lists their single sign-on identities."""

from django.contrib import admin, messages
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AdminPasswordChangeForm

from accounts.models import LoginFailure, OIDCIdentity, PersonalToken
from accounts.services.tokens import active_tokens, revoke_token


class PasswordChangeForm(AdminPasswordChangeForm):
    @property
    def active_tokens(self) -> list[PersonalToken]:
        """What saving the form revokes (accounts/signals.py), for the page to say first."""
        return list(active_tokens(self.user))


class OIDCIdentityInline(admin.TabularInline):
    """Who the user is at the provider and the groups it sent last (their roles come from
    those at each single sign-on login). Deleting one unlinks the provider account: its next
    login opens a new user."""

    model = OIDCIdentity
    extra = 0
    fields = readonly_fields = ["issuer", "subject", "groups", "created_at", "last_login_at"]

    def has_add_permission(self, request, obj=None):
        return False


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class UserAdmin(auth_admin.UserAdmin):
    inlines = [OIDCIdentityInline]
    change_password_form = PasswordChangeForm
    change_user_password_template = "admin/accounts/user_change_password.html"


@admin.register(PersonalToken)
class PersonalTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_select_related = ["user"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "user__username", "prefix"]
    fields = readonly_fields = list_display
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["delete"])
    def revoke(self, request, queryset):
        revoked = sum(revoke_token(token=token) for token in queryset)
        self.message_user(request, f"{revoked} token(s) revoked.", messages.SUCCESS)


@admin.register(LoginFailure)
class LoginFailureAdmin(admin.ModelAdmin):
    list_display = ["username", "ip", "at"]
    search_fields = ["username", "ip"]
    fields = readonly_fields = list_display

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
