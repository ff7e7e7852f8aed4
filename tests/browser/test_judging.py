"""A judge works through their pairs on the judging page, in Chromium, from the keyboard."""

import re

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Document,
    Judgment,
    JudgmentChange,
    PairSource,
    Topic,
)
from tests.browser.conftest import no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
PASSAGES = {
    "p1": (
        "Passport fees",
        "Adult passport renewal by mail costs $130 for the book. A passport card is $30 more."
        "\n\nExpedited service adds $60.",
    ),
    "p2": ("Renewing your passport", "You can renew by mail if your passport is undamaged."),
    "p3": ("", "The first passports were issued under Henry V of England."),
    "p4": ("Fee chart", "Renewal: $130. First-time application: $130 plus a $35 execution fee."),
    "p5": ("Travel tips", "Pack light and keep a copy of your passport in your luggage."),
    "p6": ("Visa waiver", "Citizens of 41 countries may visit for 90 days without a visa."),
    "t1": ("Tides explained", "Tides are caused by the gravitational pull of the Moon."),
    "t2": ("Ocean currents", "Currents are driven by wind, water density and tides."),
}


# A real documentation address is long and has nowhere to break (it once pushed the judge page
# on a phone 230 px sideways).
LONG_PATH = "faq/programming.html#why-are-default-values-shared-between-objects-and-how"


@pytest.fixture
def campaign(django_user_model):
    """One judge with a six-pair topic followed by a two-pair topic."""
    lead = django_user_model.objects.create_user("lead", password=PASSWORD)
    judge = django_user_model.objects.create_user("judy", password=PASSWORD)
    campaign = services.create_campaign(
        lead=lead,
        name="TREC DL passage pilot",
        judges=[judge],
        guidelines="Judge **each passage on its own**.\n\n- Grade what it says.",
    )
    Topic.objects.create(
        campaign=campaign,
        qid="1103812",
        query="how much does a passport renewal cost",
        description="The searcher wants the fee for renewing an adult passport.",
        narrative="Passages stating a renewal price are relevant; first-time fees only are related.",
    )
    Topic.objects.create(campaign=campaign, qid="1106007", query="what causes tides")
    services.add_pairs(
        campaign=campaign,
        pairs=[("1103812", f"p{i}") for i in range(1, 7)] + [("1106007", "t1"), ("1106007", "t2")],
        source=PairSource.POOLED,
    )
    for docno, (title, text) in PASSAGES.items():
        Document.objects.filter(campaign=campaign, docno=docno).update(
            title=title, text=text, url=f"https://example.org/{docno}/{LONG_PATH}"
        )
    return campaign, judge


