from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import describe, find_campaign
from annotation.services import campaign_files
from evaluation.models import Run
from evaluation.services import find_run


class Command(BaseCommand):
    help = (
        "Build a campaign's pool by depth-k pooling of stored runs (per topic, the union of "
        "each run's top k) and assign the new pairs to its judges."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("runs", nargs="+", help="stored runs as SYSTEM/RUN (or a unique RUN)")
        parser.add_argument("--depth", type=int, default=10, help="k (default 10)")

    def handle(self, *args, campaign, runs, depth, **options):
        campaign = find_campaign(campaign)
        if depth < 1:
            raise CommandError(f"--depth must be at least 1, got {depth}")
        found, missing = [], []
        for label in dict.fromkeys(runs):  # a run named twice is pooled once
            try:
                found.append(find_run(label))
            except Run.DoesNotExist as error:
                # find_run explains ambiguous or unknown names; a SYSTEM/RUN lookup that
                # finds nothing raises the ORM's generic message instead.
                message = str(error)
                if "/" in label or not message or "matching query" in message:
                    message = f"no stored run {label!r}"
                missing.append(message)
        if missing:
            raise CommandError("nothing pooled:\n" + "\n".join(missing))
        try:
            change = campaign_files.pool_stored_runs(campaign=campaign, runs=found, depth=depth)
        except ValidationError as error:
            raise CommandError(f"nothing pooled:\n{describe(error)}") from None
        self.stdout.write(
            f"{campaign.name}: pooled {len(found)} run{'s' if len(found) != 1 else ''} at depth "
            f"{depth}. {campaign_files.pool_summary(change)}"
        )
