from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import describe, find_campaign
from annotation.services import adjudication
from common.commands import user_named


class Command(BaseCommand):
    help = (
        "Record a lead's decision on a pair's final grade, with the reason. Refused if the "
        "pair was decided meanwhile by someone else (pass --replaces with the decision you "
        "mean to replace)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("qid")
        parser.add_argument("docno")
        parser.add_argument("grade", type=int)
        parser.add_argument("--reason", required=True)
        parser.add_argument("--as", dest="username", required=True, help="the deciding lead")
        parser.add_argument(
            "--replaces", type=int, default=None, help="id of the current decision, if any"
        )

    def handle(self, *args, campaign, qid, docno, grade, reason, username, replaces, **opts):
        campaign = find_campaign(campaign)
        lead = user_named(username)
        if not (lead.is_superuser or campaign.lead_id == lead.pk):
            raise CommandError(f"{username} does not lead campaign {campaign.pk}")
        pair = campaign.pairs.filter(topic__qid=qid, document__docno=docno).first()
        if pair is None:
            raise CommandError(f"no pair {qid} {docno} in campaign {campaign.pk}")
        try:
            decision = adjudication.decide_pair(
                campaign=campaign,
                pair_id=pair.pk,
                lead=lead,
                grade=grade,
                reason=reason,
                based_on=replaces,
            )
        except adjudication.DecisionConflict as conflict:
            current = f" (decision {conflict.current.pk})" if conflict.current else ""
            raise CommandError(f"not decided: {conflict}{current}") from None
        except ValidationError as error:
            raise CommandError(f"not decided: {describe(error)}") from None
        self.stdout.write(f"Decision {decision.pk}: {qid} {docno} -> {grade}")
