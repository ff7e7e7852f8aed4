"""tests/rows.py counts what ``objects.count()`` counts, model by model."""

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from tests.rows import row_counts

pytestmark = pytest.mark.django_db

User = get_user_model()


def test_row_counts_are_each_models_count():
    Group.objects.create(name="readers")
    User.objects.create_user("reader")
    counts = row_counts()
    assert counts == {model._meta.label: model.objects.count() for model in apps.get_models()}
    assert counts[User._meta.label] == 1 and counts["auth.Group"] >= 1
    assert User._meta.label not in row_counts(leave_out=[User])
