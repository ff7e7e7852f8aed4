"""The agreement report under a task worker (issue 18): a grade only queues a recomputation,
once per burst; the page shows the stored numbers, says they are being recomputed, and
shows the new ones once the task has run, equal to a computation from scratch."""

import pytest
from django.db import connection
from django.test import override_settings

from annotation import services
from annotation.models import AgreementRefresh, AgreementSnapshot, Assignment
from annotation.services import agreement as agreement_service
from annotation.tasks import refresh_agreement_task
from tests.annotation.test_agreement_views import (
    GRADES,
    expected_report,
    make_campaign,
    text_of,
    url,
)

pytestmark = pytest.mark.django_db

WORKER = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def judges(django_user_model):
    from tests.annotation.test_agreement_views import user_with

    return [user_with(django_user_model, name, "judge") for name in ("ann", "bob", "cy")]


def regrade(campaign, judge, docno, grade):
    mine = Assignment.objects.get(pair__campaign=campaign, pair__document__docno=docno, judge=judge)
    services.record_judgment(assignment_id=mine.pk, judge=judge, grade=grade)


def queued(campaign):
    from django.tasks import default_task_backend

    return [r for r in default_task_backend.results if r.kwargs == {"campaign_id": campaign.pk}]


def test_a_burst_of_grades_queues_one_recomputation_and_the_page_says_so(
    client, lead, judges, django_capture_on_commit_callbacks
):
    campaign = make_campaign(lead, judges, GRADES)
    client.force_login(lead)
    _, before, _ = expected_report(campaign, GRADES)
    with override_settings(TASKS=WORKER):
        # No snapshot yet: the first page computes and stores the numbers itself.
        page = text_of(client.get(url(campaign)).text)
        assert f"{before.fleiss.value:.4f}" in page and "being recomputed" not in page
        with django_capture_on_commit_callbacks(execute=True):
            regrade(campaign, judges[0], "d1", 0)
            regrade(campaign, judges[1], "d2", 3)
            regrade(campaign, judges[2], "d3", 1)
        assert len(queued(campaign)) == 1
        assert AgreementRefresh.objects.get(campaign=campaign).requested_at is not None

        # The page does not compute: the stored numbers, and that new ones are coming.
        page = text_of(client.get(url(campaign)).text)
        assert f"{before.fleiss.value:.4f}" in page and "being recomputed" in page
        assert client.get(url(campaign, "agreement-download", "json")).json()["recomputing"]
        assert len(queued(campaign)) == 1  # the page does not queue a second one

        client.get(url(campaign) + "?weights=linear")  # a first look at linear: computed
        refresh_agreement_task.call(campaign_id=campaign.pk)
        assert AgreementRefresh.objects.get(campaign=campaign).requested_at is None
        # The weights looked at are kept current; the others wait for a first look.
        snapshots = AgreementSnapshot.objects.filter(campaign=campaign)
        assert sorted(snapshots.values_list("weights", flat=True)) == ["linear", "quadratic"]
        assert len({s.computed_at for s in snapshots}) == 1  # by one refresh

        grades = {key: dict(by_judge) for key, by_judge in GRADES.items()}
        grades[("1", "d1")]["ann"], grades[("1", "d2")]["bob"] = 0, 3
        grades[("1", "d3")]["cy"] = 1
        _, after, _ = expected_report(campaign, grades)
        page = text_of(client.get(url(campaign)).text)
        assert f"{after.fleiss.value:.4f}" in page and "being recomputed" not in page
        assert "Computed at" in page
        # The next grade queues the next recomputation.
        with django_capture_on_commit_callbacks(execute=True):
            regrade(campaign, judges[0], "d1", 1)
        assert len(queued(campaign)) == 2


@pytest.mark.parametrize("weights", ["quadratic", "linear", "none"])
def test_the_stored_numbers_equal_a_computation_from_scratch(lead, judges, weights):
    campaign = make_campaign(lead, judges, GRADES)
    with override_settings(TASKS=WORKER):
        refresh_agreement_task.call(campaign_id=campaign.pk)
        stored = agreement_service.campaign_agreement(campaign=campaign, weights=weights)
    assert not stored.pending
    fresh = agreement_service.campaign_agreement(campaign=campaign, weights=weights, wait=True)
    _, expected, _ = expected_report(campaign, GRADES, weights)
    assert stored.report == fresh.report == expected
    assert stored.topics == fresh.topics and stored.judges == fresh.judges


def test_a_refresh_that_never_started_is_queued_again_by_the_page(client, lead, judges):
    campaign = make_campaign(lead, judges, GRADES)
    client.force_login(lead)
    with override_settings(TASKS=WORKER):
        client.get(url(campaign))  # stores the first snapshot
        regrade(campaign, judges[0], "d1", 0)  # its task is "lost": never run
        long_ago = agreement_service.REFRESH_RETRY_SECONDS + 1
        from django.utils import timezone

        AgreementRefresh.objects.filter(campaign=campaign).update(
            requested_at=timezone.now() - timezone.timedelta(seconds=long_ago)
        )
        assert agreement_service.campaign_agreement(campaign=campaign).pending
        refresh = AgreementRefresh.objects.get(campaign=campaign)
        assert (timezone.now() - refresh.requested_at).total_seconds() < 60


def test_a_refresh_that_died_after_it_started_leaves_the_numbers_pending(lead, judges):
    """The task clears the flag before it reads the judgments; if it never stores its
    numbers, the ones stored before it are not taken for current."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    campaign = make_campaign(lead, judges, GRADES)
    with override_settings(TASKS=WORKER):
        agreement_service.campaign_agreement(campaign=campaign)  # the first snapshot
        with CaptureQueriesContext(connection) as queries:
            assert not agreement_service.campaign_agreement(campaign=campaign).pending
        assert not [q for q in queries if "annotation_judgment" in q["sql"]], (
            "a page under a worker must not read the judgments to tell whether they changed"
        )
        regrade(campaign, judges[0], "d1", 0)
        assert agreement_service.campaign_agreement(campaign=campaign).pending
        AgreementRefresh.objects.filter(campaign=campaign).update(
            requested_at=None, started_at=timezone.now()
        )  # the task started ... and died
        assert agreement_service.campaign_agreement(campaign=campaign).pending
        refresh_agreement_task.call(campaign_id=campaign.pk)
        assert not agreement_service.campaign_agreement(campaign=campaign).pending


def test_a_grade_while_a_refresh_is_queued_sends_no_statement_for_it(
    lead, judges, django_assert_num_queries, django_capture_on_commit_callbacks
):
    campaign = make_campaign(lead, judges, GRADES)
    with override_settings(TASKS=WORKER):
        with django_capture_on_commit_callbacks(execute=True):
            regrade(campaign, judges[0], "d1", 0)  # queues the refresh
        mine = Assignment.objects.get(pair__document__docno="d2", judge=judges[1])
        # 1 savepoint, 2 the locked assignment, 3 its pair and topic locked with the
        # campaign, the judgment and whether a refresh is queued (it is: nothing more for
        # the agreement), 4 the pair's grades and the pair as it is, then the writes (one
        # statement on PostgreSQL, so 6 in all there): 5 update the judgment, 6 its history,
        # 7 the pair's tally (its topic's counts do not move); 8 release.
        with django_assert_num_queries(6 if connection.vendor == "postgresql" else 8):
            services.record_judgment(assignment_id=mine.pk, judge=judges[1], grade=3)
        assert len(queued(campaign)) == 1
