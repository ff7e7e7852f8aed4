import json

from django.core.management.base import BaseCommand, CommandError

from evaluation import services
from evaluation.models import QrelsVersion


class Command(BaseCommand):
    help = (
        "What changed from one stored qrels version (OLD) to another (NEW): pairs added, "
        "removed, and whose grade changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("old", help="NAME (latest version) or NAME@VERSION")
        parser.add_argument("new", help="NAME (latest version) or NAME@VERSION")
        parser.add_argument("--json", action="store_true", help="the API's JSON instead of text")

    def handle(self, *args, old, new, **options):
        versions = []
        for label in (old, new):
            try:
                versions.append(services.find_qrels(label))
            except QrelsVersion.DoesNotExist as error:
                raise CommandError(str(error) or f"no qrels {label!r}") from None
        data = services.diff_data(*versions)
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        self.stdout.write(
            f"{data['old']['label']} → {data['new']['label']}: {len(data['added'])} added, "
            f"{len(data['removed'])} removed, {len(data['changed'])} changed, "
            f"{data['unchanged']} unchanged"
        )
        for row in data["added"]:
            self.stdout.write(f"+ {row['qid']} {row['docno']} {row['grade']}")
        for row in data["removed"]:
            self.stdout.write(f"- {row['qid']} {row['docno']} {row['grade']}")
        for row in data["changed"]:
            self.stdout.write(
                f"~ {row['qid']} {row['docno']} {row['old_grade']} -> {row['new_grade']}"
            )
