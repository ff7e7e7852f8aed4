"""The lead's machine-judge pages, the API and the command, with the job run in place
against the loopback chat-completions server: the key is never shown back."""

import html
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from annotation.models import (
    Document,
    ExternalGrade,
    MachineAnswer,
    MachineJudge,
    MachineRun,
    PairSource,
    Topic,
)
from annotation.services import machine_judges, machine_runs
from jobs.models import Job, JobStatus
from tests.annotation.conftest import user_with
from tests.llm_server import KEY, ChatServer, Reply, Status

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01


@pytest.fixture
def campaign(lead):
    campaign = services.create_campaign(lead=lead, name="Tides")
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"tides {qid}")
    for docno in ("d1", "d2"):
        Document.objects.create(campaign=campaign, docno=docno, text=f"text of {docno}")
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, d) for q in ("1", "2") for d in ("d1", "d2")],
        source=PairSource.IMPORTED,
    )
    return campaign


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


def new_machine(campaign, server, **options):
    return machine_judges.create_machine_judge(
        campaign=campaign, model_name="judge-7b", base_url=server.base_url, api_key=KEY, **options
    )


# --- pages ---------------------------------------------------------------------------------


def test_the_list_page_offers_the_default_template(lead_client, campaign):
    response = lead_client.get(reverse("annotation:machine-list", args=[campaign.pk]))
    assert response.status_code == 200
    assert "Thomas et al. 2023" in response.text
    assert "Grade: N" in response.text  # the default user message, ready to edit
    assert "Qrelsmith" in response.text


def test_the_built_in_prompt_sent_back_by_a_browser_is_the_built_in_prompt(
    lead_client, campaign, server
):
    """Browsers end a textarea's lines with CRLF; the default template comes back unchanged."""
    from annotation.llm import DEFAULT_TEMPLATE

    data = {
        "model_name": "judge-7b",
        "base_url": server.base_url,
        "template_name": DEFAULT_TEMPLATE.name,
        "template_version": DEFAULT_TEMPLATE.version,
        "system_prompt": DEFAULT_TEMPLATE.system.replace("\n", "\r\n"),
        "user_prompt": DEFAULT_TEMPLATE.user.replace("\n", "\r\n"),
        "temperature": "0",
        "max_tokens": "16",
        "concurrency": "4",
        "timeout": "60",
    }
    response = lead_client.post(reverse("annotation:machine-create", args=[campaign.pk]), data)
    assert response.status_code == 302, response.text[:500]
    assert MachineJudge.objects.get().user_prompt == DEFAULT_TEMPLATE.user


def test_a_judge_or_another_lead_cannot_see_the_pages(client, campaign, django_user_model):
    client.force_login(user_with(django_user_model, "other", "lead", "judge"))
    assert client.get(reverse("annotation:machine-list", args=[campaign.pk])).status_code == 404


def test_creating_a_judge_on_the_page_never_shows_the_key_back(lead_client, campaign, server):
    secret = "sk-page-secret-abcdef"
    data = {
        "model_name": "gpt-4o-mini",
        "base_url": server.base_url,
        "api_key": secret,
        "template_name": "terse",
        "template_version": "1",
        "system_prompt": "",
        "user_prompt": "Q {query} P {passage} S {scale}",
        "temperature": "0",
        "max_tokens": "16",
        "concurrency": "4",
        "timeout": "60",
    }
    response = lead_client.post(reverse("annotation:machine-create", args=[campaign.pk]), data)
    machine = MachineJudge.objects.get()
    assert response.status_code == 302 and response.url == machine.get_absolute_url()
    assert machine_judges.endpoint_for(machine).api_key == secret
    assert secret not in machine.api_key_sealed
    page = lead_client.get(machine.get_absolute_url())
    assert page.status_code == 200 and secret not in page.text
    assert "stored (hidden)" in page.text
    # A form sent back with an error does not echo the key either.
    refused = lead_client.post(
        reverse("annotation:machine-create", args=[campaign.pk]),
        {**data, "user_prompt": "{query} only"},
    )
    assert refused.status_code == 400 and secret not in refused.text
    assert "the model would not see the passage" in refused.text


