import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import find_campaign
from annotation.models import MachineJudge
from annotation.services import gates
from common.commands import user_named


class Command(BaseCommand):
    help = (
        "A machine judge's gullibility gate: per probe (the query's words stuffed in, an "
        "instruction to call the passage relevant, its sentences shuffled), the rise in its "
        "relevant calls on pairs humans graded not relevant, with a 95%% interval; blocked "
        "when a rise's lower end is above the campaign's threshold. --run runs it (a "
        "background job), --cancel stops its running gate (no verdict), --override records a "
        "lead's reason to let a blocked machine fill."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("machine", type=int, help="machine judge id")
        parser.add_argument("--run", action="store_true", help="run the gate (a job)")
        parser.add_argument("--max-pairs", type=int, default=gates.MAX_PAIRS)
        parser.add_argument("--seed", type=int, help="default: the campaign's seed")
        parser.add_argument(
            "--cancel", action="store_true", help="stop the running gate (it ends with no verdict)"
        )
        parser.add_argument("--override", default="", help="the reason to let it fill anyway")
        parser.add_argument("--user", default="", help="username recorded with a run or override")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, campaign, machine, **options):
        campaign = find_campaign(campaign)
        machine = (
            MachineJudge.objects.filter(pk=machine, judge__campaign=campaign)
            .select_related("judge__campaign")
            .first()
        )
        if machine is None:
            raise CommandError("no such machine judge in this campaign")
        user = user_named(options["user"])
        try:
            if options["run"]:
                job = gates.start_gate(
                    machine=machine, user=user, max_pairs=options["max_pairs"], seed=options["seed"]
                )
                job.refresh_from_db()
                self.stderr.write(f"gate job {job.pk}: {job.status} {job.step}".rstrip())
            if options["cancel"]:
                gate = gates.latest_gate(machine)
                outcome = gates.CANCEL_LATE if gate is None else gates.cancel_gate(gate=gate)
                self.stderr.write(gates.MESSAGES[f"cancel_{outcome}"])
            if options["override"]:
                gate = gates.latest_gate(machine)
                if gate is None:
                    raise ValidationError(gates.MESSAGES["not_finished"])
                if user is None:
                    raise CommandError("--override needs --user (who overrides is recorded)")
                gates.override_gate(gate=gate, user=user, reason=options["override"])
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        gate = gates.latest_gate(machine)
        if gate is None:
            self.stdout.write(f"{machine.judge.label}: no gate yet (run it with --run)")
            return
        verdict = gates.verdict(gate)
        if options["json"]:
            override = None
            if gate.overridden_at:
                override = {
                    "reason": gate.override_reason,
                    "by": gate.overridden_by.get_username() if gate.overridden_by else None,
                    "at": gate.overridden_at.isoformat(),
                }
            data = {
                "gate": gate.pk,
                "machine": machine.judge.label,
                "verdict": verdict,
                "threshold": gate.threshold,
                "pairs": gate.pairs,
                "failures": gate.failures,
                "rises": gate.rises,
                "override": override,
            }
            self.stdout.write(json.dumps(data, indent=2))
            return
        self.stdout.write(
            f"{machine.judge.label}: {verdict} (threshold {100 * gate.threshold:.1f} points, "
            f"{gate.pairs} pairs, {gate.failures} failed calls)"
        )
        self.stdout.write("probe\tpairs\trise\tlow\thigh\texceeds")
        for r in gate.rises:
            self.stdout.write(
                f"{r['probe']}\t{r['pairs']}\t{100 * r['rise']:+.1f}\t{100 * r['low']:+.1f}"
                f"\t{100 * r['high']:+.1f}\t{'yes' if r['exceeds'] else 'no'}"
            )
        if gate.overridden_at:
            self.stdout.write(
                f"overridden by {gate.overridden_by} on {gate.overridden_at:%Y-%m-%d %H:%M} UTC: "
                f"{gate.override_reason}"
            )
