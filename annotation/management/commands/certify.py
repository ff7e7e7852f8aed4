import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import find_campaign
from annotation.models import MachineJudge, SampleStrategy
from annotation.services import certified
from annotation.services import certified_board as boards
from common.commands import user_named


class Command(BaseCommand):
    help = (
        "A campaign's certified leaderboard: each pooled run's mean nDCG@10 estimated from a "
        "machine judge's grades on the pool and the humans' grades on a designed sample, with "
        "its 95%% prediction-powered interval, and the pairs of runs settled after Holm; or "
        "why it cannot be certified yet. With --draw, first draw the human sample (once per "
        "campaign) and send it to the human judges; --redraw draws it again (a new seed unless "
        "--seed; --strategy and --budget as before unless given), refused once a human judged "
        "a sampled pair."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("--draw", action="store_true", help="draw the human sample first")
        parser.add_argument(
            "--redraw", action="store_true", help="draw the sample again (before humans judge it)"
        )
        parser.add_argument("--machine", type=int, help="the machine judge's id (with --draw)")
        parser.add_argument(
            "--strategy",
            choices=SampleStrategy.values,
            help="default: stratified (--draw), the current one's (--redraw)",
        )
        parser.add_argument(
            "--budget",
            help='pairs ("120") or a share of the pool ("10%%"); default: 10%% (--draw), the '
            "current one's (--redraw)",
        )
        parser.add_argument(
            "--seed", type=int, help="default: the campaign's (--draw), a new one (--redraw)"
        )
        parser.add_argument("--user", default="", help="username recorded as who drew it")
        parser.add_argument("--json", action="store_true", help="the API's JSON instead")

    def handle(self, *args, campaign, **options):
        campaign = find_campaign(campaign)
        if options["draw"] and options["redraw"]:
            raise CommandError("--draw or --redraw, not both")
        if options["draw"]:
            self._draw(campaign, options)
        if options["redraw"]:
            try:
                drawn = certified.redraw_sample(
                    campaign=campaign,
                    strategy=options["strategy"],
                    budget=options["budget"],
                    seed=options["seed"],
                    user=user_named(options["user"]),
                )
            except ValidationError as error:
                raise CommandError(f"nothing redrawn: {' '.join(error.messages)}") from None
            self._said(drawn, "redrew")
        board = boards.certified_board(campaign=campaign)
        if options["json"]:
            self.stdout.write(json.dumps(boards.as_dict(board), indent=2))
            return
        self.stdout.write(f"{campaign.name}: {board.message}")
        if board.progress is not None:
            progress = board.progress
            self.stdout.write(
                f"human sample: {progress.graded} of {progress.chosen} graded "
                f"({board.design.strategy}, seed {board.design.seed})"
            )
        if board.certified is None:
            return
        self.stdout.write("run\tndcg_cut_10\tlow\thigh\tmachine_only")
        for r in board.certified.runs:
            self.stdout.write(
                f"{board.label(r.run)}\t{r.estimate:.4f}\t{r.low:.4f}\t{r.high:.4f}"
                f"\t{r.machine_only:.4f}"
            )
        self.stdout.write("a\tb\tdifference\tlow\thigh\tp_holm\tsettled")
        for p in board.certified.pairs:
            self.stdout.write(
                f"{board.label(p.a)}\t{board.label(p.b)}\t{p.difference:.4f}\t{p.low:.4f}"
                f"\t{p.high:.4f}\t{p.p_holm:.4f}\t{'yes' if p.settled_holm else 'no'}"
            )

    def _draw(self, campaign, options):
        if options["machine"] is None:
            raise CommandError("--draw needs --machine (the machine judge's id)")
        machine = (
            MachineJudge.objects.filter(pk=options["machine"], judge__campaign=campaign)
            .select_related("judge")
            .first()
        )
        if machine is None:
            raise CommandError(certified.MESSAGES["machine_elsewhere"])
        user = user_named(options["user"])
        try:
            drawn = certified.draw_sample(
                campaign=campaign,
                machine=machine,
                strategy=options["strategy"] or SampleStrategy.STRATIFIED,
                budget=options["budget"] or "10%",
                seed=options["seed"],
                user=user,
            )
        except ValidationError as error:
            raise CommandError(f"nothing drawn: {' '.join(error.messages)}") from None
        self._said(drawn, "drew")

    def _said(self, drawn, verb: str) -> None:
        design = drawn.design
        self.stderr.write(
            f"{verb} {design.chosen} pairs for the humans ({design.strategy}, seed "
            f"{design.seed}): {drawn.sent} sent, {drawn.assigned} new assignments, "
            f"{drawn.withdrawn} open assignments taken back"
        )
