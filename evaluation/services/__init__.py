"""Named operations on qrels, runs and evaluations. Views, API endpoints, commands and tasks
translate their input and call these; the rules live here (HackSoft style, STYLE.md).

qrels.py holds the qrels versions (import, store, read, diff), runs.py the runs (import,
read, find, sweep what a killed import left), scoring.py the evaluations and their
intervals, fairness.py the leave-one-run-out test of a qrels version's pool, unjudged.py the unjudged documents of runs' top k and sending them to judging.
Imports are all-or-nothing: a file is parsed and validated completely before anything is
written, and if writing fails half-way the rows roll back and the stored files are deleted.
"""

from evaluation.services.common import MESSAGES, ImportRejected, read_upload, sha256_of
from evaluation.services.fairness import (
    StoredFairness,
    compute_pool_fairness,
    find_pool_fairness,
    pool_depth,
)
from evaluation.services.qrels import (
    QrelsDiff,
    cached_qrels_frame,
    diff_data,
    diff_qrels,
    find_qrels,
    import_qrels,
    load_qrels_frame,
    qrels_checksum,
    qrels_to_trec_bytes,
    share_qrels,
    store_qrels,
)
from evaluation.services.run_files import sweep_orphan_run_files
from evaluation.services.runs import (
    find_run,
    import_run,
    load_run_frame,
    load_run_top,
    load_run_topics,
    search_runs,
    store_top_lists,
)
from evaluation.services.scoring import (
    DASHBOARD_MEASURES,
    ENGINE_VERSION,
    describe_intervals,
    ensure_intervals,
    evaluate_run,
    mean_measures,
    options_key,
    score_run,
    topic_matrix,
)
from evaluation.services.unjudged import (
    SentToJudging,
    send_unjudged_to_judging,
    unjudged_top_k,
)

__all__ = [
    "DASHBOARD_MEASURES",
    "ENGINE_VERSION",
    "MESSAGES",
    "ImportRejected",
    "QrelsDiff",
    "SentToJudging",
    "StoredFairness",
    "cached_qrels_frame",
    "compute_pool_fairness",
    "describe_intervals",
    "diff_data",
    "diff_qrels",
    "ensure_intervals",
    "evaluate_run",
    "find_pool_fairness",
    "find_qrels",
    "find_run",
    "import_qrels",
    "import_run",
    "load_qrels_frame",
    "load_run_frame",
    "load_run_top",
    "load_run_topics",
    "mean_measures",
    "options_key",
    "pool_depth",
    "qrels_checksum",
    "qrels_to_trec_bytes",
    "read_upload",
    "score_run",
    "search_runs",
    "send_unjudged_to_judging",
    "sha256_of",
    "share_qrels",
    "store_qrels",
    "store_top_lists",
    "sweep_orphan_run_files",
    "topic_matrix",
    "unjudged_top_k",
]
