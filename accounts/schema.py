"""How drf-spectacular describes personal tokens in the OpenAPI schema (imported by
AccountsConfig.ready, which registers the extension)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.PersonalTokenAuthentication"
    name = "personalToken"

    def get_security_definition(self, auto_schema):
        # As HTTP bearer, Swagger UI's "Authorize" takes the bare key.
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A personal token made at /accounts/tokens/ or with `manage.py create_token`: "
                "`Authorization: Bearer <key>` (`Authorization: Token <key>` works too)."
            ),
        }
