"""How drf-spectacular describes personal tokens and the Idempotency-Key header in the OpenAPI
schema. AutoSchema is REST_FRAMEWORK's DEFAULT_SCHEMA_CLASS: drf-spectacular imports this
module through it before it describes the first operation, which registers the extension."""

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter


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


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema (DEFAULT_SCHEMA_CLASS), declaring the Idempotency-Key
    header every POST takes (accounts/services/idempotency.py)."""

    def get_override_parameters(self):
        parameters = super().get_override_parameters()
        if self.method == "POST":
            parameters = [*parameters, IDEMPOTENCY_KEY]
        return parameters


IDEMPOTENCY_KEY = OpenApiParameter(
    name="Idempotency-Key",
    type={"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "Makes a retry safe: a request repeated with the same key (and the same method, path, "
        "query and body) within 24 hours gets the first answer again, with "
        "`Idempotent-Replayed: true`, and changes nothing; the same key with another request "
        "is a 422. Keys belong to the user; 1 to 255 visible ASCII characters (a UUID is a "
        "good key)."
    ),
)
