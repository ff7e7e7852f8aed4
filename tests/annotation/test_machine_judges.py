"""The machine judge runner against a real chat-completions server on loopback
(tests/llm_server.py): grades recorded with their raw answers, failures kept and asked again,
cancelling and resuming, the scopes, the key's sources, giving up on a dead endpoint."""

import re
import threading
import time
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from annotation import services
from annotation.llm import DEFAULT_TEMPLATE, CompletionError, PromptTemplate
from annotation.models import (
    Document,
    ExternalGrade,
    JudgeKind,
    MachineAnswer,
    MachineJudge,
    MachineOutcome,
    MachineRun,
    PairSource,
    Topic,
)
from annotation.services import machine_judges, machine_runs
from tests.llm_server import (
    KEY,
    ChatServer,
    Drop,
    Raw,
    Reply,
    Stall,
    Status,
    Truncated,
    hashed_grade,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]

DOCS = {"d1": "Tides come from the Moon.", "d2": "A recipe for soup.", "d3": "Ocean tides."}


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01


@pytest.fixture
def campaign(lead):
    """Two topics × three documents with text, and one pair whose document has none."""
    campaign = services.create_campaign(lead=lead, name="Tides")
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"how do tides work {qid}")
    for docno, text in DOCS.items():
        Document.objects.create(campaign=campaign, docno=docno, text=text)
    pairs = [(qid, docno) for qid in ("1", "2") for docno in DOCS]
    services.add_pairs(campaign=campaign, pairs=[*pairs, ("2", "d9")], source=PairSource.IMPORTED)
    return campaign


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


def machine_for(campaign, server, **options):
    options.setdefault("api_key", KEY)
    options.setdefault("timeout", 5)
    return machine_judges.create_machine_judge(
        campaign=campaign, model_name="judge-7b", base_url=server.base_url, **options
    )


def run(machine, scope="pool", topic=None):
    prepared = machine_runs.prepare_run(machine=machine, scope=scope, topic=topic)
    try:
        summary = machine_runs.run_machine_judge(run=prepared)
    finally:
        prepared.refresh_from_db()
    return prepared, summary


def grades_of(machine) -> dict[tuple[str, str], int]:
    return {
        (g.pair.topic.qid, g.pair.document.docno): g.grade
        for g in ExternalGrade.objects.filter(judge=machine.judge).select_related(
            "pair__topic", "pair__document"
        )
    }


def test_a_machine_judge_is_an_external_judge_of_kind_machine(campaign, server):
    machine = machine_for(campaign, server)
    assert machine.judge.kind == JudgeKind.MACHINE
    assert machine.judge.label == "machine:judge-7b-qrelsmith-umbrela-v1"
    assert (machine.template_name, machine.template_version) == ("qrelsmith-umbrela", "1")
    assert machine.user_prompt == DEFAULT_TEMPLATE.user


def test_every_field_of_a_machine_judge_is_configuration_or_bookkeeping():
    """A new field of MachineJudge must join CONFIG_FIELDS (and so the API, the admin, the
    backups and the services) or be named here as what it is."""
    bookkeeping = {"id", "judge", "api_key_sealed", "created_by", "created_at"}
    fields = [f.name for f in MachineJudge._meta.concrete_fields if f.name not in bookkeeping]
    assert list(MachineJudge.CONFIG_FIELDS) == fields
    assert set(MachineJudge.ENDPOINT_FIELDS) < set(MachineJudge.CONFIG_FIELDS)
    assert set(MachineJudge.FIXED_FIELDS) == set(fields) - set(MachineJudge.ENDPOINT_FIELDS)


def test_every_field_of_a_machine_answer_is_a_record_or_a_reference():
    """A new field of MachineAnswer must join RECORD_FIELDS (and so the API and the backups)
    or be named here as a reference each place handles itself."""
    references = {"id", "machine", "pair", "run", "recorded"}
    fields = [f.name for f in MachineAnswer._meta.concrete_fields if f.name not in references]
    assert list(MachineAnswer.RECORD_FIELDS) == fields


def test_asking_again_for_the_same_configuration_returns_the_same_judge(campaign, server):
    first = machine_for(campaign, server)
    again = machine_for(campaign, server, concurrency=8)
    assert again.pk == first.pk and again.concurrency == 8


