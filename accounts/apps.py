from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AccountsConfig(AppConfig):
    default = True
    name = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self):
        # Registers the checks and the receivers that end a user's tokens when their password
        # changes. (accounts.schema, the OpenAPI extension, is imported by drf-spectacular
        # through REST_FRAMEWORK's DEFAULT_SCHEMA_CLASS before it describes any operation: not
        # here, where it cost every process, a worker's or a command's, DRF's and
        # drf-spectacular's imports.)
        from accounts import checks, signals  # noqa: F401


class AdminConfig(admin_apps.AdminConfig):
    """Django's admin with our site, whose login is rate limited like ours (INSTALLED_APPS
    names this class instead of "django.contrib.admin")."""

    default = False
    default_site = "accounts.services.sites.AdminSite"
