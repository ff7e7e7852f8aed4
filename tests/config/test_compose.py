"""compose.yaml is the production topology on one host (README "Production"): PostgreSQL,
MinIO, Redis, two web nodes behind a load balancer, and a task worker, all app processes
with the same settings. Docker is not run here; these checks read the files it would."""

import ipaddress
import os
import subprocess
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


def test_the_second_node_and_the_worker_start_after_the_first_has_migrated():
    assert SERVICES["web2"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert SERVICES["worker"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert SERVICES["worker"]["command"][-2:] == ["db_worker", "--no-reload"]


LB = SERVICES["lb"]
NGINX = (ROOT / "deploy/nginx.conf").read_text()
MOUNTS = dict(volume.rsplit(":", 1)[0].split(":") for volume in LB["volumes"])


def test_nginx_buffers_requests_so_slow_clients_never_reach_gunicorn():
    assert "proxy_request_buffering on;" in NGINX
    assert "proxy_request_buffering off" not in NGINX
    assert "client_header_timeout 10s;" in NGINX
    assert "client_body_timeout 30s;" in NGINX


def test_nginx_s_body_limit_follows_the_apps_with_a_little_headroom():
    assert "client_max_body_size ${QRELSMITH_MAX_BODY_MB}m;" in NGINX
    assert MOUNTS["./deploy/nginx.conf"] == "/etc/nginx/templates/default.conf.template"
    assert MOUNTS["./deploy/nginx-limits.envsh"] == "/docker-entrypoint.d/10-qrelsmith-limits.envsh"
    assert LB["environment"]["NGINX_ENVSUBST_FILTER"] == "^QRELSMITH_"  # nginx's $vars stay
    # One value for both: the app's limit and what nginx's is computed from.
    assert LB["environment"]["MAX_UPLOAD_MB"] == SERVICES["web"]["environment"]["MAX_UPLOAD_MB"]
    assert SERVICES["web"]["environment"]["MAX_UPLOAD_MB"] == "${MAX_UPLOAD_MB:-512}"
    assert nginx_body_limit() == "513"
    assert nginx_body_limit(MAX_UPLOAD_MB="2048") == "2049"


def nginx_body_limit(**env) -> str:
    """What the nginx image's entrypoint exports from deploy/nginx-limits.envsh."""
    script = ROOT / "deploy/nginx-limits.envsh"
    assert os.access(script, os.X_OK), "the image's entrypoint only sources executable .envsh"
    result = subprocess.run(
        ["sh", "-c", f". {script} && echo $QRELSMITH_MAX_BODY_MB"],
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_the_app_believes_x_forwarded_for_only_from_the_load_balancers_fixed_address():
    address = LB["networks"]["default"]["ipv4_address"]
    [subnet] = [entry["subnet"] for entry in COMPOSE["networks"]["default"]["ipam"]["config"]]
    for name in APP:
        assert SERVICES[name]["environment"]["TRUSTED_PROXIES"] == address
    assert ipaddress.ip_address(address) in ipaddress.ip_network(subnet)
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in NGINX
