"""A user's new password ends their API tokens, whichever way it was set: their own page,
the admin's password form (a new password, or password login disabled), ``manage.py
changepassword``, a reset (Django's ``SetPasswordForm``), or code calling ``set_password``.

Django's own hook for this, ``AbstractBaseUser.save``, notices a new password through
``_password`` (set by ``set_password`` until the save); a hash upgraded at login goes
through ``set_password`` too but clears ``_password`` before saving, so it ends nothing.
Setting the same password again (``manage.py demo`` does at every start) is no change."""

import logging

from django.conf import settings
from django.contrib.auth.hashers import check_password, is_password_usable
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from accounts.services.tokens import revoke_user_tokens

logger = logging.getLogger(__name__)

_CHANGED = "_qrelsmith_password_changed"


def password_changed(user) -> bool:
    """Whether saving ``user`` now replaces the password stored for it (a new one, or a
    usable one made unusable). Reads the stored hash; only called when one of the two may
    have happened, so an ordinary save of a user costs no query."""
    new_password = getattr(user, "_password", None)
    disabled = not user.has_usable_password()
    if user._state.adding or (new_password is None and not disabled):
        return False
    stored = type(user)._default_manager.filter(pk=user.pk).values_list("password", flat=True)
    old_hash = stored.first()  # None: the row is gone (the save will fail or insert)
    if old_hash is None:
        return False
    if new_password is not None:
        return not check_password(new_password, old_hash)
    return is_password_usable(old_hash)


@receiver(pre_save, sender=settings.AUTH_USER_MODEL)
def _note_password_change(sender, instance, raw=False, **kwargs):
    if not raw:
        setattr(instance, _CHANGED, password_changed(instance))


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def _end_tokens_after_password_change(sender, instance, raw=False, **kwargs):
    if raw or not getattr(instance, _CHANGED, False):
        return
    setattr(instance, _CHANGED, False)
    revoked = revoke_user_tokens(user=instance)
    if revoked:
        logger.info(
            "Revoked %d API token(s) of %s: the password changed.", revoked, instance.get_username()
        )
