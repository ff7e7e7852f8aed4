"""The measures page, `evaluate --list-measures`, and the dashboards read in either dialect:
ir_measures names of trec_eval measures find the evaluations stored under trec_eval names,
and any measure can be chosen, not only the menu's."""

import pytest
from django.utils.html import escape

from evaluation import dashboards, services
from evaluation.measures import reference
from evaluation.models import Evaluation
from tests.evaluation.dashboard_data import small_world, user
from tests.evaluation.test_cli import manage

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_engineer(client, django_user_model):
    client.force_login(user(django_user_model, "eng", "engineer"))
    return client


def test_the_page_lists_every_measure_in_both_dialects(as_engineer):
    html = as_engineer.get("/evaluation/measures/").content.decode()
    for doc in reference.available():
        for name in filter(None, (doc.ir, doc.trec)):
            assert f"<code>{name}</code>" in html, name
        assert escape(doc.formula) in html
    assert 'href="/evaluation/measures/" aria-current="page"' in html  # the nav's link


def test_every_measure_the_page_lists_is_computed(tmp_path):
    qrels = tmp_path / "q"
    run = tmp_path / "r"
    qrels.write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n")
    run.write_text("1 Q0 a 1 3 t\n1 Q0 u 2 2 t\n1 Q0 c 3 1 t\n")
    names = []
    for doc in reference.available():
        name = doc.ir or doc.trec
        names.append(name.replace("@k", "@5").replace("@r", "@0.5").replace("(p=..)", "(p=0.5)"))
    args = [a for n in names for a in ("-m", n)]
    result = manage("evaluate", qrels, run, *args, "--format", "ir_measures")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) >= len(names) - 1  # gm_map and AP share nothing


def test_list_measures_prints_the_pages_list_without_files():
    result = manage("evaluate", "--list-measures", settings="no.such.settings")
    assert result.returncode == 0, result.stderr
    assert result.stdout == reference.format_text()
    assert "ERR@k: expected reciprocal rank at k" in result.stdout
    missing = manage("evaluate", settings="no.such.settings")
    assert missing.returncode != 0


def test_ir_measures_names_find_the_evaluations_stored_under_trec_eval_names(media_root):
    qrels, bm25, _ = small_world(score=False)
    stored = services.score_run(
        run=bm25, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES)
    )
    names = ["nDCG@1", "nDCG@3", "nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "P@5", "P@10"]
    scoring = dashboards.make_scoring(qrels=qrels, measure_specs=[*names, "AP", "RR", "Judged@10"])
    assert scoring.key == stored.options_key
    assert list(dashboards.scored(scoring)) == [stored]
    assert Evaluation.objects.count() == 1


def test_the_leaderboard_takes_any_measure_in_either_dialect(as_engineer, media_root):
    qrels, bm25, dense = small_world(score=False)
    specs = ["ERR@10", "P(rel=2)@5", "ndcg_cut.10"]
    scoring = dashboards.make_scoring(qrels=qrels, measure_specs=specs)
    for run in (bm25, dense):
        services.score_run(
            run=run, qrels=qrels, measure_specs=list(scoring.specs), options=scoring.options
        )
    query = f"?qrels={qrels.pk}" + "".join(f"&measures={s}" for s in specs)
    html = as_engineer.get("/evaluation/leaderboard/" + query).content.decode()
    for label in ("ERR@10", "P(rel=2)@5", "nDCG@10"):
        assert label in html
    # The options panel offers measures beyond the menu, and a field for any other name.
    assert 'value="ERR@20"' in html and 'data-testid="other-measure"' in html


def test_a_bad_typed_measure_is_named_on_the_page(as_engineer, media_root):
    qrels, _, _ = small_world()
    html = as_engineer.get(f"/evaluation/leaderboard/?qrels={qrels.pk}&measures=P@x").content
    assert "the cutoff &#x27;x&#x27; is not a whole number" in html.decode()
