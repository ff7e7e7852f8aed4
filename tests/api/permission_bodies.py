"""The request bodies and query parameters of the API's permission matrix
(tests/api/test_permissions.py): ``BODIES[name](world)`` is ``(data, format)`` for a row
whose body is ``name``, naming the world's objects (tests/api/conftest.py)."""

from tests.api.conftest import DOCUMENTS, OTHER_RUN, QRELS, TOPICS, upload

BODIES = {
    "search_endpoint": lambda w: (
        {"name": "es-api", "kind": "elasticsearch", "url": "https://es.example.invalid/d/_search"},
        "json",
    ),
    "search_patch": lambda w: ({"timeout": 5}, "json"),
    "share": lambda w: ({"teams": ["web-search"]}, "json"),
    "schedule": lambda w: (
        {
            "name": "nightly",
            "endpoint": w.ids["search_endpoint"],
            "campaign": w.ids["campaign"],
            "qrels": w.ids["qrels"],
            "k": 10,
            "cron": "0 3 * * *",
            "measures": ["nDCG@10"],
            "threshold": 0.02,
        },
        "json",
    ),
    "schedule_patch": lambda w: (
        {"paused": True, "threshold": 0.05, "cron": "30 4 * * *", "measures": ["P@5"]},
        "json",
    ),
    "search_test": lambda w: ({"query": "cheap flights"}, "json"),
    "search_run": lambda w: ({"qrels": w.ids["qrels"], "k": 10}, "json"),
    "search_trial": lambda w: (
        {"template": '{"query": {"match": {"text": "{{query}}"}}}', "query_qrels": w.ids["qrels"]},
        "json",
    ),
    "campaign": lambda w: ({"name": "Another campaign"}, "json"),
    "campaign_patch": lambda w: ({"description": "Changed."}, "json"),
    "stop_rule": lambda w: ({"rule": "adjacent", "confidence": 0.95, "top": 3}, "json"),
    "reassign": lambda w: (
        {"from_judge": w.ids["judge"], "to_judge": w.ids["other_judge"]},
        "json",
    ),
    "topics_file": lambda w: ({"file": upload("t.tsv", TOPICS), "format": "tsv"}, "multipart"),
    "documents_file": lambda w: ({"file": upload("d.jsonl", DOCUMENTS)}, "multipart"),
    "pairs": lambda w: ({"pairs": [{"qid": "1", "docno": "d9"}]}, "json"),
    "pool": lambda w: ({"runs": [w.ids["run"]], "depth": 5}, "json"),
    "add_judge": lambda w: ({"judge": w.ids["spare_judge"]}, "json"),
    "gold_grade": lambda w: ({"grade": 1}, "json"),
    "gold_file": lambda w: ({"file": upload("gold.txt", b"1 d1 2\n2 d9 0\n")}, "multipart"),
    "grade": lambda w: ({"grade": 3}, "json"),
    "judgments_file": lambda w: (
        {"file": upload("crowd.csv", b"qid,docno,judge,grade\n1,d1,w1,2\n")},
        "multipart",
    ),
    "decision": lambda w: (
        {"pair": w.ids["pair"], "grade": 1, "reason": "checked", "based_on": None},
        "json",
    ),
    # Another name than the world's version: the same grades under "robust" would be a 409.
    "publish": lambda w: ({"name": "robust-final", "leave_out_undecided": True}, "json"),
    "skip": lambda w: ({"reason": "can't judge"}, "json"),
    "machine": lambda w: (
        {"model_name": "judge-8b", "base_url": "https://llm.example.invalid/v1"},
        "json",
    ),
    "machine_patch": lambda w: ({"concurrency": 2}, "json"),
    "machine_run": lambda w: ({"scope": "unjudged"}, "json"),
    "audit": lambda w: ({"kind": "threshold"}, "json"),
    "certified_draw": lambda w: (
        {"machine": w.ids["machine"], "strategy": "uniform", "budget": "10%"},
        "json",
    ),
    "machine_gate": lambda w: ({"machine": w.ids["machine"], "max_pairs": 10}, "json"),
    "gate_override": lambda w: ({"reason": "The probes do not look like our documents."}, "json"),
    "note": lambda w: ({"note": "Hard one."}, "json"),
    "qrels_file": lambda w: ({"file": upload("dl.qrels", QRELS), "name": "dl"}, "multipart"),
    "system": lambda w: ({"name": "dense"}, "json"),
    "system_patch": lambda w: ({"description": "A dense retriever."}, "json"),
    "run_file": lambda w: (
        {"file": upload("dense.run", OTHER_RUN), "system": "dense"},
        "multipart",
    ),
    # GET query parameters; the world's evaluation was scored with these measures.
    "scoring": lambda w: ({"qrels": w.ids["qrels"], "measures": ["ndcg_cut.10", "map"]}, "json"),
    "comparison": lambda w: (
        {
            "qrels": w.ids["qrels"],
            "measures": ["ndcg_cut.10", "map"],
            "baseline": w.ids["run"],
            "runs": [scored_other_run(w)],
        },
        "json",
    ),
    "rankings": lambda w: ({"old": w.ids["qrels"], "new": w.ids["qrels"]}, "json"),
    "unjudged": lambda w: (
        {
            "qrels": w.ids["qrels"],
            "measures": ["ndcg_cut.10", "map"],
            "campaign": w.ids["campaign"],
            "run": w.ids["run"],
            "k": 5,
        },
        "json",
    ),
    "download": lambda w: (
        {"qrels": w.ids["qrels"], "measures": ["ndcg_cut.10", "map"], "layout": "tot"},
        "json",
    ),
    "check": lambda w: (
        {
            "qrels": w.ids["qrels"],
            "measures": ["ndcg_cut.10", "map"],
            "layout": "tot",
            "file": upload("theirs.tot", b"bm25/bm25 map 1 0.5\n"),
        },
        "multipart",
    ),
    "diff": lambda w: (
        {
            "qrels": w.ids["qrels"],
            "measures": ["ndcg_cut.10", "map"],
            "a": w.ids["run"],
            "b": scored_other_run(w),
        },
        "json",
    ),
    "diff_unjudged": lambda w: (
        {
            "qrels": w.ids["qrels"],
            "measures": ["ndcg_cut.10", "map"],
            "campaign": w.ids["campaign"],
            "a": w.ids["run"],
            "b": w.ids["run"],
            "k": 5,
        },
        "json",
    ),
    "evaluation": lambda w: (
        {"run": w.ids["run"], "qrels": w.ids["qrels"], "measures": ["P.5"]},
        "json",
    ),
}


def scored_other_run(world) -> int:
    """A second run scored like the world's (made inside each role's rolled-back request)."""
    from evaluation import services

    run = services.import_run(source=OTHER_RUN, filename="dense.run", system="dense")
    services.evaluate_run(run=run, qrels=world.qrels, measure_specs=["ndcg_cut.10", "map"])
    return run.pk
