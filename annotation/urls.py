from django.urls import path

from annotation.views import (
    adjudication,
    agreement,
    campaigns,
    external,
    imports,
    judging,
    live,
    machines,
    pool,
    progress,
    trust,
)

app_name = "annotation"

urlpatterns = [
    # Leads: campaigns, imports, the pool, judges and progress (annotation/views/).
    path("", campaigns.campaign_list, name="campaign-list"),
    path("new/", campaigns.campaign_create, name="campaign-create"),
    path("<int:pk>/", campaigns.campaign_detail, name="campaign-detail"),
    path("<int:pk>/edit/", campaigns.campaign_edit, name="campaign-edit"),
    path("<int:pk>/judges/", progress.campaign_judges, name="campaign-judges"),
    path("<int:pk>/topics/import/", imports.topics_import, name="topics-import"),
    path("<int:pk>/documents/import/", imports.documents_import, name="documents-import"),
    path("<int:pk>/pool/", pool.pool_detail, name="pool-detail"),
    path("<int:pk>/pool/runs/", pool.pool_from_runs, name="pool-from-runs"),
    path("<int:pk>/pool/pairs/", imports.pairs_import, name="pairs-import"),
    path("<int:pk>/pool/gold/", pool.pool_gold, name="pool-gold"),
    path("<int:pk>/progress/", progress.progress, name="progress"),
    # Leads: judgments made elsewhere, judges of three kinds (annotation/views/external.py).
    path("<int:pk>/judgments/", external.judgments, name="judgments"),
    path("<int:pk>/judgments/import/", external.judgments_import, name="judgments-import"),
    path("<int:pk>/judgments/settings/", external.machine_settings, name="machine-settings"),
    path("<int:pk>/reassign/", progress.reassign, name="reassign"),
    # Leads: the live leaderboard of the pooled runs (annotation/views/live.py).
    path("<int:pk>/live/", live.live_board, name="live-board"),
    path("<int:pk>/live.csv", live.live_board_csv, name="live-board-csv"),
    path("<int:pk>/stop-rule/", live.stop_rule, name="stop-rule"),
    path("<int:pk>/resume/", live.resume, name="resume"),
    # Leads: agreement and calibration (annotation/views/agreement.py).
    path("<int:pk>/agreement/", agreement.report, name="agreement"),
    path(
        "<int:pk>/agreement/download/<str:fmt>/",
        agreement.download,
        name="agreement-download",
    ),
    path("<int:pk>/calibration/", agreement.calibration, name="calibration"),
    path("<int:pk>/calibration/gold/", agreement.gold_import, name="gold-import"),
    # Leads: disagreements, decisions, publishing qrels, downloads (views/adjudication.py).
    path("<int:pk>/adjudicate/", adjudication.queue, name="adjudication"),
    path("<int:pk>/adjudicate/<int:pair>/", adjudication.pair, name="adjudicate-pair"),
    path("<int:pk>/publish/", adjudication.publish, name="publish"),
    path("<int:pk>/download/<slug:what>/", adjudication.download, name="campaign-download"),
    # Leads: machine (LLM) judges and their runs (annotation/views/machines.py).
    path("<int:pk>/machines/", machines.machine_list, name="machine-list"),
    path("<int:pk>/machines/new/", machines.machine_create, name="machine-create"),
    path("<int:pk>/machines/audit/", machines.machine_audit, name="machine-audit"),
    path("<int:pk>/machines/<int:mid>/", machines.machine_detail, name="machine-judge"),
    path("<int:pk>/machines/<int:mid>/run/", machines.machine_run, name="machine-run"),
    path("<int:pk>/machines/<int:mid>/edit/", machines.machine_edit, name="machine-edit"),
    path("<int:pk>/machines/<int:mid>/test/", machines.machine_test, name="machine-test"),
    path(
        "<int:pk>/machines/<int:mid>/runs/<int:run>/cancel/",
        machines.machine_cancel,
        name="machine-cancel",
    ),
    # Leads: machine judges you can trust (annotation/views/trust.py): the certified
    # leaderboard and its human sample, and each machine judge's gullibility gate.
    path("<int:pk>/certified/", trust.certified_board, name="certified"),
    path("<int:pk>/certified/draw/", trust.certified_draw, name="certified-draw"),
    path("<int:pk>/certified/redraw/", trust.certified_redraw, name="certified-redraw"),
    path("<int:pk>/certified.csv", trust.certified_csv, name="certified-csv"),
    path("<int:pk>/machines/<int:mid>/gate/", trust.machine_gate, name="machine-gate"),
    path("<int:pk>/machines/<int:mid>/gate/run/", trust.machine_gate_run, name="machine-gate-run"),
    path(
        "<int:pk>/machines/<int:mid>/gate/cancel/",
        trust.machine_gate_cancel,
        name="machine-gate-cancel",
    ),
    path(
        "<int:pk>/machines/<int:mid>/gate/override/",
        trust.machine_gate_override,
        name="machine-gate-override",
    ),
    # Judges: grade pairs from the keyboard (annotation/views/judging.py).
    path("<int:pk>/judge/", judging.judge_page, name="judge"),
    path("<int:pk>/judge/<int:assignment>/", judging.pair_fragment, name="judge-pair"),
    path("<int:pk>/judge/<int:assignment>/grade/", judging.grade, name="judge-grade"),
    path("<int:pk>/judge/<int:assignment>/skip/", judging.skip, name="judge-skip"),
    path("<int:pk>/judge/<int:assignment>/undo/", judging.undo, name="judge-undo"),
    path("<int:pk>/judge/<int:assignment>/note/", judging.note, name="judge-note"),
]