def test_running_from_the_page_grades_the_pool_in_a_job(
    lead_client, campaign, server, django_capture_on_commit_callbacks
):
    machine = new_machine(campaign, server)
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(
            reverse("annotation:machine-run", args=[campaign.pk, machine.pk]), {"scope": "pool"}
        )
    job = Job.objects.get(kind="annotation.machine_judge")
    assert response.status_code == 302 and response.url == job.get_absolute_url()
    assert job.status == JobStatus.SUCCEEDED
    assert job.result["summary"].startswith("4 pairs graded, 0 failed, 492 tokens")
    assert job.result["url"] == machine.get_absolute_url()
    assert ExternalGrade.objects.filter(judge=machine.judge).count() == 4
    page = lead_client.get(machine.get_absolute_url() + "?show=graded")
    in_the_prompt = "".join(shown_prompt(page)).count("Grade: ")  # the preview's "Grade: N"
    assert page.text.count("Grade: ") - in_the_prompt == 4


def shown_prompt(page) -> list[str]:
    """The messages the prompt preview shows, as text."""
    return [
        html.unescape(text)
        for text in re.findall(r'<pre class="prompt-text"[^>]*>(.*?)</pre>', page.text, re.S)
    ]


def test_the_prompt_preview_shows_exactly_what_a_run_sends(
    lead_client, campaign, server, django_capture_on_commit_callbacks
):
    Topic.objects.filter(campaign=campaign, qid="2").update(
        description="Tides <b>& moons</b>", narrative="{curly} stays"
    )
    long_text = " ".join(f"word{i}" for i in range(100))
    Document.objects.filter(campaign=campaign, docno="d2").update(text=long_text)
    machine = new_machine(campaign, server, max_passage_chars=200)
    pair = campaign.pairs.get(topic__qid="2", document__docno="d2")
    page = lead_client.get(f"{machine.get_absolute_url()}?show=graded&pair={pair.pk}")
    assert page.status_code == 200
    shown = shown_prompt(page)
    assert len(shown) == 2 and "Tides <b>& moons</b>" in shown[1]
    assert "word0 word1" in shown[1] and "word99" not in shown[1]  # cut as the judge cuts it
    assert f'<option value="{pair.pk}" selected>2 · d2</option>' in page.text
    assert '<input type="hidden" name="show" value="graded">' in page.text

    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(
            reverse("annotation:machine-run", args=[campaign.pk, machine.pk]), {"scope": "pool"}
        )
    sent = [
        [message["content"] for message in request["messages"]]
        for request in server.requests
        if "tides 2" in request["messages"][-1]["content"]
        and "Passage title: (none)\nPassage:\nword0 word1" in request["messages"][-1]["content"]
    ]
    assert shown in sent


def test_the_default_prompt_preview_before_any_machine_judge(lead_client, campaign, settings):
    settings.LLM_BASE_URL = ""
    url = reverse("annotation:machine-list", args=[campaign.pk])
    first = campaign.pairs.order_by("topic__qid", "document__docno").first()
    page = lead_client.get(url)
    assert "set QRELSMITH_LLM_BASE_URL" not in page.text  # says who sets it, and how
    assert "sets <code>QRELSMITH_LLM_BASE_URL</code>" in page.text
    shown = shown_prompt(page)
    assert shown[1].startswith("A person typed the query below") and "text of d1" in shown[1]
    assert "tides 1" in shown[1]
    # Not a pair of this pool, or not an id at all: the first pair, never an error.
    other = services.create_campaign(lead=campaign.lead, name="Other")
    Topic.objects.create(campaign=other, qid="9", query="elsewhere")
    Document.objects.create(campaign=other, docno="x", text="secret text of another campaign")
    services.add_pairs(campaign=other, pairs=[("9", "x")], source=PairSource.IMPORTED)
    foreign = other.pairs.get()
    for bad in (str(foreign.pk), "x", "²", "-1", "9" * 30, ""):
        page = lead_client.get(url, {"pair": bad})
        assert page.status_code == 200, bad
        assert shown_prompt(page) == shown, bad
        assert "secret text" not in page.text
    # No pair with text yet: the page says what to do.
    Document.objects.filter(campaign=campaign).update(text="")
    page = lead_client.get(url)
    assert "No pair of the pool has its text yet" in page.text and not shown_prompt(page)
    assert first is not None


