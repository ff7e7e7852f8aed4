"""The evaluation pages (HackSoft style, STYLE.md: views translate the request and call
evaluation.services and evaluation.dashboards).

runs.py holds the home page and the runs (list, a run's page, its topics' CSV, download),
qrels.py the qrels versions, upload.py the run upload and its jobs, dashboards.py the
leaderboard, topics, comparisons and sending unjudged documents, diff.py the run diff,
leaderboard_io.py the leaderboard downloads and checks; common.py what they share.
"""