def test_a_new_prompt_version_under_the_same_name_is_refused(campaign, server):
    machine_for(campaign, server, name="umbrela")
    changed = PromptTemplate("qrelsmith-umbrela", "2", "", DEFAULT_TEMPLATE.user + "\nBe strict.")
    with pytest.raises(ValidationError) as caught:
        machine_for(campaign, server, name="umbrela", template=changed)
    assert caught.value.messages == [
        "A machine judge named 'umbrela' exists with another configuration (template version, "
        "system prompt, user prompt differ). Give this one another name: a new prompt or model "
        "is a new machine judge."
    ]
    # Without a name, the new version is a new judge of its own.
    assert machine_for(campaign, server, template=changed).judge.name == (
        "judge-7b-qrelsmith-umbrela-v2"
    )


def test_a_changed_prompt_under_the_built_in_name_and_version_is_refused(campaign, server):
    changed = PromptTemplate("qrelsmith-umbrela", "1", "", DEFAULT_TEMPLATE.user + "\nBe strict.")
    with pytest.raises(ValidationError) as caught:
        machine_for(campaign, server, template=changed)
    assert caught.value.messages == [
        "qrelsmith-umbrela v1 is the built-in prompt: a changed prompt needs its own name or "
        "version."
    ]


def test_model_names_with_colons_make_valid_judge_names(campaign, server):
    machine = machine_judges.create_machine_judge(
        campaign=campaign, model_name="llama3.1:8b", base_url=server.base_url
    )
    assert machine.judge.name == "llama3.1-8b-qrelsmith-umbrela-v1"


def test_a_bad_template_or_url_is_refused(campaign, server):
    with pytest.raises(ValidationError, match=r"unknown placeholder \{pasage\}"):
        machine_for(
            campaign, server, template=PromptTemplate("t", "1", "", "{query} {pasage} {scale}")
        )
    with pytest.raises(ValidationError, match="must start with http:// or https://"):
        machine_judges.create_machine_judge(campaign=campaign, model_name="m", base_url="localhost")


def test_running_over_the_pool_grades_every_pair_with_its_raw_answer(campaign, server):
    machine = machine_for(campaign, server, input_price=0.5, output_price=2.0)
    done, summary = run(machine)
    grades = grades_of(machine)
    assert len(grades) == 6  # d9 has no text
    for request in server.requests:  # the grade the server drew for each passage
        user = request["messages"][-1]["content"]
        qid = user.split("how do tides work ")[1][0]
        docno = next(d for d, text in DOCS.items() if text in user)
        assert grades[(qid, docno)] == hashed_grade(user)
    answer = MachineAnswer.objects.filter(machine=machine, outcome=MachineOutcome.GRADED).first()
    assert answer.raw.startswith("Grade: ") and answer.recorded.grade == answer.grade
    assert (answer.prompt_tokens, answer.completion_tokens) == (120, 3)
    assert answer.cost == pytest.approx((120 * 0.5 + 3 * 2.0) / 1e6)
    assert (done.pairs, done.graded, done.failed) == (7, 6, 1)
    assert done.prompt_tokens == 6 * 120 and done.cost == pytest.approx(6 * answer.cost)
    assert summary.startswith("6 pairs graded, 1 failed, ")
    no_text = MachineAnswer.objects.get(machine=machine, pair__document__docno="d9")
    assert (no_text.failure, no_text.reason) == ("no_text", machine_judges.MESSAGES["no_text"])
    assert len(server.requests) == 6  # nothing was sent for the document without text


def test_the_machine_sees_topic_document_and_scale_never_a_human_grade(campaign, server, lead):
    machine = machine_for(campaign, server)
    run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    user = server.requests[0]["messages"][-1]["content"]
    assert "how do tides work 1" in user and "3 = Perfectly relevant" in user
    assert all(r["temperature"] == 0.0 and r["max_tokens"] == 16 for r in server.requests)


