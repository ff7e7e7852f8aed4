from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AccountsConfig(AppConfig):
    default = True
    name = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self):
        from accounts import checks, schema  # noqa: F401  (registers a check, a schema extension)


class AdminConfig(admin_apps.AdminConfig):
    """Django's admin with our site, whose login is rate limited like ours (INSTALLED_APPS
    names this class instead of "django.contrib.admin")."""

    default = False
    default_site = "accounts.sites.AdminSite"