def test_the_operators_endpoint_fills_the_new_judge_form(lead_client, campaign, settings):
    settings.LLM_BASE_URL = "https://llm.example.org/v1"
    settings.LLM_MODEL = "qwen2.5-7b-instruct"
    page = lead_client.get(reverse("annotation:machine-list", args=[campaign.pk]))
    assert 'value="https://llm.example.org/v1"' in page.text
    assert 'value="qwen2.5-7b-instruct"' in page.text
    assert "QRELSMITH_LLM_BASE_URL" not in page.text


def test_a_topic_run_needs_a_topic_of_the_campaign(lead_client, campaign, server):
    machine = new_machine(campaign, server)
    url = reverse("annotation:machine-run", args=[campaign.pk, machine.pk])
    response = lead_client.post(url, {"scope": "topic", "topic": "99"})
    assert response.status_code == 400
    assert "This campaign has no topic &#x27;99&#x27;." in response.text
    assert not MachineRun.objects.exists()


def test_failures_are_listed_with_their_raw_answer(
    lead_client, campaign, server, django_capture_on_commit_callbacks
):
    server.plan("text of d2", Reply("Relevant, I think."), Reply("Relevant, I think."))
    machine = new_machine(campaign, server)
    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(
            reverse("annotation:machine-run", args=[campaign.pk, machine.pk]), {"scope": "pool"}
        )
    page = lead_client.get(machine.get_absolute_url())
    assert "Relevant, I think." in page.text
    assert "no grade found" in page.text
    assert MachineAnswer.objects.filter(outcome="failed").count() == 2


def test_cancel_from_the_page(lead_client, campaign, server):
    machine = new_machine(campaign, server)
    run = machine_runs.prepare_run(machine=machine, scope="pool")
    url = reverse("annotation:machine-cancel", args=[campaign.pk, machine.pk, run.pk])
    response = lead_client.post(url)
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.cancel_requested_at is not None
    lead_client.post(url)  # again: nothing more to do
    assert lead_client.get(url).status_code == 405


def test_editing_the_endpoint_keeps_the_key(lead_client, campaign, server):
    machine = new_machine(campaign, server)
    url = reverse("annotation:machine-edit", args=[campaign.pk, machine.pk])
    base_url = machine.base_url.replace("/v1", "/v2")  # same host: the key stays
    data = {"base_url": base_url, "concurrency": 8, "timeout": 30, "max_retries": 2}
    assert lead_client.post(url, data).status_code == 302
    machine.refresh_from_db()
    assert (machine.base_url, machine.concurrency) == (base_url, 8)
    assert machine_judges.endpoint_for(machine).api_key == KEY
    assert lead_client.post(url, {**data, "base_url": "ftp://x"}).status_code == 400
    # Another host: the stored key is dropped, and the page says where the key comes from.
    moved = {**data, "base_url": "https://lead.example.com/v1"}
    assert lead_client.post(url, moved).status_code == 302
    machine.refresh_from_db()
    assert machine.api_key_sealed == ""
    assert "none (the endpoint needs no key)" in lead_client.get(machine.get_absolute_url()).text


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("http://169.254.169.254/latest/meta-data", "does not reach"),
        ("http://2130706433:8000/v1", "does not reach"),
        ("http://[::1]:8000/v1", "does not reach"),
        ("http://user:pass@api.example.com/v1", "user name or password"),
        ("https://api.example.com/v1?", "query"),
    ],
)
def test_the_page_refuses_base_urls_the_server_may_not_use(
    lead_client, campaign, server, settings, base_url, problem
):
    machine = new_machine(campaign, server)
    settings.OUTBOUND_ALLOW = ()  # as in production: loopback not allowed
    url = reverse("annotation:machine-edit", args=[campaign.pk, machine.pk])
    data = {"base_url": base_url, "concurrency": 4, "timeout": 30, "max_retries": 2}
    response = lead_client.post(url, data)
    assert response.status_code == 400 and problem in response.text