def test_failures_are_kept_with_their_raw_text_and_asked_again_next_run(campaign, server):
    server.plan("Tides come from the Moon.", Reply("Highly relevant"), Reply("Grade: 3"))
    server.plan("A recipe for soup.", Reply("Grade: 7"), Reply("Grade: 0"))
    server.plan("Ocean tides.", Status(429, retry_after="0"), Drop(), Reply("2"))
    machine = machine_for(campaign, server, concurrency=1, max_retries=2)
    first, _ = run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    assert (first.graded, first.failed) == (1, 2)
    failures = {
        a.pair.document.docno: (a.failure, a.reason, a.raw)
        for a in MachineAnswer.objects.filter(machine=machine, outcome=MachineOutcome.FAILED)
    }
    assert failures == {
        "d1": (
            "not_a_grade",
            "no grade found (expected a line 'Grade: N' or the grade alone)",
            "Highly relevant",
        ),
        "d2": ("not_a_grade", "grade 7 is not on the scale (0–3)", "Grade: 7"),
    }
    ocean = MachineAnswer.objects.get(machine=machine, pair__document__docno="d3")
    assert (ocean.grade, ocean.attempts) == (2, 3)  # after a 429 and a dropped connection
    second, _ = run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    assert (second.pairs, second.graded, second.failed) == (2, 2, 0)
    assert {k: v for k, v in grades_of(machine).items() if k[0] == "1"} == {
        ("1", "d1"): 3,
        ("1", "d2"): 0,
        ("1", "d3"): 2,
    }
    assert (
        MachineAnswer.objects.get(
            machine=machine, pair__document__docno="d1", pair__topic__qid="1"
        ).tries
        == 2
    )


def test_running_again_when_all_is_graded_asks_nothing(campaign, server):
    machine = machine_for(campaign, server)
    run(machine)
    asked = len(server.requests)
    again, _ = run(machine)
    assert len(server.requests) == asked
    assert again.graded == 0
    # The document without text is asked again (and fails again) without a request.
    assert again.failed == 1


def test_the_first_grade_of_a_pair_is_kept(campaign, server):
    machine = machine_for(campaign, server)
    run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    before = grades_of(machine)
    pair = campaign.pairs.get(topic__qid="1", document__docno="d1")
    _, created = services.external.record_machine_grade(
        judge=machine.judge, pair_id=pair.pk, grade=(before[("1", "d1")] + 1) % 4
    )
    assert not created and grades_of(machine) == before


def test_unjudged_scope_leaves_out_pairs_a_human_graded(campaign, server, lead, django_user_model):
    judge = django_user_model.objects.create_user("ann")
    judge.groups.add(Group.objects.get_or_create(name="judge")[0])
    services.add_judge(campaign=campaign, judge=judge)
    assignment = judge.assignments.get(pair__topic__qid="1", pair__document__docno="d1")
    services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=2)
    machine = machine_for(campaign, server)
    done, _ = run(machine, scope="unjudged")
    assert done.pairs == 6
    assert ("1", "d1") not in grades_of(machine)


def test_a_slow_endpoint_times_out_and_the_failure_says_so(campaign, server):
    server.plan("Tides come from the Moon.", Stall(30), Stall(30))
    machine = machine_for(campaign, server, timeout=1, max_retries=1)
    done, _ = run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    answer = MachineAnswer.objects.get(machine=machine, pair__document__docno="d1")
    assert (answer.failure, answer.reason) == ("timeout", "no answer within 1 s (after 2 attempts)")
    assert (done.graded, done.failed) == (2, 1)


def test_cancelling_stops_new_requests_and_running_again_resumes(campaign, server, monkeypatch):
    monkeypatch.setattr(machine_runs, "CANCEL_CHECK_SECONDS", 0)
    monkeypatch.setattr(machine_runs, "FLUSH_SECONDS", 0)  # each answer stored as it comes
    machine = machine_for(campaign, server, concurrency=1)
    prepared = machine_runs.prepare_run(machine=machine, scope="pool")
    store = machine_runs._store

    def store_then_cancel(machine, run, answer, cost):
        stored = store(machine, run, answer, cost)
        machine_runs.cancel_run(run=run)  # the lead presses Cancel after the first answer
        return stored

    monkeypatch.setattr(machine_runs, "_store", store_then_cancel)
    # The second pair's request had started when the first answer came: it is recorded too.
    with pytest.raises(machine_runs.Cancelled, match=r"^Cancelled after 2 of 7 pairs"):
        machine_runs.run_machine_judge(run=prepared)
    monkeypatch.setattr(machine_runs, "_store", store)
    prepared.refresh_from_db()
    assert prepared.cancelled and prepared.finished_at is not None
    assert len(server.requests) == 2 and len(grades_of(machine)) == 2
    resumed, _ = run(machine)
    assert (resumed.pairs, resumed.graded) == (5, 4)
    assert len(grades_of(machine)) == 6 and len(server.requests) == 6


