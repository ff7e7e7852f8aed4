"""Scheduled evaluations of search endpoints (issue 31, item 5): the cron rules (cron.py), the
drop that raises an alert (drops.py), the webhook's signature and delivery (webhooks.py), all
pure, and the tables (models.py, loaded by evaluation/models.py). The use cases are
evaluation/services/schedules.py (configuring) and schedule_runs.py (the clock's tick, a
firing's run, evaluation and alert)."""
