from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services import demo
from evaluation import collection


class Command(BaseCommand):
    help = (
        "Create the demo: a login per role, and a real test collection (the Python and Django "
        "FAQs, from the documentation Debian installs) as qrels, scored runs of seven rankers, a "
        "campaign to judge and one three simulated judges finished. Makes only what is missing. "
        "README.md, 'The demo'."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--source",
            choices=collection.SOURCES,
            default="auto",
            help="the collection's documentation, as build_collection's --source (default "
            "auto: what is installed, else the small fallback)",
        )
        parser.add_argument(
            "--doc-root",
            default=str(collection.sources.DOC_ROOT),
            help="where the packages install their docs (default %(default)s)",
        )

    def handle(self, *args, source, doc_root, **options):
        try:
            demo.make_demo(source=source, doc_root=Path(doc_root), say=self.stdout.write)
        except collection.SourceMissing as error:
            raise CommandError(str(error)) from None