def test_a_dead_endpoint_stops_the_run_early(campaign, server, monkeypatch):
    monkeypatch.setattr(machine_runs, "GIVE_UP_AFTER", 3)
    machine = machine_for(campaign, server, api_key="sk-wrong-key-1234567", concurrency=1)
    prepared = machine_runs.prepare_run(machine=machine, scope="pool")
    with pytest.raises(machine_runs.GaveUp) as caught:
        machine_runs.run_machine_judge(run=prepared)
    # The request in flight when the third failure came is recorded too, and said apart.
    assert re.fullmatch(
        r"Stopped after 3 failures in a row at the endpoint; the last: the endpoint refused "
        r"the API key \(HTTP 401\)(; 1 request\(s\) already in flight then were recorded too "
        r"\(1 failed, 0 graded\))?",
        str(caught.value),
    )
    assert "sk-wrong" not in "".join(MachineAnswer.objects.values_list("reason", flat=True))
    prepared.refresh_from_db()
    assert prepared.seconds > 0  # a failed run's time is counted, not shown as 0.0
    assert len(server.requests) == 0  # refused before the body was read as a request


class ScriptedClient:
    """A chat client whose first ``failing`` requests fail at once (a server error) and whose
    later ones answer "Grade: 2" after ``slow`` seconds, counting the requests made."""

    def __init__(self, failing: int, slow: float = 0.0):
        self.failing, self.slow = failing, slow
        self.calls = 0
        self.lock = threading.Lock()

    def complete(self, messages, **parameters):
        with self.lock:
            self.calls += 1
            number = self.calls
        if number <= self.failing:
            raise CompletionError("server_error", "the endpoint failed (HTTP 500)", status=500)
        time.sleep(self.slow)
        return SimpleNamespace(
            text="Grade: 2",
            model="m",
            prompt_tokens=1,
            completion_tokens=1,
            seconds=self.slow,
            attempts=1,
        )

    def close(self):
        pass


@pytest.fixture
def many_pairs(campaign):
    """Forty more pairs with text: more than a run gives up after."""
    for n in range(40):
        Document.objects.create(campaign=campaign, docno=f"x{n}", text=f"Tides, part {n}.")
    services.add_pairs(
        campaign=campaign, pairs=[("1", f"x{n}") for n in range(40)], source=PairSource.IMPORTED
    )
    return campaign


GAVE_UP = re.compile(
    r"Stopped after 10 failures in a row at the endpoint; the last: the endpoint failed "
    r"\(HTTP 500\)(; (\d+) request\(s\) already in flight then were recorded too "
    r"\((\d+) failed, (\d+) graded\))?"
)


def test_a_run_gives_up_after_10_failures_in_a_row_and_counts_the_requests_in_flight_apart(
    many_pairs, server
):
    # README "Machine judges": the run stops starting requests after 10 endpoint failures in
    # a row; those already started are recorded and said apart, so the figures add up.
    machine = machine_for(many_pairs, server, concurrency=4)
    prepared = machine_runs.prepare_run(machine=machine, scope="pool")
    client = ScriptedClient(failing=10_000)

    with pytest.raises(machine_runs.GaveUp) as caught:
        machine_runs.run_machine_judge(run=prepared, client=client)

    said = GAVE_UP.fullmatch(str(caught.value))
    assert said, str(caught.value)
    late_failed = int(said.group(3) or 0)
    assert int(said.group(4) or 0) == 0 and int(said.group(2) or 0) == late_failed
    prepared.refresh_from_db()
    assert prepared.failed == 10 + late_failed == client.calls  # every request recorded
    assert late_failed <= 2 * 4 - 1  # the requests started before the tenth was recorded
    assert prepared.finished_at is not None


def test_answers_that_arrive_after_giving_up_are_kept_and_said_apart(many_pairs, server):
    machine = machine_for(many_pairs, server, concurrency=4)
    prepared = machine_runs.prepare_run(machine=machine, scope="pool")
    # Ten quick failures, then slow answers: the tenth failure is recorded while later
    # requests are still out; they answer, and their grades are kept.
    client = ScriptedClient(failing=10, slow=1.0)

    with pytest.raises(machine_runs.GaveUp) as caught:
        machine_runs.run_machine_judge(run=prepared, client=client)

    said = GAVE_UP.fullmatch(str(caught.value))
    assert said and said.group(1), str(caught.value)
    late, late_failed, late_graded = (int(said.group(n)) for n in (2, 3, 4))
    prepared.refresh_from_db()
    assert (late_failed, prepared.failed) == (0, 10)
    assert late == late_graded == prepared.graded == client.calls - 10 >= 1
    assert len(grades_of(machine)) == late_graded


