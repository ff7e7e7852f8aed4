"""compose.yaml is the production topology on one host (README "Production"): PostgreSQL,
MinIO, Redis, two web nodes behind a load balancer, and a task worker, all app processes
with the same settings. Docker is not run here; these checks read the files it would."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
APP = ("web", "web2", "worker")


def test_the_topology_has_every_part():
    assert {"db", "minio", "bucket", "redis", "web", "web2", "lb", "worker"} <= set(SERVICES)


def test_every_app_process_has_the_same_settings_and_shares_state_outside_itself():
    settings = [SERVICES[name]["environment"] for name in APP]
    assert settings[0] == settings[1] == settings[2]
    env = settings[0]
    for shared in ("DATABASE_URL", "S3_BUCKET", "REDIS_URL", "TASKS_BACKEND"):
        assert env[shared], shared


def test_only_the_load_balancer_is_published_and_it_sends_to_both_nodes():
    assert [name for name, service in SERVICES.items() if service.get("ports")] == ["lb"]
    mount = SERVICES["lb"]["volumes"][0].split(":")
    config = (ROOT / mount[0]).read_text()
    assert "server web:8000" in config and "server web2:8000" in config
    assert "client_max_body_size 0;" in config  # the app's MAX_UPLOAD_MB is the limit


def test_the_second_node_and_the_worker_start_after_the_first_has_migrated():
    assert SERVICES["web2"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert SERVICES["worker"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert SERVICES["worker"]["command"][-2:] == ["db_worker", "--no-reload"]
