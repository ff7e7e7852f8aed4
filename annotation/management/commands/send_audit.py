from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import find_campaign
from annotation.models import SENT_BY_HAND, Pair
from annotation.services import audits
from common.commands import user_named


class Command(BaseCommand):
    help = (
        "Send pairs to a campaign's human judges to check its machine judges (an audit): "
        "where machine judges disagree with each other, where a machine's grade straddles the "
        "relevance threshold against the humans on the same topic, or a seeded random sample "
        "of machine-only pairs. All or nothing; the same audit again sends nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "kind", choices=[str(k) for k in SENT_BY_HAND], help="which pairs to send"
        )
        parser.add_argument("--size", type=int, help="the random sample's size")
        parser.add_argument("--seed", type=int, help="the sample's seed (default: the campaign's)")
        parser.add_argument(
            "--dry-run", action="store_true", help="list the pairs it would send; send nothing"
        )
        parser.add_argument("--user", default="", help="username recorded as the sender")

    def handle(self, *args, campaign, kind, **options):
        campaign = find_campaign(campaign)
        user = user_named(options["user"])
        try:
            result = audits.send_audit(
                campaign=campaign,
                kind=kind,
                size=options["size"],
                seed=options["seed"],
                user=user,
                dry_run=options["dry_run"],
            )
        except ValidationError as error:
            raise CommandError(f"nothing sent: {' '.join(error.messages)}") from None
        if result.repeated:
            audit = result.audit
            self.stdout.write(
                f"{campaign.name}: this sample (seed {audit.seed}, {audit.size} pairs) was sent "
                f"on {audit.sent_at:%Y-%m-%d %H:%M} UTC (audit {audit.pk}); nothing new sent"
            )
            return
        names = dict(
            (pk, f"{qid} {docno}")
            for pk, qid, docno in Pair.objects.filter(
                pk__in=[c.pair for c in result.choices]
            ).values_list("pk", "topic__qid", "document__docno")
        )
        for choice in result.choices:
            self.stdout.write(f"{names[choice.pair]}\t{choice.reason}")
        if options["dry_run"]:
            self.stdout.write(f"{campaign.name}: would send {len(result.choices)} pairs (dry run)")
        elif result.audit is None:
            self.stdout.write(f"{campaign.name}: no pair to send for this audit")
        else:
            self.stdout.write(
                f"{campaign.name}: sent {result.sent} pairs to the human judges "
                f"(audit {result.audit.pk}), {result.assigned} new assignments"
            )
