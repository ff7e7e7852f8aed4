"""The run diff page (evaluation/views_diff.run_diff): two runs side by side, topic by
topic. Its numbers are evaluation.dashboards.diff's; these tests check what the page shows
and who may see it (the permission matrix is in tests/pages/test_permissions.py)."""

import re

import pytest

from evaluation.models import Evaluation
from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def as_engineer(client, django_user_model):
    client.force_login(user(django_user_model, "eng", "engineer"))
    return client


def url(qrels, a, b, **extra):
    query = "&".join(f"{key}={value}" for key, value in extra.items())
    return f"/evaluation/diff/?qrels={qrels.pk}&a={a.pk}&b={b.pk}" + (f"&{query}" if query else "")


def test_the_page_orders_topics_by_the_measure_and_shows_the_most_changed_side_by_side(
    as_engineer, world
):
    qrels, bm25, dense = world
    values = {
        e.run_id: {q: v["ndcg_cut_10"] for q, v in e.per_topic.items()}
        for e in Evaluation.objects.all()
    }
    deltas = {q: values[dense.pk][q] - values[bm25.pk][q] for q in ("1", "3")}
    most = max(deltas, key=lambda q: abs(deltas[q]))

    html = as_engineer.get(url(qrels, bm25, dense)).content.decode()

    topics = re.findall(r'data-testid="diff-topic-link">([^<]+)<', html)
    assert topics[0] == most and set(topics) == {"1", "2", "3"}
    assert topics[-1] == "2"  # dense has no topic 2: no delta, listed last
    assert f'Topic <a href="/evaluation/topics/{most}/' in html
    table = html.split('data-testid="side-by-side"')[1].split("</table>")[0]
    if most == "3":
        # bm25: u8 (unjudged), d7 (grade 1); dense: u10, u11, u12 (unjudged, only in dense)
        assert table.count("only here") == 5 and "u10" in table and "d7" in table
    assert 'data-testid="diff-summary"' in html
    assert 'src="/static/js/diff.js"' in html and "<script>" not in html


def test_a_topic_can_be_chosen_and_the_neighbours_are_linked(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(url(qrels, bm25, dense, order="rbo", qid="1")).content.decode()

    topic = html.split('data-testid="side-by-side"')[1].split("</table>")[0]
    # Topic 1: bm25 d1 u5 d3; dense d9 d1 d3. d9 and u5 are in one run only.
    assert re.search(r"d9</button>\s*<span class=\"only-mark\"", topic)
    assert re.search(
        r"u5</button><span class=\"visually-hidden\"> \(unjudged\)</span>\s*<span class=\"only-mark\"",
        topic,
    )
    assert 'id="previous-topic"' in html or 'id="next-topic"' in html


def test_bounds_of_the_shown_topic_bracket_the_value(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(url(qrels, bm25, dense, qid="3", measure="P_5")).content.decode()

    # bm25 topic 3: u8 unjudged at rank 1, d7 relevant: P@5 from 1/5 to 2/5.
    bounds = re.search(r'data-testid="bounds-a">([^<]+)<', html).group(1)
    assert bounds.strip() == "0.2000 – 0.4000"


def test_the_leaderboards_form_opens_the_diff_of_the_baseline_and_a_ticked_run(as_engineer, world):
    qrels, bm25, dense = world
    board = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}").content.decode()
    assert 'formaction="/evaluation/diff/"' in board

    html = as_engineer.get(
        f"/evaluation/diff/?qrels={qrels.pk}&baseline={bm25.pk}&runs={bm25.pk}&runs={dense.pk}"
    ).content.decode()

    assert 'data-testid="side-by-side"' in html


def test_the_comparison_page_links_each_run_to_its_diff(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(
        f"/evaluation/compare/?qrels={qrels.pk}&baseline={bm25.pk}&runs={dense.pk}"
    ).content.decode()

    assert f"/evaluation/diff/?qrels={qrels.pk}&amp;a={bm25.pk}&amp;b={dense.pk}" in html


def test_bad_choices_are_explained_not_crashed(as_engineer, world):
    qrels, bm25, dense = world

    same = as_engineer.get(url(qrels, bm25, bm25))
    unknown_topic = as_engineer.get(url(qrels, bm25, dense, qid="nope"))
    bad_depth = as_engineer.get(url(qrels, bm25, dense, k=10, depth=5))
    nothing = as_engineer.get(f"/evaluation/diff/?qrels={qrels.pk}")

    assert "Choose two different runs" in same.content.decode()
    assert (
        unknown_topic.status_code == 400
        and "Neither run has topic nope" in unknown_topic.content.decode()
    )
    assert bad_depth.status_code == 400 and "depth" in bad_depth.content.decode()
    assert nothing.status_code == 200 and 'name="a"' in nothing.content.decode()


def test_before_a_choice_the_form_offers_two_different_runs(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(f"/evaluation/diff/?qrels={qrels.pk}").content.decode()
    chosen_a = as_engineer.get(f"/evaluation/diff/?qrels={qrels.pk}&a={dense.pk}")

    def selected(page: str, name: str) -> list[str]:
        select = page.split(f'<select name="{name}"')[1].split("</select>")[0]
        return re.findall(r'<option value="(\d+)" selected>', select)

    assert selected(html, "a") == [str(bm25.pk)] and selected(html, "b") == [str(dense.pk)]
    page = chosen_a.content.decode()
    assert selected(page, "a") == [str(dense.pk)] and selected(page, "b") == [str(bm25.pk)]


def test_a_run_not_scored_with_the_options_is_named(as_engineer, world):
    qrels, bm25, dense = world

    html = as_engineer.get(url(qrels, bm25, dense) + "&gain=exp").content.decode()

    assert "Not scored with these options" in html


def test_judges_get_403_and_the_page_is_get_only(client, django_user_model, world):
    qrels, bm25, dense = world
    client.force_login(user(django_user_model, "ann", "judge"))
    assert client.get(url(qrels, bm25, dense)).status_code == 403
    client.force_login(user(django_user_model, "lea", "lead"))
    assert client.get(url(qrels, bm25, dense)).status_code == 200
    assert client.post(url(qrels, bm25, dense)).status_code == 405


def test_the_summary_shows_how_much_the_lists_share_not_a_symmetric_only_in_a_and_b(
    as_engineer, world
):
    qrels, bm25, dense = world
    view_totals = as_engineer.get(url(qrels, bm25, dense)).context["totals"]
    common, longer = view_totals["common"], view_totals["longer"]
    assert 0 < common < longer

    html = as_engineer.get(url(qrels, bm25, dense)).content.decode()

    card = html.split('data-testid="diff-shared">')[1].split("</div>")[0]
    assert f"<strong>{round(100 * common / longer)}%</strong>" in card
    assert f"({common} of {longer}" in card
    if view_totals["only_a"] == view_totals["only_b"]:
        assert "only in A" not in card  # the same number twice says nothing
    else:
        assert f"{view_totals['only_a']} only in A, {view_totals['only_b']} only in B" in card