def open_page(page, live_server, login, campaign):
    login("judy", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
    expect(page.locator("#document-slot [data-assignment]")).to_be_visible()


def showing(page) -> int:
    return int(page.locator("#document-slot [data-assignment]").get_attribute("data-assignment"))


def expect_showing(page, assignment_id: int) -> None:
    expect(page.locator("#document-slot [data-assignment]")).to_have_attribute(
        "data-assignment", str(assignment_id)
    )


def expect_all_saved(page) -> None:
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved", timeout=15000)


def test_a_judge_grades_a_topic_from_the_keyboard_resumes_after_a_reload_undoes_and_skips(
    page, live_server, login, screenshot, campaign
):
    campaign, judge = campaign
    queue = services.judge_queue(campaign=campaign, judge=judge)
    topic_one = queue[:6]
    open_page(page, live_server, login, campaign)

    expect_showing(page, queue[0])
    expect(page.locator(".topic-card .query")).to_have_text("how much does a passport renewal cost")
    expect(page.locator("#topic-count")).to_have_text("0 / 6")
    expect(page.locator("#overall-count")).to_have_text("0 / 8")
    screenshot("judge-pair")

    # Three grades: number row, numpad, number row. Each moves to the next pair at once.
    for key, expected_next in (("Digit3", queue[1]), ("Numpad1", queue[2]), ("Digit0", queue[3])):
        page.keyboard.press(key)
        expect_showing(page, expected_next)
    expect(page.locator("#topic-count")).to_have_text("3 / 6")
    expect_all_saved(page)

    # Halfway: a reload resumes exactly at the first open pair of the queue.
    page.reload()
    expect_showing(page, queue[3])
    assert services.next_open_assignment(campaign=campaign, judge=judge).pk == queue[3]
    expect(page.locator("#topic-count")).to_have_text("3 / 6")

    # Arrows move without grading; going back shows the judge's own grade selected.
    page.keyboard.press("ArrowLeft")
    expect_showing(page, queue[2])
    expect(page.locator('.grade[data-grade="0"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator('.grade[aria-pressed="true"]')).to_have_count(1)
    expect(page.locator("[data-slot=status]")).to_contain_text("Your grade: 0 · Irrelevant")
    screenshot("judge-revisit")
    page.keyboard.press("j")
    expect_showing(page, queue[3])
    expect(page.locator('.grade[aria-pressed="true"]')).to_have_count(0)

    page.keyboard.press("Digit2")
    expect_showing(page, queue[4])
    # Skip with the dialog's default reason.
    page.keyboard.press("s")
    expect(page.locator("#skip-dialog")).to_be_visible()
    expect(page.locator("#skip-reason")).to_have_value("can't judge")
    page.keyboard.press("Enter")
    expect(page.locator("#skip-dialog")).to_be_hidden()
    expect_showing(page, queue[5])

    # Undo takes back the last action (the skip) and returns to that pair, open again.
    page.keyboard.press("u")
    expect_showing(page, queue[4])
    expect(page.locator("[data-slot=status]")).to_contain_text("Not graded yet")
    expect(page.locator("#topic-count")).to_have_text("4 / 6")
    page.keyboard.press("Digit1")
    expect_showing(page, queue[5])
    page.keyboard.press("s")
    page.locator("#skip-reason").fill("not in a language I read")
    page.keyboard.press("Enter")
    # The topic is done; the next topic starts.
    expect_showing(page, queue[6])
    expect(page.locator(".topic-card .query")).to_have_text("what causes tides")
    expect(page.locator("#overall-count")).to_have_text("6 / 8")
    expect_all_saved(page)

    rows = {
        j.assignment_id: (j.grade, j.skip_reason)
        for j in Judgment.objects.filter(assignment_id__in=topic_one)
    }
    assert rows == {
        topic_one[0]: (3, ""),
        topic_one[1]: (1, ""),
        topic_one[2]: (0, ""),
        topic_one[3]: (2, ""),
        topic_one[4]: (1, ""),
        topic_one[5]: (None, "not in a language I read"),
    }, "the database should hold exactly what was typed"
    assert list(
        JudgmentChange.objects.filter(assignment_id=topic_one[4]).values_list(
            "action", "old_grade", "new_grade", "note"
        )
    ) == [
        ("skipped", None, None, "can't judge"),
        ("undone", None, None, "can't judge"),
        ("graded", None, 1, ""),
    ], "the skip, its undo and the grade are all in the history"
    assert JudgmentChange.objects.filter(changed_by=judge).count() == 8
    assert all(j.seconds > 0 for j in Judgment.objects.all()), "active time is sent"
    assert Assignment.objects.filter(pk__in=topic_one, status=AssignmentStatus.OPEN).count() == 0
    screenshot("judge-next-topic")

    # The last topic; then the page says the work is done and offers a review.
    page.keyboard.press("Digit3")
    expect_showing(page, queue[7])
    page.keyboard.press("Numpad2")
    expect(page.locator("[data-finished]")).to_contain_text("You have been through every pair")
    expect(page.locator("#overall-count")).to_have_text("8 / 8")
    expect_all_saved(page)
    screenshot("judge-finished")
    page.keyboard.press("ArrowLeft")
    expect_showing(page, queue[7])
    expect(page.locator('.grade[data-grade="2"]')).to_have_attribute("aria-pressed", "true")


def test_a_grade_that_fails_to_save_stays_pending_and_is_saved_once(
    page, live_server, login, screenshot, campaign
):
    campaign, judge = campaign
    queue = services.judge_queue(campaign=campaign, judge=judge)
    attempts = []

    def flaky(route):
        attempts.append(route.request.post_data)
        if len(attempts) == 1:
            # The server applies it but the answer is lost: the retry must be a no-op.
            route.fetch()
            route.abort()
        elif len(attempts) <= 3:
            route.abort()
        else:
            route.continue_()

    open_page(page, live_server, login, campaign)
    page.route(re.compile(r"/grade/$"), flaky)
    page.keyboard.press("Digit2")
    expect_showing(page, queue[1])  # optimistic: the judge moves on while it saves

    expect(page.locator("#save-state")).to_have_attribute("data-state", "pending")
    expect(page.locator("#save-text")).to_contain_text("1 pending — retrying")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("[data-slot=status] [data-save]")).to_have_attribute("data-save", "pending")
    expect(page.locator("[data-slot=status]")).to_contain_text("Pending — retrying")
    screenshot("judge-pending")

    expect_all_saved(page)
    expect(page.locator("[data-slot=status]")).to_contain_text("Saved")
    assert len(attempts) == 4, f"expected three failures and a success, saw {len(attempts)}"
    assert len({attempt for attempt in attempts}) == 1, "every retry repeats the same request"
    assert Judgment.objects.get(assignment_id=queue[0]).grade == 2
    assert JudgmentChange.objects.filter(assignment_id=queue[0]).count() == 1, (
        "the submission that reached the server once and was retried must count once"
    )


def test_pending_grades_survive_a_reload(page, live_server, login, campaign):
    campaign, judge = campaign
    queue = services.judge_queue(campaign=campaign, judge=judge)
    open_page(page, live_server, login, campaign)
    page.route(re.compile(r"/grade/$"), lambda route: route.abort())
    page.keyboard.press("Digit3")
    # A key pressed before the next document is on screen grades nothing (judge.js says it
    # is still loading), so wait for it as a judge would; on a busy machine it takes a moment.
    expect_showing(page, queue[1])
    page.keyboard.press("Digit1")
    expect(page.locator("#save-state")).to_have_attribute("data-state", "pending")
    assert not Judgment.objects.exists()

    page.reload()
    # The server still sees both pairs open, yet the page resumes after them: the outbox,
    # kept in localStorage, replays the judge's grades.
    expect_showing(page, queue[2])
    expect(page.locator("#save-text")).to_contain_text("2 pending")
    page.unroute(re.compile(r"/grade/$"))
    page.locator("[data-action=retry]").click()
    expect_all_saved(page)
    assert dict(Judgment.objects.values_list("assignment_id", "grade")) == {
        queue[0]: 3,
        queue[1]: 1,
    }


def test_active_time_stops_while_the_tab_is_hidden(page, live_server, login, campaign):
    campaign, judge = campaign
    queue = services.judge_queue(campaign=campaign, judge=judge)
    page.clock.install()
    open_page(page, live_server, login, campaign)

    def set_visibility(state: str) -> None:
        page.evaluate(
            """(state) => {
                Object.defineProperty(document, "visibilityState", {
                    configurable: true, get: () => state,
                });
                document.dispatchEvent(new Event("visibilitychange"));
            }""",
            state,
        )

    page.clock.fast_forward(10_000)
    set_visibility("hidden")
    page.clock.fast_forward(600_000)  # ten minutes in another tab
    set_visibility("visible")
    page.clock.fast_forward(5_000)
    page.keyboard.press("Digit1")
    expect_all_saved(page)

    seconds = Judgment.objects.get(assignment_id=queue[0]).seconds
    # The page's clock still flows with real time between the steps (seconds on a loaded CI
    # machine, counted as visible time, rightly); the ten hidden minutes must not count.
    assert seconds == pytest.approx(15, abs=3), (
        f"15 s were spent with the tab visible; {seconds} s were recorded"
    )


def test_keys_typed_into_the_note_do_not_grade_and_the_note_is_saved_with_the_grade(
    page, live_server, login, screenshot, campaign
):
    campaign, judge = campaign
    queue = services.judge_queue(campaign=campaign, judge=judge)
    open_page(page, live_server, login, campaign)

    page.keyboard.press("n")
    expect(page.locator("#note-dialog")).to_be_visible()
    page.keyboard.type("2019 price, 3 years old")
    screenshot("judge-note")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#note-dialog")).to_be_hidden()
    expect_showing(page, queue[0])  # typing "2" and "3" in the note graded nothing
    expect(page.locator("[data-slot=note]")).to_contain_text("2019 price, 3 years old")

    page.keyboard.press("Shift+Slash")
    expect(page.locator("#help-dialog")).to_be_visible()
    expect(page.locator("#help-dialog")).to_contain_text("Undo your last grade")
    page.keyboard.press("Escape")
    expect(page.locator("#help-dialog")).to_be_hidden()

    page.locator('.grade[data-grade="3"]').click()  # every key has a button too
    expect_showing(page, queue[1])
    expect_all_saved(page)
    judgment = Judgment.objects.get(assignment_id=queue[0])
    assert (judgment.grade, judgment.note) == (3, "2019 price, 3 years old")
    assert not Judgment.objects.exclude(assignment_id=queue[0]).exists()


# --- on a phone --------------------------------------------------------------------------------
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
LONG_TEXT = "\n\n".join(
    f"Paragraph {n}: renewing an adult passport by mail costs $130; the card is $30 more."
    for n in range(1, 31)
)


def viewport_top_of(page, selector: str) -> float:
    return page.evaluate(f"() => document.querySelector({selector!r}).getBoundingClientRect().top")


def test_a_judge_grades_by_tapping_on_a_phone(browser, live_server, campaign):
    campaign, judge = campaign
    queue = services.judge_queue(campaign=campaign, judge=judge)
    # The first document is long: the judge reads down it before tapping a grade.
    first = Assignment.objects.get(pk=queue[0]).pair.document
    Document.objects.filter(pk=first.pk).update(text=LONG_TEXT)
    # A pair whose document has no text waits outside the queue, and the page says so.
    services.add_pairs(campaign=campaign, pairs=[("1106007", "t3")], source=PairSource.POOLED)
    assert services.judge_queue(campaign=campaign, judge=judge) == queue

    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("judy")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
    expect_showing(page, queue[0])
    expect(page.locator("#overall-count")).to_have_text("0 / 8")
    expect(page.locator("#waiting-note")).to_contain_text("1 more pair waits for its document")
    no_sideways_scroll(page)

    # The document comes first: its title and first lines are above the grades' bar, which is
    # fixed at the bottom of the screen with tap targets a thumb can hit.
    bar = page.locator(".scale-card").bounding_box()
    actions = page.locator(".pair-actions").bounding_box()
    assert bar["y"] + bar["height"] <= actions["y"] + 1 and actions["y"] + actions["height"] >= 843
    text = page.locator(".doc-text").bounding_box()
    assert text["y"] + 60 < bar["y"], f"the document starts at {text['y']} px, under the bar"
    for button in page.locator(".grade").all():
        box = button.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, f"a grade is too small to tap: {box}"
        assert box["y"] >= bar["y"], "the grades are in the bar at the bottom"
    # The topic's query is shown; its description is one tap away, and so are the guidelines.
    expect(page.locator(".topic-card .query")).to_be_visible()
    expect(page.get_by_text("The searcher wants the fee")).to_be_hidden()
    page.locator(".topic-more summary").tap()
    expect(page.get_by_text("The searcher wants the fee")).to_be_visible()
    page.locator(".guidelines:not(.scale-help) summary").tap()
    expect(page.locator(".guidelines-body")).to_contain_text("each passage on its own")

    for step, grade in enumerate((2, 0, 3)):
        # Read down to the end of the document, then tap a grade in the bar.
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        if step == 0:
            assert viewport_top_of(page, ".doc-card") < 0, "the long document was scrolled"
        page.locator(f'.grade[data-grade="{grade}"]').tap()
        expect_showing(page, queue[step + 1])
        # The view is back at the top of the next document, not where the last one ended.
        top = viewport_top_of(page, "#document-slot .doc-card")
        assert 0 <= top < 844 / 2, f"the next document starts at {top} px in the window"
        # Nothing looks chosen on the next pair, the tapped button included.
        expect(page.locator('.grade[aria-pressed="true"]')).to_have_count(0)
        tapped = page.locator(f'.grade[data-grade="{grade}"]')
        expect(tapped).to_have_css("background-color", "rgb(255, 255, 255)")
        assert not page.evaluate("() => document.activeElement.matches('.grade')")
        no_sideways_scroll(page)

    # Skip from the bar, with the dialog (it fits the screen).
    page.locator(".pair-actions [data-action=skip]").tap()
    expect(page.locator("#skip-dialog")).to_be_visible()
    no_sideways_scroll(page)
    page.locator("#skip-dialog").get_by_role("button", name="Skip pair").tap()
    expect_showing(page, queue[4])
    expect(page.locator("#overall-count")).to_have_text("4 / 8")
    expect_all_saved(page)
    assert dict(
        Judgment.objects.filter(assignment_id__in=queue[:4]).values_list("assignment_id", "grade")
    ) == {queue[0]: 2, queue[1]: 0, queue[2]: 3, queue[3]: None}

    # The site's links are behind "Menu" at this width, and the header fits.
    page.evaluate("() => window.scrollTo(0, 0)")
    page.locator(".site-menu summary").tap()
    expect(page.locator(".site-menu").get_by_role("link", name="Qrels")).to_be_visible()
    no_sideways_scroll(page)
    context.close()


def _suggesting(campaign, judge):
    """Suggestions from a machine judge that graded every pair 3, blind share 0.3; returns
    the judge's queue split into (shown the suggestion, blind)."""
    from annotation.agreement.anchoring import is_blind
    from annotation.models import MachineAnswer, MachineOutcome
    from annotation.services import machine_judges

    machine = machine_judges.create_machine_judge(
        campaign=campaign, model_name="judge-7b", base_url="https://llm.example.invalid/v1"
    )
    for pair in campaign.pairs.all():
        MachineAnswer.objects.create(
            machine=machine, pair=pair, outcome=MachineOutcome.GRADED, grade=3
        )
    services.update_campaign(campaign=campaign, suggestions_from=machine.pk, blind_share=0.3)
    # The campaign's seed is random, and with it which of the eight pairs are blind: in
    # about one run in seventeen none was. The first seed giving this judge both kinds is
    # used.
    for seed in range(1, 100):
        Campaign.objects.filter(pk=campaign.pk).update(seed=seed)
        campaign.refresh_from_db()
        queue = services.judge_queue(campaign=campaign, judge=judge)
        pair_of = dict(Assignment.objects.filter(pk__in=queue).values_list("pk", "pair_id"))
        blind = {a for a in queue if is_blind(campaign.seed, judge.pk, pair_of[a], 0.3)}
        if blind and set(queue) - blind:
            break
    return queue, blind


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_judge_sees_the_machines_suggestion_except_on_blind_pairs(
    browser, live_server, campaign, device
):
    """Post-editing: the machine's grade shows above the passage on the pairs that are not
    the judge's blind ones, and the judge's own grade is what is stored."""
    campaign, judge = campaign
    queue, blind = _suggesting(campaign, judge)
    assert blind and set(queue) - blind, "the seed gives this judge both kinds of pair"
    context = browser.new_context(**(PHONE if device == "phone" else {}))
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("judy")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
    for assignment in queue[:6]:
        expect_showing(page, assignment)
        suggestion = page.locator("#document-slot .suggestion")
        if assignment in blind:
            expect(suggestion).to_have_count(0)
        else:
            expect(suggestion).to_contain_text("Machine suggests 3")
            expect(suggestion).to_contain_text("the machine may be wrong")
        if device == "phone":
            no_sideways_scroll(page)
            page.locator('.grade[data-grade="1"]').tap()
        else:
            page.keyboard.press("1")
    expect_all_saved(page)
    stored = Judgment.objects.filter(assignment_id__in=queue[:6]).values_list("grade", flat=True)
    assert list(stored) == [1] * 6
    context.close()