def test_the_key_can_come_from_the_environment(campaign, server, monkeypatch):
    machine = machine_for(campaign, server, api_key="", api_key_env="QRELSMITH_LLM_KEY_TEST")
    with pytest.raises(ValidationError, match="QRELSMITH_LLM_KEY_TEST that should hold the API"):
        machine_judges.endpoint_for(machine)
    # Whether a variable is set is never shown.
    assert machine_judges.key_source(machine) == "environment variable QRELSMITH_LLM_KEY_TEST"
    monkeypatch.setenv("QRELSMITH_LLM_KEY_TEST", KEY)
    done, _ = run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    assert done.graded == 3 and set(server.auth_seen) == {f"Bearer {KEY}"}
    assert machine_judges.key_source(machine) == "environment variable QRELSMITH_LLM_KEY_TEST"


@pytest.mark.parametrize(
    "name", ["SECRET_KEY", "DATABASE_URL", "PATH", "S3_SECRET_ACCESS_KEY", "QRELSMITH_LLM_KEY_"]
)
def test_no_other_environment_variable_can_be_read(campaign, server, name):
    with pytest.raises(ValidationError, match="QRELSMITH_LLM_KEY_<NAME>"):
        machine_for(campaign, server, api_key="", api_key_env=name)
    machine = machine_for(campaign, server)
    with pytest.raises(ValidationError, match="QRELSMITH_LLM_KEY_<NAME>"):
        machine_judges.update_machine_judge(machine=machine, api_key_env=name)


def test_a_judge_stored_before_the_rule_cannot_read_its_old_variable(campaign, server):
    machine = machine_for(campaign, server, api_key="")
    MachineJudge.objects.filter(pk=machine.pk).update(api_key_env="SECRET_KEY")
    machine.refresh_from_db()
    with pytest.raises(ValidationError, match="QRELSMITH_LLM_KEY_<NAME>"):
        machine_judges.endpoint_for(machine)
    assert "may no longer read" in machine_judges.key_source(machine)


@pytest.mark.parametrize("key", ["sk-a\r\nX-Injected: 1", "sk a", "sk-\x00", "k" * 501, "sk-é"])
def test_a_key_a_header_cannot_carry_is_refused_and_never_echoed(campaign, server, key):
    with pytest.raises(ValidationError) as caught:
        machine_for(campaign, server, api_key=key)
    assert key not in str(caught.value)


def test_the_stored_key_is_encrypted_at_rest(campaign, server):
    machine = machine_for(campaign, server)
    sealed = MachineJudge.objects.values_list("api_key_sealed", flat=True).get(pk=machine.pk)
    assert sealed.startswith("fernet:") and KEY not in sealed
    assert machine_judges.endpoint_for(machine).api_key == KEY


def test_moving_the_base_url_to_another_host_drops_the_stored_key(campaign, server):
    """An admin's stored key never follows a base URL a lead changed (unless re-typed)."""
    machine = machine_for(campaign, server)
    machine_judges.update_machine_judge(machine=machine, base_url="https://lead.example.com/v1")
    machine.refresh_from_db()
    assert machine.api_key_sealed == ""
    machine_judges.update_machine_judge(
        machine=machine, base_url="https://other.example.com/v1", api_key="sk-typed-again"
    )
    assert machine_judges.endpoint_for(machine).api_key == "sk-typed-again"
    # Same host, another path: the key stays.
    machine_judges.update_machine_judge(machine=machine, base_url="https://other.example.com/v2")
    assert machine_judges.endpoint_for(machine).api_key == "sk-typed-again"


def test_a_second_run_while_one_is_active_is_refused(campaign, server, lead):
    machine = machine_for(campaign, server)
    from jobs.models import Job

    prepared = machine_runs.prepare_run(machine=machine, scope="pool")
    prepared.job = Job.objects.create(kind="annotation.machine_judge", title="t", created_by=lead)
    prepared.save()
    with pytest.raises(ValidationError, match=r"already running \(job \d+\)"):
        machine_runs.prepare_run(machine=machine, scope="pool")


def test_updating_the_endpoint_keeps_the_key_unless_replaced_or_cleared(campaign, server):
    machine = machine_for(campaign, server)
    machine_judges.update_machine_judge(machine=machine, timeout=30, api_key="")
    assert machine_judges.endpoint_for(machine).api_key == KEY and machine.timeout == 30
    machine_judges.update_machine_judge(machine=machine, clear_api_key=True)
    machine.refresh_from_db()
    assert machine.api_key_sealed == ""
    with pytest.raises(ValueError, match="not editable: user_prompt"):
        machine_judges.update_machine_judge(machine=machine, user_prompt="x")