# --- the API -------------------------------------------------------------------------------


@pytest.fixture
def api(lead):
    client = APIClient()
    client.force_authenticate(lead)
    return client


@pytest.mark.django_db(transaction=True)
def test_api_run_done_before_the_answer_is_200_with_the_finished_job(api, campaign, server):
    # Committed as a server commits (transactional test): the inline backend (no worker,
    # TASKS_BACKEND unset) runs the job when the run is stored, before the answer is made.
    machine = new_machine(campaign, server)
    url = f"/api/v1/campaigns/{campaign.pk}/machine-judges/{machine.pk}/run/"

    done = api.post(url, {"scope": "pool"}, format="json")

    assert done.status_code == 200, done.json()
    body = done.json()
    assert (body["status"], body["finished"], body["percent"]) == ("succeeded", True, 100)
    assert body["result"]["summary"].startswith("4 pairs graded")
    assert done["Location"].endswith(f"/api/v1/jobs/{body['id']}/")
    assert MachineRun.objects.get().graded == 4


@pytest.mark.django_db(transaction=True)
def test_api_run_handed_to_a_worker_is_202_with_the_queued_job(api, campaign, server, settings):
    # A queue a worker drains (here one that never runs it): the answer says "queued".
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    machine = new_machine(campaign, server)
    url = f"/api/v1/campaigns/{campaign.pk}/machine-judges/{machine.pk}/run/"

    queued = api.post(url, {"scope": "pool"}, format="json")

    assert queued.status_code == 202, queued.json()
    assert (queued.json()["status"], queued.json()["finished"]) == ("queued", False)
    assert api.get(queued["Location"]).json()["status"] == "queued"
    assert not ExternalGrade.objects.exists() and len(server.requests) == 0


