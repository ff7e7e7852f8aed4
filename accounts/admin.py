"""Admin pages for personal tokens (seen and revoked, never made here: the key is shown to
its owner only) and failed logins (delete a user's rows to lift a rate-limit refusal)."""

from django.contrib import admin, messages

from accounts.models import LoginFailure, PersonalToken
from accounts.tokens import revoke_token


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
