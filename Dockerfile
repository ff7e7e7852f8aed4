# Qrelsmith's production image: slim Python 3.13, non-root, gunicorn, static files collected
# at build. `docker build -t qrelsmith .` (compose.yaml builds it as qrelsmith-web and -worker).
# evaluation/trec/runscan.c (the run-file reader native.py loads) is built where a C compiler
# is, and only the library goes into the image.
FROM python:3.13 AS native
COPY evaluation/trec/runscan.c /build/runscan.c
RUN cc -O2 -shared -fPIC -o /build/_runscan.so /build/runscan.c

FROM python:3.13-slim
LABEL org.opencontainers.image.title="Qrelsmith" \
      org.opencontainers.image.description="Build relevance judgments and measure search quality with them."

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DEBUG=0 \
    STATIC_MANIFEST=1 \
    DATA_DIR=/data \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app
RUN useradd --create-home --uid 10001 app && mkdir -p /data && chown app /data

# The same pinned set `make test` and CI install (pyproject.toml), without the test tools.
COPY pyproject.toml README.md ./
RUN pip install --upgrade pip && pip install .

COPY . .
COPY --from=native /build/_runscan.so evaluation/trec/_runscan.so
# The app's modules as bytecode: PYTHONDONTWRITEBYTECODE keeps Python from writing it at run
# time, so without this every command (evaluate, a worker's start) compiles them again.
RUN python -m compileall -q manage.py accounts annotation common config evaluation jobs
# collectstatic needs a SECRET_KEY to import settings; this one exists only during the build.
RUN SECRET_KEY=build-only python manage.py collectstatic --no-input -v 0

USER app
EXPOSE 8000
VOLUME ["/data"]
# /readyz: database, storage and cache reachable (config/health.py); /healthz: process up.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/readyz', timeout=2)"]
# Same commands as README "Production": migrate, then serve. The worker overrides CMD.
# /metrics sums the gunicorn workers' counters through PROMETHEUS_MULTIPROC_DIR, emptied at start.
# gunicorn's settings (threaded workers, deadlines for slow clients, WEB_WORKERS, WEB_THREADS)
# live in config/gunicorn.conf.py.
ENV PROMETHEUS_MULTIPROC_DIR=/tmp/prometheus
CMD ["sh", "-c", "rm -rf \"$PROMETHEUS_MULTIPROC_DIR\" && mkdir -p \"$PROMETHEUS_MULTIPROC_DIR\" && python manage.py migrate --no-input && exec gunicorn -c config/gunicorn.conf.py config.wsgi"]