def test_api_create_run_and_read_answers(api, campaign, server, django_capture_on_commit_callbacks):
    base = f"/api/v1/campaigns/{campaign.pk}/machine-judges/"
    secret = "sk-api-secret-123456"
    created = api.post(
        base,
        {"model_name": "judge-7b", "base_url": server.base_url, "api_key": secret},
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert secret not in json.dumps(body) and "api_key" not in body
    assert body["label"] == "machine:judge-7b-qrelsmith-umbrela-v1"
    assert body["key"] == "stored (hidden)"
    server.key = secret
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(f"{base}{body['id']}/run/", {"scope": "pool"}, format="json")
    assert started.status_code == 202
    job = api.get(started["Location"]).json()
    assert job["status"] == "succeeded" and job["result"]["summary"].startswith("4 pairs graded")
    answers = api.get(f"{base}{body['id']}/answers/?outcome=graded").json()
    assert answers["count"] == 4
    assert {a["raw"][:7] for a in answers["results"]} == {"Grade: "}
    runs = api.get(f"/api/v1/campaigns/{campaign.pk}/machine-runs/").json()
    assert runs["results"][0]["graded"] == 4
    listing = api.get(base).json()
    assert secret not in json.dumps(listing)


def test_api_refusals_are_400s_that_say_why(api, campaign, server):
    base = f"/api/v1/campaigns/{campaign.pk}/machine-judges/"
    bad = api.post(
        base,
        {"model_name": "m", "base_url": server.base_url, "user_prompt": "{query} {scale}"},
        format="json",
    )
    assert bad.status_code == 400
    assert "the model would not see the passage" in json.dumps(bad.json())
    machine = new_machine(campaign, server)
    topic = api.post(f"{base}{machine.pk}/run/", {"scope": "topic", "topic": "nope"}, format="json")
    assert topic.status_code == 400 and "topic" in topic.json()
    patched = api.patch(f"{base}{machine.pk}/", {"timeout": 5000}, format="json")
    assert patched.status_code == 400


def test_api_cancel(api, campaign, server):
    machine = new_machine(campaign, server)
    run = machine_runs.prepare_run(machine=machine, scope="pool")
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/machine-runs/{run.pk}/cancel/")
    assert answer.status_code == 200 and answer.json()["cancel_requested_at"]


def test_api_is_for_the_campaigns_lead_only(campaign, server, django_user_model):
    client = APIClient()
    client.force_authenticate(user_with(django_user_model, "jo", "judge"))
    new_machine(campaign, server)
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/machine-judges/").status_code == 404


# --- the command ---------------------------------------------------------------------------


def test_the_command_configures_and_runs_a_judge(campaign, server, capsys, monkeypatch):
    monkeypatch.setenv("QRELSMITH_LLM_KEY_TEST", KEY)
    call_command(
        "run_machine_judge",
        str(campaign.pk),
        "--model",
        "judge-7b",
        "--base-url",
        server.base_url,
        "--api-key-env",
        "QRELSMITH_LLM_KEY_TEST",
        "--concurrency",
        "2",
    )
    out = capsys.readouterr().out
    assert "machine:judge-7b-qrelsmith-umbrela-v1: 4 pairs to grade" in out
    assert "4 pairs graded, 0 failed" in out
    machine = MachineJudge.objects.get()
    call_command("run_machine_judge", str(campaign.pk), "--judge", str(machine.pk))
    assert "Nothing to do" in capsys.readouterr().out


def test_the_command_says_what_is_missing(campaign, server, tmp_path):
    with pytest.raises(CommandError, match="give --judge ID, or --model and --base-url"):
        call_command("run_machine_judge", str(campaign.pk))
    template = tmp_path / "t.json"
    template.write_text('{"name": "t", "version": "1", "user": "{query}"}')
    with pytest.raises(CommandError, match="would not see the passage"):
        call_command(
            "run_machine_judge",
            str(campaign.pk),
            "--model",
            "m",
            "--base-url",
            server.base_url,
            "--template",
            str(template),
        )
    with pytest.raises(CommandError, match="--scope topic needs --topic"):
        call_command(
            "run_machine_judge",
            str(campaign.pk),
            "--model",
            "m",
            "--base-url",
            server.base_url,
            "--scope",
            "topic",
        )


# --- the agreement report's machines section ------------------------------------------------


def test_the_agreement_report_shows_the_machine_against_the_humans(
    lead_client, campaign, server, django_user_model
):
    judges = [user_with(django_user_model, name, "judge") for name in ("ann", "bob")]
    for judge in judges:
        services.add_judge(campaign=campaign, judge=judge)
    services.update_campaign(campaign=campaign, overlap=2)  # both judges grade every pair
    for judge, offset in zip(judges, (0, 1), strict=True):
        for assignment in judge.assignments.select_related("pair__document"):
            grade = (int(assignment.pair.document.docno[1]) + offset) % 4
            services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=grade)
    machine = new_machine(campaign, server)
    machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
    page = lead_client.get(reverse("annotation:agreement", args=[campaign.pk]))
    assert page.status_code == 200
    text = page.text
    assert "machine:judge-7b-qrelsmith-umbrela-v1" in text
    assert "the humans&#x27; consensus" in text
    assert "Confusion against the consensus" in text
    sections = page.context["machines"]
    comparisons = sections[0].comparisons
    assert comparisons[0].against == "the humans' consensus"
    assert {c.against for c in comparisons[1:]} == {"ann", "bob"}
    assert all(
        c.n == c.lean.higher * c.n + c.lean.same * c.n + c.lean.lower * c.n for c in comparisons
    )


def test_the_agreement_report_without_machines_says_so(lead_client, campaign):
    page = lead_client.get(reverse("annotation:agreement", args=[campaign.pk]))
    assert "No machine judge has graded a pair of this campaign." in page.text


def test_the_api_gives_the_machines_against_the_humans(api, campaign, server, django_user_model):
    judge = user_with(django_user_model, "ann", "judge")
    services.add_judge(campaign=campaign, judge=judge)
    for assignment in judge.assignments.all():
        services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=1)
    machine = new_machine(campaign, server)
    machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
    answer = api.get(f"/api/v1/campaigns/{campaign.pk}/agreement/machines/?weights=linear")
    assert answer.json()["weights"] == "linear"
    body = answer.json()["machines"]
    assert [section["judge"] for section in body] == ["machine:judge-7b-qrelsmith-umbrela-v1"]
    against = [c["against"] for c in body[0]["comparisons"]]
    assert against == ["the humans' consensus", "ann"]
    consensus = body[0]["comparisons"][0]
    assert consensus["n"] == 4 and set(consensus["kappa"]) == {"unweighted", "linear", "quadratic"}
    assert sum(map(sum, consensus["confusion"])) == 4
    assert {t["topic"] for t in consensus["topics"]} == {"1", "2"}
    bad = api.get(f"/api/v1/campaigns/{campaign.pk}/agreement/machines/?weights=cubic")
    assert bad.status_code == 400


