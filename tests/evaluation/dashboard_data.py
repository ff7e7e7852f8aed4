"""Small stored worlds for the dashboard tests: qrels, systems with runs, their evaluations,
and users by role. Functions, not fixtures, so each test module makes what it needs."""

from __future__ import annotations

from django.contrib.auth.models import Group

from evaluation import services
from evaluation.collection import synthetic

# Topics 1..3, graded 0-3; d9 of topic 1 is judged but no run retrieves it.
QRELS = b"""1 0 d1 3
1 0 d2 0
1 0 d3 1
1 0 d9 2
2 0 d4 2
2 0 d5 1
3 0 d7 1
"""
# bm25: topic 1 d1 d5(unjudged) d3; topic 2 d4 d6(unjudged); topic 3 d8(unjudged) d7
BM25 = b"""1 Q0 d1 1 3.0 bm25
1 Q0 u5 2 2.0 bm25
1 Q0 d3 3 1.0 bm25
2 Q0 d4 1 2.0 bm25
2 Q0 u6 2 1.0 bm25
3 Q0 u8 1 2.0 bm25
3 Q0 d7 2 1.0 bm25
"""
# dense: better on topic 1, worse on topic 3, no topic 2 at all
DENSE = b"""1 Q0 d9 1 9.0 dense
1 Q0 d1 2 8.0 dense
1 Q0 d3 3 7.0 dense
3 Q0 u10 1 5.0 dense
3 Q0 u11 2 4.0 dense
3 Q0 u12 3 3.0 dense
"""


def user(django_user_model, name: str, *roles: str, password: str | None = None):
    # No password unless asked: hashing one costs most of a test's time.
    account = django_user_model.objects.create_user(name, password=password)
    account.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in roles))
    return account


def small_world(*, score: bool = True):
    """dl v1 (the qrels above), runs bm25/bm25 and dense/dense, scored with the dashboard
    measures when ``score``."""
    qrels = services.import_qrels(source=QRELS, filename="dl.qrels", name="dl")
    bm25 = services.import_run(source=BM25, filename="bm25.run", system="bm25")
    dense = services.import_run(source=DENSE, filename="dense.run", system="dense")
    if score:
        for run in (bm25, dense):
            services.score_run(
                run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES)
            )
    return qrels, bm25, dense


def demo_world(*, topics: int = 30, systems=None, depth: int = 40):
    """Synthetic graded qrels and runs of systems of different quality (evaluation.collection.synthetic),
    each scored with the dashboard measures. Returns (qrels, qrels text, runs)."""
    text = synthetic.make_qrels_text(topics=topics, judged=25)
    qrels = services.import_qrels(source=text.encode(), filename="demo.qrels", name="demo")
    runs = []
    for tag, (strength, noise) in (systems or synthetic.SYSTEMS).items():
        run_text = synthetic.make_run_text(
            text, tag=tag, strength=strength, noise=noise, depth=depth
        )
        run = services.import_run(source=run_text.encode(), filename=f"{tag}.run", system=tag)
        services.score_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
        runs.append(run)
    return qrels, text, runs
