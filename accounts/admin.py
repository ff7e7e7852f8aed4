"""Admin pages for personal tokens (seen and revoked, never made here: the key is shown to
its owner only), failed logins (delete a user's rows to lift a rate-limit refusal), and
Django's users, whose password page says which API tokens a new password revokes and whose
page lists their single sign-on identities and their teams; teams with their members (a
user's role per team, accounts/services/teams.py)."""

from django.contrib import admin, messages
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AdminPasswordChangeForm

from accounts.models import (
    LoginFailure,
    Membership,
    OIDCIdentity,
    PersonalToken,
    ServiceToken,
    Team,
)
from accounts.services.service_tokens import revoke_service_token
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


class MembershipInline(admin.TabularInline):
    """A user's roles per team. Rows single sign-on made (from_sso) are re-synced from the
    provider's groups at each login; the roles of the user's groups are their roles in the
    default team."""

    model = Membership
    extra = 0
    fields = ["team", "user", "role", "from_sso"]
    readonly_fields = ["from_sso"]
    autocomplete_fields = ["user"]


class UserMembershipInline(MembershipInline):
    fields = ["team", "role", "from_sso"]
    autocomplete_fields = []


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class UserAdmin(auth_admin.UserAdmin):
    inlines = [OIDCIdentityInline, UserMembershipInline]
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


@admin.register(ServiceToken)
class ServiceTokenAdmin(admin.ModelAdmin):
    """Teams' service tokens, seen and revoked here; made on the Teams page, where the key
    is shown once to the admin or lead who makes it."""

    list_display = ["name", "team", "scope", "prefix", "created_by", "last_used_at", "revoked_at"]
    list_select_related = ["team", "created_by"]
    list_filter = ["team", "scope", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "team__name", "prefix"]
    fields = readonly_fields = list_display
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["delete"])
    def revoke(self, request, queryset):
        revoked = sum(revoke_service_token(token=token, by=request.user) for token in queryset)
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
