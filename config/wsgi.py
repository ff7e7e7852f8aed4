import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.startup import load_urls, refuse_development_secret  # noqa: E402  (needs settings)

refuse_development_secret()
load_urls()
