"""Named operations on campaigns, pools, assignments and judgments. Views, the API, commands
and tasks call these; the rules live here (HackSoft style, STYLE.md).

campaigns.py holds the lead's operations on campaigns and pools, assignments.py who judges
what, gold.py the gold (calibration) pairs, judging.py the judge's (grading, skipping,
undoing, notes), progress.py the progress leads read.
"""

from annotation.scales import SCALES
from annotation.services.assignments import (
    add_judge,
    assign_pending,
    assignments_due,
    open_work,
    reassign,
    remove_judge,
)
from annotation.services.campaigns import (
    CAMPAIGN_FIELDS,
    CampaignChange,
    PoolChange,
    add_pairs,
    add_pairs_in_batches,
    create_campaign,
    overlap_warning,
    pool_depth_of_qrels,
    pool_from_runs,
    record_pooled_runs,
    resolve_scale,
    update_campaign,
    update_writes,
)
from annotation.services.common import MESSAGES, SUSPICIOUSLY_FAST_SECONDS
from annotation.services.gold import clear_gold, mark_gold, set_gold
from annotation.services.judging import (
    WAITING_FOR_TEXT,
    judge_assignments,
    judge_queue,
    next_open_assignment,
    record_judgment,
    set_note,
    skip_assignment,
    undo_judgment,
    waiting_for_text,
)
from annotation.services.progress import (
    JudgeProgress,
    judge_progress,
    median_times,
    store_judge_medians,
    topic_progress,
)

__all__ = [
    "CAMPAIGN_FIELDS",
    "MESSAGES",
    "SCALES",
    "SUSPICIOUSLY_FAST_SECONDS",
    "WAITING_FOR_TEXT",
    "CampaignChange",
    "JudgeProgress",
    "PoolChange",
    "add_judge",
    "add_pairs",
    "add_pairs_in_batches",
    "assign_pending",
    "assignments_due",
    "clear_gold",
    "create_campaign",
    "judge_assignments",
    "judge_progress",
    "judge_queue",
    "mark_gold",
    "median_times",
    "next_open_assignment",
    "open_work",
    "overlap_warning",
    "pool_depth_of_qrels",
    "pool_from_runs",
    "reassign",
    "record_judgment",
    "record_pooled_runs",
    "remove_judge",
    "resolve_scale",
    "set_gold",
    "set_note",
    "skip_assignment",
    "store_judge_medians",
    "topic_progress",
    "undo_judgment",
    "update_campaign",
    "update_writes",
    "waiting_for_text",
]
