"""Every page works under the Content Security Policy (no inline script or style): the
browser reports no violation on the main pages of each role, with the demo data loaded."""

import pytest
from django.core.management import call_command

from annotation.models import Campaign
from annotation.services import demo as demo_data


@pytest.fixture
def demo(media_root):
    call_command("demo", "--source", "fallback", stdout=open("/dev/null", "w"))  # noqa: SIM115


def visit_all(page, live_server, paths) -> list[str]:
    violations = []
    page.on(
        "console",
        lambda message: (
            violations.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        assert response.headers["content-security-policy"].startswith("default-src 'self'")
        page.wait_for_load_state("networkidle")
    return violations


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_leads_pages_raise_no_csp_violation(page, live_server, login, demo):
    panel = Campaign.objects.get(name=demo_data.PANEL_CAMPAIGN)
    login("lead", "lead-demo")
    paths = [
        "/",
        "/campaigns/",
        f"/campaigns/{panel.pk}/",
        f"/campaigns/{panel.pk}/progress/",
        f"/campaigns/{panel.pk}/pool/",
        f"/campaigns/{panel.pk}/agreement/",
        f"/campaigns/{panel.pk}/calibration/",
        f"/campaigns/{panel.pk}/adjudicate/?show=all",
        f"/campaigns/{panel.pk}/publish/",
        f"/campaigns/{panel.pk}/edit/",
        f"/campaigns/{panel.pk}/machines/",
        "/api/v1/docs/",
    ]
    assert visit_all(page, live_server, paths) == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_judges_and_engineers_pages_raise_no_csp_violation(page, live_server, login, demo):
    campaign = Campaign.objects.get(name=demo_data.CAMPAIGN)
    login("judge", "judge-demo")
    assert visit_all(page, live_server, ["/", f"/campaigns/{campaign.pk}/judge/"]) == []
    page.context.clear_cookies()
    login("engineer", "engineer-demo")
    engineer_pages = ["/", "/evaluation/qrels/", "/evaluation/runs/", "/evaluation/diff/"]
    engineer_pages.append("/evaluation/leaderboard/")
    engineer_pages.append("/evaluation/leaderboard/check/")
    assert visit_all(page, live_server, engineer_pages) == []


@pytest.mark.django_db
def test_the_policy_allows_no_inline_script_anywhere(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("someone"))
    page = client.get("/")["Content-Security-Policy"]
    assert "script-src 'self';" in page and "unsafe-inline" not in page
    assert "frame-ancestors 'none'" in page and "object-src 'none'" in page
    docs = client.get("/api/v1/docs/")["Content-Security-Policy"]
    assert "script-src 'self';" in docs
    assert "style-src 'self' 'unsafe-inline'" in docs  # Swagger UI's own style elements