def test_runs_are_listed_with_their_figures(campaign, server):
    machine = machine_for(campaign, server)
    run(machine)
    assert MachineRun.objects.filter(machine=machine).count() == 1


GARBAGE = [
    (Raw("<html><body>502 Bad Gateway</body></html>", "text/html"), "bad_response", "not JSON"),
    (Raw(b"\xff\xfe\x00garbage\x80"), "bad_response", "not JSON"),
    (Raw("[1, 2, 3]"), "bad_response", "not a chat completion (not an object)"),
    (Raw('{"choices": null}'), "bad_response", "not a chat completion (no choices)"),
    (Raw('{"choices": [{"message": {"content": 2}}]}'), "bad_response", "content is not text"),
    (Raw('{"error": {"message": "model overloaded"}}'), "bad_response", "an error object"),
    (Raw("x" * (5 * 1024 * 1024)), "bad_response", "larger than 4,194,304 bytes"),
    (Reply("Grade: 2\nGrade: 3"), "not_a_grade", "different grades: 2, 3"),
    (Reply("I cannot help with that."), "not_a_grade", "no grade found"),
    (Reply(""), "not_a_grade", "the answer is empty"),
    (Reply("Grade: 99"), "not_a_grade", "grade 99 is not on the scale (0–3)"),
    (
        Status(404, message="model 'judge-7b' not found"),
        "refused",
        "refused the request (HTTP 404)",
    ),
]


@pytest.mark.parametrize(("action", "failure", "fragment"), GARBAGE)
def test_a_server_that_answers_garbage_leaves_failures_never_grades(
    campaign, server, action, failure, fragment
):
    server.plan("Tides come from the Moon.", action, action)
    machine = machine_for(campaign, server, max_retries=1)
    done, _ = run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    answer = MachineAnswer.objects.get(machine=machine, pair__document__docno="d1")
    assert (answer.outcome, answer.failure) == ("failed", failure)
    assert fragment in answer.reason
    assert answer.recorded is None and answer.grade is None
    assert ("1", "d1") not in grades_of(machine)
    assert (done.graded, done.failed) == (2, 1)  # the other pairs of the topic are graded


BROKEN = [
    (Raw(b"\xff\xfe\x00garbage\x80"), "\ufffd\ufffd\ufffdgarbage\ufffd"),  # NUL kept as U+FFFD
    (Raw("<html><body>502 Bad Gateway</body></html>", "text/html"), "502 Bad Gateway"),
    (Raw('{"choices": null}'), '{"choices": null}'),
    (Raw('{"choices": []}'), '{"choices": []}'),
    (Raw('{"error": {"message": "model overloaded"}}'), "model overloaded"),
    (Status(404, message="model 'judge-7b' not found"), "model 'judge-7b' not found"),
    (
        Status(401, message=f"Incorrect API key provided: {KEY}"),
        "Incorrect API key provided: [key]",
    ),
]


@pytest.mark.parametrize(("action", "kept"), BROKEN)
def test_a_failures_raw_answer_is_kept_as_it_came_without_the_key(campaign, server, action, kept):
    """The reason names the class of problem; the body is kept, capped and with the key
    scrubbed, as the failure's raw text for the lead to read."""
    server.plan("Tides come from the Moon.", action, action)
    machine = machine_for(campaign, server, max_retries=1)
    run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    answer = MachineAnswer.objects.get(machine=machine, pair__document__docno="d1")
    assert answer.outcome == "failed"
    assert kept in answer.raw and kept not in answer.reason
    assert KEY not in answer.raw


def test_an_answer_cut_off_mid_way_is_tried_again_not_failed(campaign, server):
    """Content-Length 400 and 40 bytes sent: a dropped connection, tried again."""
    server.plan("Tides come from the Moon.", Truncated(400, 40), Truncated(400, 40))
    machine = machine_for(campaign, server, max_retries=3)
    done, _ = run(machine, scope="topic", topic=campaign.topics.get(qid="1"))
    assert (done.graded, done.failed) == (3, 0)
    answer = MachineAnswer.objects.get(machine=machine, pair__document__docno="d1")
    assert answer.attempts == 3
