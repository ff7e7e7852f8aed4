import os

from django.core.wsgi import get_wsgi_application
from django.db import connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.startup import load_urls, refuse_development_secret  # noqa: E402  (needs settings)

refuse_development_secret()
load_urls()
# gunicorn loads this module in its master and forks the workers from it (preload_app,
# config/gunicorn.conf.py): a database connection opened while loading would be shared by
# every worker's process. None is opened today; this keeps it so.
connections.close_all()
