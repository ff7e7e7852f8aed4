import json

from django.core.management.base import BaseCommand

from annotation.management.lookups import find_campaign
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export
from annotation.services import gold as gold_service
from common.exports import write_csv


class Command(BaseCommand):
    help = (
        "Print each judge of a campaign against its calibration (gold) pairs: accuracy, mean "
        "absolute error, kappa, and who is flagged below the campaign's bars (95% bootstrap "
        f"intervals, {agreement_service.RESAMPLES} resamples seeded with the campaign's seed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "--weights",
            choices=list(agreement_service.WEIGHTS),
            default=agreement_service.DEFAULT_WEIGHTS,
            help="weights of kappa against gold (default: %(default)s)",
        )
        parser.add_argument("--format", choices=["text", "json", "csv"], default="text", dest="fmt")

    def handle(self, *args, campaign, weights, fmt, **options):
        campaign = find_campaign(campaign)
        result = gold_service.campaign_calibration(campaign=campaign, weights=weights)
        if fmt == "json":
            data = agreement_export.calibration_data(result, campaign)
            self.stdout.write(json.dumps(data, indent=2))
        elif fmt == "csv":
            write_csv(self.stdout, *agreement_export.calibration_table(result))
        else:
            self.stdout.write(agreement_export.calibration_text(result, campaign), ending="")
