"""Named operations on campaigns, pools, assignments and judgments. Views, the API, commands
and tasks call these; the rules live here (HackSoft style, STYLE.md).

campaigns.py holds the lead's operations (campaigns, pools, who judges what), judging.py the
judge's (grading, skipping, undoing, notes) and the progress leads read.
"""

from annotation.scales import SCALES
from annotation.services.campaigns import (
    CAMPAIGN_FIELDS,
    CampaignChange,
    PoolChange,
    add_judge,
    add_pairs,
    assign_pending,
    clear_gold,
    create_campaign,
    mark_gold,
    pool_depth_of_qrels,
    pool_from_runs,
    reassign,
    record_pooled_runs,
    remove_judge,
    resolve_scale,
    set_gold,
    update_campaign,
)
from annotation.services.common import MESSAGES, SUSPICIOUSLY_FAST_SECONDS
from annotation.services.judging import (
    JudgeProgress,
    judge_progress,
    judge_queue,
    median_times,
    next_open_assignment,
    record_judgment,
    set_note,
    skip_assignment,
    store_judge_medians,
    topic_progress,
    undo_judgment,
)

__all__ = [
    "CAMPAIGN_FIELDS",
    "MESSAGES",
    "SCALES",
    "SUSPICIOUSLY_FAST_SECONDS",
    "CampaignChange",
    "JudgeProgress",
    "PoolChange",
    "add_judge",
    "add_pairs",
    "assign_pending",
    "clear_gold",
    "create_campaign",
    "judge_progress",
    "judge_queue",
    "mark_gold",
    "median_times",
    "next_open_assignment",
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
]
