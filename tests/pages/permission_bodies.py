"""The form posts of the pages' permission matrix (tests/pages/test_permissions.py):
``BODIES[name](world)`` is the data of a row whose body is ``name``, naming the world's
objects (tests/api/conftest.py)."""

from tests.api.conftest import DOCUMENTS, TOPICS, upload

BODIES = {
    "token": lambda w: {"name": "laptop"},
    "share": lambda w: {"teams": ["web-search"]},
    "service_token": lambda w: {"team": "default", "name": "nightly", "scope": "read"},
    "score": lambda w: {"qrels": w.ids["qrels"], "measures": "map"},
    "send": lambda w: {
        "run": w.ids["run"],
        "qrels": w.ids["qrels"],
        "k": 10,
        "campaign": w.ids["campaign"],
    },
    "check": lambda w: {
        "qrels": w.ids["qrels"],
        "layout": "tot",
        "file": upload("theirs.tot", b"bm25/bm25 map 1 0.5\n"),
    },
    "diff_send": lambda w: {
        "a": w.ids["run"],
        "b": w.ids["run"],
        "qrels": w.ids["qrels"],
        "k": 10,
        "qid": "1",
        "campaign": w.ids["campaign"],
    },
    "campaign": lambda w: {
        "name": "Renamed",
        "scale": "0-3",
        "overlap": 1,
        "relevance_threshold": 1,
        "adjudication_rule": "majority",
        "gold_min_accuracy": 0.7,
        **_scale_fields(w.campaign.scale),
    },
    "topics": lambda w: {"file": upload("t.tsv", TOPICS), "format": "tsv"},
    "documents": lambda w: {"file": upload("d.jsonl", DOCUMENTS)},
    "pairs": lambda w: {"file": upload("pairs.txt", b"1 d9\n")},
    "gold": lambda w: {"file": upload("gold.txt", b"1 d1 2\n")},
    "judgments": lambda w: {"file": upload("crowd.csv", b"qid,docno,judge,grade\n1,d1,w1,2\n")},
    "machine_settings": lambda w: {"machine_grades_fill": "on"},
    "gold_pair": lambda w: {"qid": "1", "docno": "d1", "grade": "2"},
    "judges": lambda w: {"action": "add", "judge": w.ids["spare_judge"]},
    "pool": lambda w: {"runs": [w.ids["run"]], "depth": 5},
    "stop_rule": lambda w: {"rule": "adjacent", "confidence": "0.95", "top": "3"},
    "reassign": lambda w: {"from_judge": w.ids["judge"], "to_judge": w.ids["other_judge"]},
    "machine": lambda w: {
        "model_name": "judge-8b",
        "base_url": "https://llm.example.invalid/v1",
        "template_name": "t",
        "template_version": "1",
        "user_prompt": "{query} {passage} {scale}",
        "temperature": 0,
        "max_tokens": 16,
        "concurrency": 1,
        "timeout": 5,
    },
    "machine_run": lambda w: {"scope": "unjudged"},
    "certified_draw": lambda w: {
        "machine": w.ids["machine"],
        "strategy": "stratified",
        "budget": "10%",
    },
    "gate_run": lambda w: {"max_pairs": 10},
    "gate_override": lambda w: {"reason": "The probes do not look like our documents."},
    "search_endpoint": lambda w: {
        "name": "es-new",
        "kind": "elasticsearch",
        "url": "https://search.example.invalid/docs/_search",
        "auth": "none",
        "timeout": 5,
        "max_retries": 0,
        "concurrency": 1,
    },
    "search_edit": lambda w: {
        "name": "world-search",
        "kind": "elasticsearch",
        "url": "https://search.example.invalid/other/_search",
        "auth": "none",
        "timeout": 5,
        "max_retries": 0,
        "concurrency": 2,
    },
    "search_test": lambda w: {"query": "cheap flights"},
    "schedule": lambda w: {
        "name": "nightly",
        "endpoint": w.ids["search_endpoint"],
        "query_set": f"campaign:{w.ids['campaign']}",
        "qrels": w.ids["qrels"],
        "measures": "nDCG@10",
        "k": 10,
        "cron": "0 3 * * *",
        "threshold": "0.02",
        "alert_on_interval": "on",
    },
    "schedule_edit": lambda w: {
        "name": "world schedule",
        "cron": "30 4 * * *",
        "measures": "nDCG@10 P@5",
        "qrels": w.ids["qrels"],
        "threshold": "0.03",
        "alert_on_interval": "on",
    },
    "pause": lambda w: {"paused": "1"},
    # The job starts and fails at the unreachable address (the job's page says why).
    "search_run": lambda w: {"query_set": f"qrels:{w.ids['qrels']}", "k": 10},
    "search_trial": lambda w: {
        "template": '{"query": {"match": {"text": "{{query}}"}}}',
        "versions": ["1"],
        "query_set": f"qrels:{w.ids['qrels']}",
        "measure": "nDCG@10",
        "k": 10,
    },
    "audit": lambda w: {"kind": "threshold", "back": "agreement"},
    "machine_edit": lambda w: {
        "base_url": "https://llm.example.invalid/v1",
        "concurrency": 2,
        "timeout": 5,
        "max_retries": 0,
    },
    "grade": lambda w: {"grade": 3},
    "skip": lambda w: {"reason": "can't judge"},
    "note": lambda w: {"note": "Hard one."},
}


def _scale_fields(scale) -> dict:
    fields = {}
    for item in scale:
        fields[f"label_{item['grade']}"] = item["label"]
        fields[f"definition_{item['grade']}"] = item["definition"]
    return fields
