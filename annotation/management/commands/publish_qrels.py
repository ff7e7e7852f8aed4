from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import describe, find_campaign
from annotation.services import adjudication
from common.commands import user_named


class Command(BaseCommand):
    help = (
        "Publish a campaign's final grades (by its rule, leads' decisions and calibration "
        "pairs) as the next version of a qrels name. Undecided pairs stop it unless "
        "--leave-out-undecided; grades equal to the newest version of the name stop it "
        "unless --identical-to names that version."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("--name", default="", help="qrels name (default: the campaign's slug)")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--leave-out-undecided",
            action="store_true",
            help="publish without the pairs that have no final grade yet",
        )
        parser.add_argument(
            "--identical-to",
            type=int,
            metavar="QRELS_ID",
            help="publish even though the grades equal this qrels version (its id, as the "
            "refusal names it), the newest of the name",
        )
        parser.add_argument("--as", dest="username", help="recorded as the publisher")

    def handle(
        self,
        *args,
        campaign,
        name,
        description,
        leave_out_undecided,
        identical_to,
        username,
        **opts,
    ):
        campaign = find_campaign(campaign)
        user = user_named(username)
        try:
            publication = adjudication.publish(
                campaign=campaign,
                user=user,
                name=name,
                description=description,
                leave_out_undecided=leave_out_undecided,
                identical_to=identical_to,
            )
        except adjudication.IdenticalGrades as same:
            raise CommandError(
                f"nothing published: {same.message} To publish it anyway: "
                f"--identical-to {same.latest.pk}"
            ) from None
        except adjudication.PublishBlocked as blocked:
            shown = "\n".join(f"  {s.qid} {s.docno}: {s.why}" for s in blocked.undecided[:20])
            more = len(blocked.undecided) - 20
            raise CommandError(
                f"nothing published: {blocked}\n{shown}"
                + (f"\n  and {more} more" if more > 0 else "")
            ) from None
        except ValidationError as error:
            raise CommandError(f"nothing published: {describe(error)}") from None
        counts = ", ".join(f"{n} {basis}" for basis, n in sorted(publication.counts.items()))
        self.stdout.write(
            f"Published {publication.qrels.label} ({publication.qrels.judgment_count} grades: "
            f"{counts}); sha256 {publication.qrels.checksum}"
        )
