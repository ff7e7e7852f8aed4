"""gunicorn's settings for Qrelsmith: the one place they live. The Dockerfile, README
"Production" and the live tests all start the web server as

    gunicorn -c config/gunicorn.conf.py config.wsgi

(options given after it on the command line win, e.g. ``--bind`` or ``--control-socket``).

Threaded workers, so that a slow client holds one thread for seconds rather than a whole
process: with gunicorn's default sync workers, four clients sending a header line every 5 s
stopped a 2-worker server for minutes (issue 27, finding 6). config/gunicorn_worker.py adds
deadlines to reading each request's head and body."""

import os

from config.env import env_int

bind = [os.environ.get("WEB_BIND", "0.0.0.0:8000")]
# Processes (about one per core) and threads in each. Every thread keeps its own database
# connection (DATABASE_CONN_MAX_AGE): a node holds up to WEB_WORKERS x WEB_THREADS.
workers = env_int("WEB_WORKERS", 3)
threads = env_int("WEB_THREADS", 8)
worker_class = "config.gunicorn_worker.DeadlineThreadWorker"
# The app (Django, every view and what they import: config/wsgi.py) is loaded once, in the
# master, and each worker is forked from it: a worker starts, or is replaced after a crash
# or a timeout, at once and sharing the master's memory, instead of spending 1.5-2.5 s of
# CPU importing it all again. The master opens no database connection (config/wsgi.py
# closes any before the first fork). A new release means restarting the master (SIGHUP
# reloads the configuration, not the code).
preload_app = True
# A worker whose main loop is silent this long is restarted. The loop keeps beating while
# its threads serve, so this bounds a hung process, not a long request.
timeout = 120
graceful_timeout = 30
# Idle kept-alive connections wait in the worker's poller (no thread) this long. Longer
# than nginx's upstream keepalive_timeout (deploy/nginx.conf), so nginx never reuses a
# connection gunicorn is closing.
keepalive = 5
accesslog = "-"
