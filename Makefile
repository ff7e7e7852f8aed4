# The two commands a fresh machine needs: `make run` and `make test`. See README.md.
SHELL := /bin/bash
PY := .venv/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Python writes the bytecode of what it imports (into .venv and the checkout, both ours) even
# where the environment says not to (PYTHONDONTWRITEBYTECODE, set in CI and containers): the
# packages are installed without it (scripts/setup), and every process would otherwise
# compile what it imports again, about a second of each.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: run test setup chromium lint format bench bench-load bench-dashboards bench-mixed bench-cluster bench-leads bench-judging-cost bench-machine-trust bench-search-qps worker

setup:
	@scripts/setup

## Set everything up, load demo data and start the app on the embedded default (SQLite).
## Background work (imports, scoring, pools) goes through the database queue to a task
## worker started beside the server, so a page shows its live progress instead of waiting
## for the work; the trap stops the worker with the server (Ctrl-C) or if the server fails.
## DEBUG is off, as in production, so errors show the product's own pages (`make run
## DEBUG=1` for Django's debug pages); the rest of production's defaults that plain http on
## loopback cannot keep are turned off here only: the https redirect, https-only cookies,
## HSTS, and the development secret (a key of this checkout's own, scripts/local-secret).
## Static files are collected for WhiteNoise, which serves them as in production.
run: export DEBUG ?= 0
run: export ALLOWED_HOSTS ?= $(HOST),localhost,127.0.0.1,[::1]
run: export SECURE_SSL_REDIRECT ?= 0
run: export SECURE_COOKIES ?= 0
run: export SECURE_HSTS_SECONDS ?= 0
run: export SECRET_KEY ?= $(shell scripts/local-secret)
run: export TASKS_BACKEND ?= django_tasks_db.DatabaseBackend
run: setup
	@$(PY) manage.py demo
	@$(PY) manage.py collectstatic --no-input -v 0
	@echo "Qrelsmith: http://$(HOST):$(PORT)/  (Ctrl-C stops it)"
	@trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT; \
	$(PY) manage.py db_worker --no-reload --no-startup-delay --interval 0.2 -v 0 & worker=$$!; \
	$(PY) manage.py runserver $(HOST):$(PORT)

## Set everything up (Chromium for the browser tests too; the database is the tests' own, so
## it is not migrated) and run the whole test suite.
test: chromium
	@scripts/setup --no-migrate
	@$(PY) -m ruff check .
	@$(PY) -m ruff format --check .
	@$(PY) -m pytest $(PYTEST_ARGS)

## Debian's Chromium, axe-core (npm) for the browser tests, oidc-provider (npm), the OpenID
## Connect provider the single sign-on tests run on loopback, and Debian's xapian-omega, the
## real search engine the search endpoints are tested and benchmarked against.
chromium:
	@scripts/ensure-chromium
	@scripts/ensure-axe
	@scripts/ensure-oidc-provider
	@scripts/ensure-omega

lint:
	@$(PY) -m ruff check . && $(PY) -m ruff format --check .

format:
	@$(PY) -m ruff format . && $(PY) -m ruff check --fix .

## Benchmarks against the reference tools (see bench/README.md).
bench: setup
	@$(PY) bench/evaluate_bench.py $(BENCH_ARGS)

## Judging under load: gunicorn + PostgreSQL on loopback, simulated judges (bench/judging_load.py).
bench-load: setup
	@$(PY) bench/judging_load.py $(BENCH_ARGS)

## Dashboards under production: gunicorn + PostgreSQL + a task worker (bench/dashboard_bench.py).
bench-dashboards: setup
	@$(PY) bench/dashboard_bench.py $(BENCH_ARGS)

## Judges, engineers uploading and dashboard readers at once (bench/mixed_load.py).
bench-mixed: setup
	@$(PY) bench/mixed_load.py $(BENCH_ARGS)

## Two web nodes and two task workers on one PostgreSQL, S3 (moto) and Redis, while a worker
## is killed and a node stopped; scaling from one node to two (bench/cluster_load.py).
bench-cluster: setup
	@$(PY) bench/cluster_load.py $(BENCH_ARGS)

## Lead pages of a 60,000-judgment campaign on SQLite and PostgreSQL (bench/leads_bench.py).
bench-leads: setup
	@$(PY) bench/leads_bench.py $(BENCH_ARGS)

## Judgments each pool-ordering strategy needs before the ranking settles (bench/judging_cost.py).
bench-judging-cost: setup
	@$(PY) bench/judging_cost.py $(BENCH_ARGS)

## A task worker for production-style background work (TASKS_BACKEND=django_tasks_db.DatabaseBackend).
worker: setup
	@$(PY) manage.py db_worker --no-reload

## Certified means and the gullibility gate on simulated collections (bench/machine_trust.py).
bench-machine-trust: setup
	@$(PY) bench/machine_trust.py $(BENCH_ARGS)

## Queries per second against Xapian Omega, 8 in flight: the product's search client against
## plain httpx (bench/search_qps.py; skipped, saying so, without xapian-omega).
bench-search-qps: setup
	@$(PY) bench/search_qps.py $(BENCH_ARGS)
