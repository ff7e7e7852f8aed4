"""Teams and their members, personal and service API tokens, and the failed logins that rate
limiting counts."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.services.roles import DEFAULT_TEAM_SLUG, Role


class TeamManager(models.Manager):
    def get_by_natural_key(self, slug):
        return self.get(slug=slug)


class Team(models.Model):
    """A group of people and what they work on: campaigns, systems (with their runs and
    evaluations), qrels versions and search endpoints belong to one team, and a user sees
    only what belongs to their teams (accounts/services/teams.py). The team whose slug is
    ``DEFAULT_SLUG`` is the default team: everything made before teams existed is in it, and
    the roles a user holds as Django groups (local accounts, ``create_user``, single sign-on
    grants that name no team) are their roles there."""

    DEFAULT_SLUG = DEFAULT_TEAM_SLUG

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    # A team is known by its slug in an instance backup (jobs/backup.py), as groups are by
    # their name: the default team, which `migrate` makes, is then the backup's default team
    # instead of a second row with its id.
    objects = TeamManager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def natural_key(self) -> tuple[str]:
        return (self.slug,)

    @property
    def is_default(self) -> bool:
        return self.slug == self.DEFAULT_SLUG


class Membership(models.Model):
    """A user's role in a team (one row per role: a user may be a team's lead and engineer).
    Single sign-on re-syncs the rows it made (``from_sso``) at each login; an admin's rows
    are left alone."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    from_sso = models.BooleanField(default=False)

    class Meta:
        ordering = ["team__name", "user__username", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "user", "role"], name="accounts_membership_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} in {self.team}"


class Key(models.Model):
    """What personal and service tokens share: only the key's SHA-256 hash is stored, and
    ``prefix`` (its first characters) tells keys apart on the pages. A revoked key keeps its
    row, so the pages can say when it was revoked and when it was last used."""

    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-pk"]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @staticmethod
    def unique_name_while_active(owner: str, name: str) -> models.UniqueConstraint:
        """One active key of a name per ``owner`` (a revoked one frees its name)."""
        return models.UniqueConstraint(
            fields=[owner, "name"], condition=models.Q(revoked_at__isnull=True), name=name
        )


class PersonalToken(Key):
    """A key a user made in the browser (or with ``manage.py create_token``) to call the API."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="personal_tokens"
    )
    name = models.CharField(max_length=100)

    class Meta(Key.Meta):
        constraints = [
            Key.unique_name_while_active("user", "accounts_token_name_unique_while_active")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class ServiceScope(models.TextChoices):
    READ = "read", "Read (GET only)"
    UPLOAD_RUNS = "upload_runs", "Read, and upload runs"


class ServiceToken(Key):
    """A team's key for a machine (a CI gate), not a person: it acts as ``user``, a service
    account made with it that is an engineer of ``team`` alone and cannot log in, so it sees
    what the team's engineers see; ``scope`` limits what it may do (READ: GET requests;
    UPLOAD_RUNS: those and uploading runs). Made by an admin or a lead of the team."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="service_tokens")
    name = models.CharField(max_length=100)
    scope = models.CharField(max_length=20, choices=ServiceScope.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="service_token"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(Key.Meta):
        constraints = [
            Key.unique_name_while_active("team", "accounts_service_token_name_unique_while_active")
        ]

    def __str__(self) -> str:
        return f"{self.name} of {self.team} ({self.prefix}…)"


class LoginFailure(models.Model):
    """One failed login (or one in progress: see accounts/services/login_limits.py). ``username`` is
    case-folded; ``ip`` is the client's address (an IPv6 client's /64 network), or empty when
    unknown."""

    username = models.CharField(max_length=150)
    ip = models.CharField(max_length=49, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["username", "at"], name="accounts_failure_user_at"),
            models.Index(fields=["ip", "at"], name="accounts_failure_ip_at"),
            models.Index(fields=["at"], name="accounts_failure_at"),
        ]

    def __str__(self) -> str:
        return f"{self.username} from {self.ip or 'unknown'} at {self.at:%Y-%m-%d %H:%M:%S}"


class IdempotencyKey(models.Model):
    """A client's ``Idempotency-Key`` for one POST and the first answer to it, kept for
    ``accounts.services.idempotency.KEEP`` (24 hours): a retry with the same key and the same request
    gets this answer again and changes nothing (accounts/services/idempotency.py). ``fingerprint`` is
    the SHA-256 of the request (method, path, query, body); ``headers`` the answer's headers
    worth replaying (Content-Type, Location...). A key belongs to one user."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=10)
    path = models.TextField()
    fingerprint = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField(null=True)
    headers = models.JSONField(default=dict)
    body = models.BinaryField(default=b"")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # The lock that makes concurrent duplicates wait and then replay: one row per key.
            models.UniqueConstraint(fields=["user", "key"], name="accounts_idempotency_key_unique")
        ]
        indexes = [models.Index(fields=["created_at"], name="accounts_idempotency_at")]

    def __str__(self) -> str:
        return f"{self.key} ({self.method} {self.path})"


class OIDCIdentity(models.Model):
    """A user's account at an OpenID Connect provider: the provider's issuer and the subject
    (``sub``) it gives the user, which the provider never reassigns. Single sign-on finds the
    user by these two alone, so a changed e-mail or name at the provider is the same user
    here, and nobody's account is taken over by a matching e-mail or username.

    ``groups`` are the groups the provider sent at the last login (what the roles were synced
    from), kept for admins to see why a user holds the roles they do."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identities"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)  # OpenID Connect Core: at most 255 ASCII chars
    groups = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_login_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "OpenID Connect identity"
        verbose_name_plural = "OpenID Connect identities"
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="accounts_oidc_identity_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
