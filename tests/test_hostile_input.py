"""Hostile and malformed files (tests/data/hostile/, listed in its manifest.json) fed to the
entry points a user would use: the lead's and engineer's pages and the API through the Django
test client (jobs run inline: the immediate task backend runs a job when its request's
transaction commits, which ``django_capture_on_commit_callbacks`` plays), and
``manage.py import_campaign``.

For every case the user sees the manifest's message fragments (``file:line: problem`` where
a line applies). A rejected file leaves every table's row count and the files under
MEDIA_ROOT as they were; the one row it adds is its failed job (jobs.Job), which is how the
user is told. Neutralised cases are imported, and then: no script or event handler reaches a
judging page, Markdown guidelines are sanitised, and the CSV downloads (raw judgments,
agreement tables, a run's topics.csv) start no cell with a formula character.
"""

from __future__ import annotations

import csv
import html
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Assignment, Campaign, Document, PairSource, Topic
from annotation.services import agreement_export
from evaluation import services as evaluation
from evaluation.models import QrelsVersion, Run, System
from jobs.models import Job, JobStatus
from tests import rows
from tests.worlds import made_once

CORPUS = Path(__file__).resolve().parent / "data" / "hostile"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
CASES = MANIFEST["cases"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

pytestmark = pytest.mark.django_db


# --- the place the files go into -----------------------------------------------------------


@dataclass
class Place:
    campaign: Campaign
    lead: object
    judges: list
    engineer: object
    system: System
    web: dict  # role -> logged-in test client
    api: dict  # role -> logged-in APIClient


def user_with(django_user_model, name, *roles):
    user = django_user_model.objects.create_user(name)  # no password: hashing is slow
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


def made_place() -> Place:
    from django.contrib.auth import get_user_model
    from django.test import Client

    return build_place(get_user_model(), Client)


# The place, made once for the module (tests/worlds.py; on PostgreSQL it took half a second
# per test, most of the module's time): each test's transaction is rolled back to it.
world_made = made_once(made_place)


@pytest.fixture
def place(world_made, settings, media_root, db) -> Place:
    """The module's place, with this test's upload limit and MEDIA_ROOT, its objects read
    afresh from the database."""
    settings.MAX_UPLOAD_MB = MANIFEST["max_upload_mb"]
    module_place = world_made.world
    for row in (module_place.campaign, module_place.lead, module_place.engineer):
        row.refresh_from_db()
    for row in (*module_place.judges, module_place.system):
        row.refresh_from_db()
    return module_place


def build_place(django_user_model, client_class) -> Place:
    """A campaign (overlap 2, judges ann and bob) with topics 1 and 2, documents d1 to d3
    in its pool, and a system bm25; clients logged in as the lead, a judge, the engineer."""
    lead = user_with(django_user_model, "lea", "lead")
    judges = [user_with(django_user_model, name, "judge") for name in ("ann", "bob")]
    engineer = user_with(django_user_model, "eng", "engineer")
    campaign = services.create_campaign(lead=lead, name="Hostile", overlap=2, judges=judges)
    for qid, query in (("1", "cheap flights"), ("2", "sourdough starter")):
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    services.add_pairs(
        campaign=campaign,
        pairs=[("1", "d1"), ("1", "d2"), ("2", "d3")],
        source=PairSource.IMPORTED,
    )
    Document.objects.filter(campaign=campaign).update(title="A title", text="Some text.")
    system = System.objects.create(name="bm25", created_by=engineer)
    web, api = {}, {}
    for role, user in (("lead", lead), ("judge", judges[0]), ("engineer", engineer)):
        web[role] = client_class()
        web[role].force_login(user)
        api[role] = APIClient()
        api[role].force_login(user)
    return Place(campaign, lead, judges, engineer, system, web, api)


def row_counts() -> dict[str, int]:
    """Rows of every model, but the jobs: a refused file's job is how the user is told."""
    return rows.row_counts(leave_out=[Job])


# --- entry points --------------------------------------------------------------------------


@dataclass
class Outcome:
    text: str  # what the user is shown (HTML unescaped, or the JSON, or the command's error)
    ok: bool  # the import went through
    jobs: list[Job]


def _page_text(response) -> str:
    return html.unescape(response.content.decode())


def _new_jobs(before: int) -> list[Job]:
    return list(Job.objects.filter(pk__gt=before).order_by("pk"))


def _job_outcome(client, jobs, response, *, api: bool) -> Outcome:
    if not jobs:  # refused before any job started (a form or serializer error)
        text = json.dumps(response.json()) if api else _page_text(response)
        return Outcome(text, False, [])
    texts = []
    for job in jobs:
        if api:
            texts.append(json.dumps(client.get(f"/api/v1/jobs/{job.pk}/").json()))
        else:
            page = client.get(f"/jobs/{job.pk}/")
            assert page.status_code == 200
            texts.append(_page_text(page))
    ok = all(job.status == JobStatus.SUCCEEDED for job in jobs)
    return Outcome("\n".join(texts), ok, jobs)


WEB_IMPORTS = {"topics": "topics/import/", "documents": "documents/import/", "pairs": "pool/pairs/"}


def feed(place: Place, case: dict, capture) -> Outcome:
    """Give the case's file to its entry point as a user would; what they are shown."""
    path = CORPUS / case["file"]
    kind, what = case["entry"].split(":")
    before = Job.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    pk = place.campaign.pk
    if case["entry"] == "command:import_campaign":
        try:
            call_command("import_campaign", str(path), stdout=io.StringIO())
        except CommandError as error:
            return Outcome(str(error), False, [])
        return Outcome("", True, [])
    if case["entry"] == "command:import_judgments":
        try:
            call_command("import_judgments", str(pk), str(path), stdout=io.StringIO())
        except CommandError as error:
            return Outcome(str(error), False, [])
        return Outcome("", True, [])
    if what == "judgments":  # read in the request: no job
        with path.open("rb") as file:
            data = {"file": file, **({"format": case["fmt"]} if "fmt" in case else {})}
            if kind == "web":
                response = place.web["lead"].post(f"/campaigns/{pk}/judgments/import/", data)
                return Outcome(_page_text(response), response.status_code == 302, [])
            response = place.api["lead"].post(f"/api/v1/campaigns/{pk}/judgment-imports/", data)
            return Outcome(json.dumps(response.json()), response.status_code == 201, [])
    if what == "guidelines":
        client = place.web["lead"]
        response = client.post(f"/campaigns/{pk}/edit/", campaign_form(place, path))
        return Outcome(_page_text(response), response.status_code == 302, [])
    with path.open("rb") as file, capture(execute=True):
        if kind == "web" and what in WEB_IMPORTS:
            client = place.web["lead"]
            data = {"file": file, **({"format": case["fmt"]} if "fmt" in case else {})}
            response = client.post(f"/campaigns/{pk}/{WEB_IMPORTS[what]}", data)
        elif case["entry"] == "web:gold":
            client = place.web["lead"]
            response = client.post(f"/campaigns/{pk}/calibration/gold/", {"file": file})
            return Outcome(_page_text(response), response.status_code == 302, [])
        elif case["entry"] == "web:runs":
            client = place.web["engineer"]
            response = client.post(
                "/evaluation/runs/upload/",
                {
                    "files": [file],
                    # An existing system, or one the form creates (new_name).
                    **(
                        {"system": "new", "new_name": case["new_system"]}
                        if "new_system" in case
                        else {"system": str(place.system.pk)}
                    ),
                    "gain": "linear",
                    "relevance_level": 1,
                },
            )
        elif case["entry"] == "api:runs":
            client = place.api["engineer"]
            response = client.post("/api/v1/runs/", {"file": file, "system": "bm25"})
        elif case["entry"] == "api:qrels":
            client = place.api["engineer"]
            response = client.post("/api/v1/qrels/", {"file": file, "name": "hostile"})
            text = json.dumps(response.json())
            return Outcome(text, response.status_code == 201, [])
        elif kind == "api" and what in ("topics", "documents"):
            client = place.api["lead"]
            data = {"file": file, **({"format": case["fmt"]} if "fmt" in case else {})}
            response = client.post(f"/api/v1/campaigns/{pk}/{what}/", data)
        else:
            raise AssertionError(f"manifest names an unknown entry point {case['entry']!r}")
    return _job_outcome(client, _new_jobs(before), response, api=kind == "api")


def campaign_form(place: Place, path: Path) -> dict:
    """The campaign's edit form as it stands, with the file as its guidelines."""
    campaign = place.campaign
    data = {
        "name": campaign.name,
        "description": campaign.description,
        "scale": "0-3",
        "guidelines": path.read_bytes().decode(),
        "overlap": campaign.overlap,
        "relevance_threshold": campaign.relevance_threshold,
        "adjudication_rule": campaign.adjudication_rule,
        "gold_min_accuracy": campaign.gold_min_accuracy,
        "judges": [judge.pk for judge in place.judges],
    }
    for grade in campaign.scale:
        data[f"label_{grade['grade']}"] = grade["label"]
        data[f"definition_{grade['grade']}"] = grade["definition"]
    return data


# --- checks --------------------------------------------------------------------------------


class _Tags(HTMLParser):
    """Every element and attribute a browser would build from a page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        # json_script's data blocks are not run (and escape "<" inside); anything else
        # inline is a script the page would run.
        data = attributes.get("type") == "application/json"
        if tag == "script" and not attributes.get("src") and not data:
            self.problems.append("an inline <script>")
        if tag in ("iframe", "svg", "object", "embed", "style", "form"):
            self.problems.append(f"a <{tag}> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"an event handler {name}= on <{tag}>")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.problems.append(f"a javascript: {name} on <{tag}>")
            if name in ("src", "action") and "evil.example" in (value or ""):
                self.problems.append(f"{name}= to another site on <{tag}>")


def assert_inert_page(response) -> str:
    assert response.status_code == 200
    page = response.content.decode()
    parser = _Tags()
    parser.feed(page)
    # The layout's own <form>s (log out, grading) are expected; hostile text must add none.
    problems = [p for p in parser.problems if p != "a <form> element"]
    assert problems == [], f"the page runs or embeds hostile markup: {problems}"
    return page


def judging_pages(place: Place) -> list:
    """The judge's page and every one of ann's pairs as the judging page shows them."""
    client = place.web["judge"]
    pk = place.campaign.pk
    pages = [client.get(f"/campaigns/{pk}/judge/")]
    for assignment in Assignment.objects.filter(judge=place.judges[0]).order_by("pk"):
        pages.append(client.get(f"/campaigns/{pk}/judge/{assignment.pk}/"))
    return pages


def check_judging_page(place: Place, case: dict) -> None:
    pages = [assert_inert_page(page) for page in judging_pages(place)]
    joined = "\n".join(pages)
    # The hostile text is shown as text, escaped, not dropped.
    assert "&lt;script&gt;alert(" in joined or "&lt;img src=x onerror" in joined


def check_guidelines(place: Place, case: dict) -> None:
    pages = [assert_inert_page(page) for page in judging_pages(place)]
    # Sanitised, not dropped: the harmless Markdown still renders.
    benign = {
        "script_tag": "<strong>carefully</strong>",
        "javascript_link": "the rules",
        "event_handlers": "Be fair.",
        "iframe_and_style": "",
    }[Path(case["file"]).stem]
    assert benign in pages[0]


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: starting with a formula character and not a number."""
    found = []
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell.startswith(FORMULA_START):
                try:
                    float(cell)
                except ValueError:
                    found.append(cell)
    return found


def check_formula(place: Place, case: dict, capture) -> None:
    """Import the formula run, qrels, topics, documents and pairs (this case among them, in
    the manifest's order, so that topics come before the pairs that need them), grade every
    pair; then every CSV download is inert."""
    chain = [c for c in CASES if c.get("scenario") == "formula"]
    assert case in chain
    for step in chain:
        outcome = feed(place, step, capture)
        assert outcome.ok, f"{step['file']} should import:\n{outcome.text[:3000]}"
    campaign = place.campaign
    for index, assignment in enumerate(Assignment.objects.filter(pair__topic__campaign=campaign)):
        services.record_judgment(
            assignment_id=assignment.pk, judge=assignment.judge, grade=index % 2
        )
    lead = place.web["lead"]
    downloads = {"judgments": lead.get(f"/campaigns/{campaign.pk}/download/judgments/")}
    for table in agreement_export.TABLES:
        downloads[f"agreement {table}"] = lead.get(
            f"/campaigns/{campaign.pk}/agreement/download/csv/?table={table}"
        )
    qrels = QrelsVersion.objects.get(name="hostile")
    run = Run.objects.get(system=place.system)
    evaluation.evaluate_run(run=run, qrels=qrels, measure_specs=list(evaluation.DASHBOARD_MEASURES))
    downloads["run topics"] = place.web["engineer"].get(
        f"/evaluation/runs/{run.pk}/topics.csv?qrels={qrels.pk}"
    )
    for name, response in downloads.items():
        assert response.status_code == 200, name
        text = response.content.decode()
        assert formula_cells(text) == [], f"{name} CSV has cells a spreadsheet would run"
        if name in ("judgments", "agreement topics", "run topics"):
            assert "'=1+1" in text, f"{name} CSV should hold the formula qid, made inert"


# --- the tests -----------------------------------------------------------------------------


def test_the_corpus_has_at_least_forty_files_each_in_the_manifest():
    listed = {case["file"] for case in CASES}
    on_disk = {
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in ("manifest.json", "make_corpus.py")
    }
    assert listed == on_disk, "run tests/data/hostile/make_corpus.py and commit what it writes"
    assert len(listed) >= 40
    assert {case["outcome"] for case in CASES} == {"rejected", "accepted", "neutralised"}


def test_make_corpus_writes_exactly_the_committed_files(tmp_path):
    subprocess.run(
        [sys.executable, str(CORPUS / "make_corpus.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for case in CASES:
        assert (tmp_path / case["file"]).read_bytes() == (CORPUS / case["file"]).read_bytes(), (
            f"{case['file']} differs from what make_corpus.py writes: run it and commit"
        )
    assert (tmp_path / "manifest.json").read_text() == (CORPUS / "manifest.json").read_text()


def params(outcome: str) -> list:
    """The manifest's cases of one outcome; a case with a ``known_gap`` must still fail (a
    strict xfail: once the gap is closed, drop the note from make_corpus.py)."""
    return [
        pytest.param(
            case,
            id=case["file"],
            marks=[pytest.mark.xfail(strict=True, reason=case["known_gap"])]
            if "known_gap" in case
            else [],
        )
        for case in CASES
        if case["outcome"] == outcome
    ]


@pytest.mark.parametrize("case", params("rejected"))
def test_a_hostile_file_is_refused_clearly_and_changes_nothing(
    place, case, media_root, django_capture_on_commit_callbacks
):
    before = (row_counts(), media_root())
    outcome = feed(place, case, django_capture_on_commit_callbacks)
    assert not outcome.ok, f"{case['file']} ({case['why']}) was accepted"
    for fragment in case["expect"]:
        assert fragment in outcome.text, (
            f"{case['file']} ({case['why']}): the user should read {fragment!r}; "
            f"they read:\n{outcome.text[:3000]}"
        )
    assert all(job.status == JobStatus.FAILED for job in outcome.jobs)
    assert (row_counts(), media_root()) == before, f"{case['file']} left something behind"


@pytest.mark.parametrize("case", params("accepted"))
def test_a_valid_file_in_an_unusual_shape_is_imported(
    place, case, django_capture_on_commit_callbacks
):
    outcome = feed(place, case, django_capture_on_commit_callbacks)
    assert outcome.ok, f"{case['file']} ({case['why']}) was refused:\n{outcome.text[:3000]}"
    for fragment in case["expect"]:  # notices: accepted, but the user is told
        assert fragment in outcome.text, f"{case['file']}: {fragment!r} not shown"
    if "qids" in case:
        qids = set(Topic.objects.filter(campaign=place.campaign).values_list("qid", flat=True))
        assert set(case["qids"]) <= qids
        assert not any(qid.startswith("\ufeff") or qid == "qid" for qid in qids)
    if case["entry"] == "api:qrels":
        assert QrelsVersion.objects.get(name="hostile").judgment_count == case["rows"]


@pytest.mark.parametrize("case", params("neutralised"))
def test_hostile_content_is_imported_but_made_inert(
    place, case, media_root, django_capture_on_commit_callbacks
):
    scenario = case["scenario"]
    if scenario == "formula":
        check_formula(place, case, django_capture_on_commit_callbacks)
        return
    outcome = feed(place, case, django_capture_on_commit_callbacks)
    assert outcome.ok, f"{case['file']} should import:\n{outcome.text[:3000]}"
    if scenario == "judging-page":
        check_judging_page(place, case)
    elif scenario == "guidelines":
        check_guidelines(place, case)
    else:
        raise AssertionError(f"unknown scenario {scenario!r}")
