"""What only other processes show of logs and metrics: the settings' log formats as a process
starts, and gunicorn's workers summed by /metrics. None of these tests touches the test
database (the gunicorn one migrates one of its own), so they live outside tests/config (whose
tests CI runs once per database, tests/conftest.py ``uses_database``) and run once."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from tests.config.test_observability import TOKEN, sample
from tests.config.test_settings import ROOT, run_django
from tests.s3_server import free_port


def test_json_logs_are_one_object_per_line_with_the_request_id():
    result = run_django(
        "import logging; logging.getLogger('evaluation').warning('scored %s runs', 3)",
        LOG_FORMAT="json",
    )
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stderr.strip().splitlines()[-1])
    assert line["message"] == "scored 3 runs"
    assert (line["level"], line["logger"], line["request_id"]) == ("WARNING", "evaluation", "-")
    assert "time" in line


def test_an_unknown_log_format_stops_start_up():
    result = run_django(LOG_FORMAT="xml")
    assert result.returncode != 0
    assert "LOG_FORMAT='xml': use text or json" in result.stderr


def test_gunicorn_workers_are_summed_in_multiprocess_mode(tmp_path):
    """Two gunicorn workers, each with its own counters: /metrics adds them up."""
    port = free_port()
    data = tmp_path / "data"
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DEBUG")},
        "DEBUG": "0",
        "SECRET_KEY": "metrics-test-" + "k" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "DATA_DIR": str(data),
        "METRICS_TOKEN": TOKEN,
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    server = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
            "--workers", "2", "--control-socket", str(tmp_path / "gunicorn.ctl"),
        ],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120  # two workers importing the app on a busy machine
        while True:
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, server.stderr.read1().decode()
                time.sleep(0.2)
        # Concurrent batches until both workers have served (either may take them all); one
        # batch at least: the health checks above may have reached both workers already.
        sent = 0
        with ThreadPoolExecutor(8) as pool:
            while not sent or (len(list(multiproc.glob("histogram_*.db"))) < 2 and sent < 400):
                statuses = list(
                    pool.map(
                        lambda _: (
                            urllib.request.urlopen(base + "/accounts/login/", timeout=90).status
                        ),
                        range(20),
                    )
                )
                assert statuses == [200] * 20
                sent += 20
        request = urllib.request.Request(
            base + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        text = urllib.request.urlopen(request, timeout=60).read().decode()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert len(list(multiproc.glob("histogram_*.db"))) == 2, "both workers should have served"
    assert (
        sample(
            text,
            "http_request_duration_seconds_count",
            route="accounts/login/",
            method="GET",
            status="200",
        )
        == sent
    )
