import dataclasses
import json

from django.core.management.base import BaseCommand

from annotation.management.lookups import find_campaign
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export, suggestions
from common.exports import write_csv


class Command(BaseCommand):
    help = (
        "Print a campaign's agreement report: Fleiss' kappa, Krippendorff's alpha, pairwise "
        "Cohen's kappa, per topic and per judge, with 95% bootstrap intervals "
        f"({agreement_service.RESAMPLES} resamples seeded with the campaign's seed). Skipped pairs do not count."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "--weights",
            choices=list(agreement_service.WEIGHTS),
            default=agreement_service.DEFAULT_WEIGHTS,
            help="weights of pairwise kappa (default: %(default)s)",
        )
        parser.add_argument("--format", choices=["text", "json", "csv"], default="text", dest="fmt")
        parser.add_argument(
            "--table",
            choices=list(agreement_export.TABLES),
            default="overall",
            help="the table --format csv prints (default: %(default)s)",
        )

    def handle(self, *args, campaign, weights, fmt, table, **options):
        campaign = find_campaign(campaign)
        result = agreement_service.campaign_agreement(campaign=campaign, weights=weights, wait=True)
        anchoring = result.anchoring
        if fmt == "json":
            data = agreement_export.report_data(result)
            if anchoring is not None:
                data["suggestions"] = dataclasses.asdict(anchoring)
            self.stdout.write(json.dumps(data, indent=2))
        elif fmt == "csv":
            write_csv(self.stdout, *agreement_export.report_table(result, table))
        else:
            self.stdout.write(agreement_export.report_text(result), ending="")
            if anchoring is not None:
                self.stdout.write("\n" + suggestions.anchoring_text(anchoring), ending="")