def test_the_admin_stores_an_encrypted_key_through_the_same_rules(admin_client, campaign, server):
    machine = new_machine(campaign, server)
    url = reverse("admin:annotation_machinejudge_change", args=[machine.pk])
    page = admin_client.get(url)
    assert page.status_code == 200 and KEY not in page.text
    form = {
        "base_url": machine.base_url,
        "api_key_env": "",
        "api_key": "sk-admin-typed-0123",
        "concurrency": 2,
        "timeout": 30,
        "max_retries": 1,
        "input_price": "",
        "output_price": "",
    }
    assert admin_client.post(url, form).status_code == 302
    machine.refresh_from_db()
    assert machine_judges.endpoint_for(machine).api_key == "sk-admin-typed-0123"
    assert "sk-admin-typed" not in machine.api_key_sealed
    # The admin's form obeys the service's rules: no server variable, no line breaks.
    refused = admin_client.post(url, {**form, "api_key": "", "api_key_env": "SECRET_KEY"})
    assert refused.status_code == 200 and "QRELSMITH_LLM_KEY_&lt;NAME&gt;" in refused.text
    refused = admin_client.post(url, {**form, "api_key": "sk-a\r\nX: 1"})
    assert refused.status_code == 200 and "sk-a" not in refused.text.replace("sk-admin", "")


def test_a_connection_test_shows_the_grade_and_the_answer_and_stores_nothing(
    lead_client, campaign, server
):
    machine = new_machine(campaign, server)
    url = reverse("annotation:machine-test", args=[campaign.pk, machine.pk])
    page = lead_client.post(url)
    assert page.status_code == 200
    assert "Answered in" in page.text and "with grade" in page.text
    assert "Grade: " in page.text  # the raw answer
    assert not MachineAnswer.objects.filter(machine=machine).exists()
    assert len(server.requests) == 1


def test_a_connection_test_names_the_failure_without_quoting_the_endpoint(
    lead_client, campaign, server
):
    machine = new_machine(campaign, server)
    server.default = lambda request: Status(404, message="no such model")
    page = lead_client.post(reverse("annotation:machine-test", args=[campaign.pk, machine.pk]))
    assert page.status_code == 200
    assert "refused: the endpoint refused the request (HTTP 404)" in page.text
    assert "no such model" in page.text  # in the answer as it came, shown apart


def test_a_connection_test_over_the_api(api, campaign, server):
    machine = new_machine(campaign, server)
    url = f"/api/v1/campaigns/{campaign.pk}/machine-judges/{machine.pk}/test/"
    answer = api.post(url).json()
    assert answer["ok"] is True and answer["grade"] in (0, 1, 2, 3)
    assert answer["failure"] == "" and answer["raw"].startswith("Grade: ")
    assert answer["qid"] is not None


def test_a_connection_test_of_an_address_inside_is_refused_before_any_request(
    api, campaign, server, settings
):
    machine = new_machine(campaign, server)
    settings.OUTBOUND_ALLOW = ()  # as in production
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/machine-judges/{machine.pk}/test/").json()
    assert (answer["ok"], answer["failure"]) == (False, "configuration")
    assert "does not reach" in answer["reason"]
    assert server.requests == []


def test_opening_the_test_address_again_goes_back_to_the_judge(lead_client, campaign, server):
    machine = new_machine(campaign, server)
    response = lead_client.get(reverse("annotation:machine-test", args=[campaign.pk, machine.pk]))
    assert response.status_code == 302 and response.url == machine.get_absolute_url()
    assert server.requests == []
