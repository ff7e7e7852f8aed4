"""A lead's uploads on the campaign pages answer with every problem of the file at once
(issue 28, item 10): the pool's pairs file through its job page, a header line accepted."""

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="text/tab-separated-values")


@pytest.fixture
def lead(client, world):
    client.force_login(world.users["lead"])
    return client


def test_a_bad_pool_file_lists_every_problem_on_the_job_page(lead, world, run_jobs):
    url = f"/campaigns/{world.campaign.pk}/pool/pairs/"
    pool = b"qid\tdocno\n1\td1 extra\n1099\td2\n1\td9\n1\td9\n"

    with run_jobs():
        response = lead.post(url, {"file": upload("pool.tsv", pool)})
    page = lead.get(response["Location"]).content.decode()

    assert "3 problems found; nothing was stored." in page
    listed = html.unescape(page.split('<pre class="errors">')[1].split("</pre>")[0])
    assert listed.splitlines() == [
        "pool.tsv:2: expected 2 fields (qid docno), found 3",
        "pool.tsv:3: topic '1099' is not in this campaign (import it first)",
        "pool.tsv:5: pair '1' 'd9' already appears on line 4",
    ]


def test_a_pool_file_with_a_header_line_is_imported(lead, world, run_jobs):
    url = f"/campaigns/{world.campaign.pk}/pool/pairs/"
    with run_jobs():
        response = lead.post(url, {"file": upload("pool.tsv", b"qid\tdocno\n1\td9\n")})
    page = lead.get(response["Location"]).content.decode()
    assert "Added 1 pair to the pool" in page
    assert world.campaign.pairs.filter(document__docno="d9").exists()
