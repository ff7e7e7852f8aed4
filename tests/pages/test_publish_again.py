"""Publishing grades equal to the newest version of the name (issue 28, item 5): the publish
page says so and asks; only an explicit confirmation makes the copy; a second click, of
either button, makes nothing more and takes the lead to the version the first one made."""

import pytest
from django.urls import reverse

from annotation.services import record_judgment
from evaluation.models import QrelsVersion
from evaluation.services import import_qrels, load_qrels_frame, qrels_to_trec_bytes
from jobs.models import JobStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


@pytest.fixture
def lead(client, world):
    client.force_login(world.users["lead"])
    return client


def publish_url(world) -> str:
    return reverse("annotation:publish", args=[world.campaign.pk])


def newest_id(world) -> int:
    """The publish form's ``seen``: the campaign's newest version when the page was read."""
    return world.campaign.publications.first().qrels_id


def form(world, **extra) -> dict:
    """What the publish page's form sends (the world published robust v1, leaving out the
    pairs nobody graded)."""
    return {"name": "robust", "leave_out": "on", "seen": newest_id(world), **extra}


def test_the_same_grades_again_are_not_published_without_asking(lead, world):
    response = lead.post(publish_url(world), form(world))

    assert response.status_code == 409
    html = response.content.decode()
    assert "are exactly those of" in html and ">robust v1</a>" in html
    assert "Publishing them makes <strong>robust v2</strong>, an identical copy." in html
    assert f'name="identical_to" value="{world.publication.qrels.pk}"' in html
    assert "Publish the identical copy v2" in html
    assert QrelsVersion.objects.filter(name="robust").count() == 1


def test_the_confirmed_copy_is_published_once_however_often_it_is_sent(lead, world):
    v1 = world.publication.qrels
    confirmed = form(world, identical_to=v1.pk)

    first = lead.post(publish_url(world), confirmed)
    second = lead.post(publish_url(world), confirmed, follow=True)

    v2 = QrelsVersion.objects.get(name="robust", version=2)
    assert first.status_code == 302 and first["Location"] == v2.get_absolute_url()
    assert v2.checksum == v1.checksum
    assert second.redirect_chain == [(v2.get_absolute_url(), 302)]
    assert "These grades were published as robust v2 after you opened the publish page" in (
        second.content.decode()
    )
    assert QrelsVersion.objects.filter(name="robust").count() == 2


def test_a_double_click_on_publish_makes_one_version(lead, world):
    # New grades since v1: the third pair gets one.
    open_pair = world.campaign.pairs.get(document__docno="d3").assignments.get()
    record_judgment(assignment_id=open_pair.pk, judge=open_pair.judge, grade=1)
    sent = form(world)  # both clicks come from the page as it was

    first = lead.post(publish_url(world), sent)
    second = lead.post(publish_url(world), sent, follow=True)

    v2 = QrelsVersion.objects.get(name="robust", version=2)
    assert first["Location"] == v2.get_absolute_url()
    assert second.redirect_chain == [(v2.get_absolute_url(), 302)]
    assert "nothing new was published" in second.content.decode()
    assert QrelsVersion.objects.filter(name="robust").count() == 2


def test_the_form_carries_the_campaigns_newest_version_as_seen(lead, world):
    html = lead.get(publish_url(world)).content.decode()
    assert f'name="seen" value="{world.publication.qrels.pk}"' in html


def test_a_copy_of_a_version_made_elsewhere_meanwhile_is_asked_about(lead, world):
    """An import of the name after the page was opened is not this page's first click."""
    sent = form(world)
    same = qrels_to_trec_bytes(load_qrels_frame(world.publication.qrels))
    imported = import_qrels(source=same, filename="same.qrels", name="robust")
    assert imported.label == "robust v2"
    response = lead.post(publish_url(world), sent)
    assert response.status_code == 409
    assert ">robust v2</a>" in response.content.decode()


def test_another_name_or_other_grades_publish_without_a_question(lead, world):
    response = lead.post(publish_url(world), form(world, name="robust-final"))
    assert response.status_code == 302
    assert QrelsVersion.objects.filter(name="robust-final").count() == 1


def test_a_large_publication_refused_as_a_copy_links_to_the_confirmation(
    lead, world, settings, django_capture_on_commit_callbacks
):
    settings.SYNC_WRITE_ROWS = 1  # four pairs: a job publishes them
    with django_capture_on_commit_callbacks(execute=True):
        response = lead.post(publish_url(world), form(world))
    job_page = lead.get(response["Location"])
    job = job_page.context["job"]
    v1 = world.publication.qrels

    assert job.status == JobStatus.FAILED
    assert job.step.startswith("These grades are exactly those of robust v1")
    assert job.result["url"] == (
        f"{publish_url(world)}?identical_to={v1.pk}&name=robust&leave_out=on"
    )
    confirm = lead.get(job.result["url"]).content.decode()
    assert f'name="identical_to" value="{v1.pk}"' in confirm
    assert 'name="leave_out" value="on"' in confirm
    with django_capture_on_commit_callbacks(execute=True):
        lead.post(publish_url(world), form(world, identical_to=v1.pk))
    assert QrelsVersion.objects.get(name="robust", version=2).checksum == v1.checksum
