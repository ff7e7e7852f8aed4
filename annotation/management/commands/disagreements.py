import json

from django.core.management.base import BaseCommand

from annotation.management.lookups import find_campaign
from annotation.services import adjudication


class Command(BaseCommand):
    help = (
        "List a campaign's disputed pairs in the order to decide them (straddling the "
        "relevance threshold first, then widest spread): qid, docno, each judge's grade, the "
        "final grade or why there is none."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "--all", dest="include_decided", action="store_true", help="decided ones too"
        )
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="one JSON object per line"
        )

    def handle(self, *args, campaign, include_decided, as_json, **options):
        campaign = find_campaign(campaign)
        states = adjudication.disagreement_queue(
            campaign=campaign, undecided_only=not include_decided
        )
        for s in states:
            grades = {j.username: j.grade for j in s.judgments}
            if as_json:
                self.stdout.write(
                    json.dumps(
                        {
                            "pair": s.pair_id,
                            "qid": s.qid,
                            "docno": s.docno,
                            "grades": grades,
                            "grade": s.grade,
                            "basis": s.basis,
                            "why": s.why,
                            "decision": s.decision.pk if s.decision else None,
                        },
                        ensure_ascii=False,
                    )
                )
            else:
                shown = " ".join(
                    f"{judge}={'skip' if g is None else g}" for judge, g in grades.items()
                )
                final = f"-> {s.grade} ({s.basis})" if s.decided else f"undecided: {s.why}"
                self.stdout.write(f"{s.qid}\t{s.docno}\t{shown}\t{final}")
        if not as_json:
            self.stderr.write(f"{len(states)} pair{'s' if len(states) != 1 else ''}")
