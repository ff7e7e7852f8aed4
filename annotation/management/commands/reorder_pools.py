from django.core.management.base import BaseCommand

from annotation.management.lookups import find_campaign
from annotation.models import Campaign, PoolOrdering
from annotation.services import ordering


class Command(BaseCommand):
    help = (
        "Recompute the judging order of campaigns with an adaptive pool ordering (bandit, "
        "move-to-front, discriminative) that have POOL_REORDER_EVERY new grades since their "
        "last order; run it on a timer (cron, a systemd timer) beside the task worker. "
        "Random-order campaigns are left as they are."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaigns", type=int, nargs="*", help="campaign ids (default: all)")
        parser.add_argument(
            "--force", action="store_true", help="recompute even without new grades"
        )

    def handle(self, *args, campaigns, force, **options):
        if campaigns:
            chosen = [find_campaign(pk) for pk in campaigns]
        else:
            chosen = list(
                Campaign.objects.exclude(pool_ordering=PoolOrdering.RANDOM).order_by("pk")
            )
        for campaign in chosen:
            if campaign.pool_ordering == PoolOrdering.RANDOM:
                self.stdout.write(f"{campaign.pk}: random order, nothing to recompute")
            elif force or ordering.reorder_due(campaign):
                moved = ordering.reorder_pool(campaign=campaign)
                self.stdout.write(f"{campaign.pk}: {moved:,} open assignments reordered")
            else:
                self.stdout.write(f"{campaign.pk}: fewer new grades than POOL_REORDER_EVERY")
