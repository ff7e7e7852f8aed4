import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.llm import DEFAULT_TEMPLATE, PromptTemplate
from annotation.management.lookups import describe, find_campaign
from annotation.models import MachineJudge, MachineScope
from annotation.services import machine_judges, machine_runs


class Progress:
    """Prints the run's progress on one line, as the job's progress bar shows it."""

    def __init__(self, stream):
        self.stream = stream

    def step(self, text, *, done=None, total=None):
        if done is not None and total:
            self.stream.write(f"\r{done:,}/{total:,} {text}".ljust(70))
            self.stream.flush()


class Command(BaseCommand):
    help = (
        "Run a machine (LLM) judge over a campaign's pool, one topic, or the pairs no human has "
        "graded, against an OpenAI-compatible chat-completions endpoint. The judge is made from "
        "--model/--base-url (and the prompt options), or is an existing one (--judge ID). Only "
        "pairs the judge has not graded yet are asked for, so running again resumes and asks "
        "again for the failures. Ctrl-C cancels (the requests in flight are recorded)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("--judge", type=int, help="an existing machine judge's id")
        parser.add_argument("--model", help="the model's name at the endpoint")
        parser.add_argument("--model-version", default="", help="snapshot, quantisation, …")
        parser.add_argument("--base-url", help="e.g. http://127.0.0.1:11434/v1 (Ollama)")
        parser.add_argument(
            "--api-key-env", default="", help="environment variable holding the key"
        )
        parser.add_argument("--name", default="", help="default: model-template-vN")
        parser.add_argument(
            "--template",
            help="a JSON file {name, version, system, user} (default: the built-in template)",
        )
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=16)
        parser.add_argument("--concurrency", type=int, default=4)
        parser.add_argument("--timeout", type=float, default=60.0, help="seconds")
        parser.add_argument("--retries", type=int, default=4)
        parser.add_argument("--input-price", type=float, help="per million prompt tokens")
        parser.add_argument("--output-price", type=float, help="per million completion tokens")
        parser.add_argument(
            "--scope", choices=MachineScope.values, default=MachineScope.POOL, help="default: pool"
        )
        parser.add_argument("--topic", help="the qid, with --scope topic")

    def handle(self, *args, campaign, **options):
        campaign = find_campaign(campaign)
        machine = self._machine(campaign, options)
        topic = None
        if options["scope"] == MachineScope.TOPIC:
            topic = campaign.topics.filter(qid=options["topic"] or "").first()
            if topic is None:
                raise CommandError("--scope topic needs --topic QID of this campaign")
        try:
            run = machine_runs.prepare_run(machine=machine, scope=options["scope"], topic=topic)
        except ValidationError as error:
            raise CommandError(describe(error)) from None
        self.stdout.write(f"{machine.judge.label}: {run.pairs:,} pairs to grade")
        try:
            summary = machine_runs.run_machine_judge(run=run, progress=Progress(self.stdout))
        except KeyboardInterrupt:
            machine_runs.end_interrupted_run(run=run)
            raise CommandError("interrupted: run it again to resume") from None
        except (machine_runs.Cancelled, machine_runs.GaveUp) as stopped:
            raise CommandError(f"\n{stopped}") from None
        except ValidationError as error:
            raise CommandError(describe(error)) from None
        self.stdout.write(f"\n{machine.judge.label}: {summary}")

    def _machine(self, campaign, options) -> MachineJudge:
        if options["judge"] is not None:
            machine = MachineJudge.objects.filter(
                pk=options["judge"], judge__campaign=campaign
            ).first()
            if machine is None:
                raise CommandError(
                    f"campaign {campaign.pk} has no machine judge {options['judge']}"
                )
            return machine
        if not options["model"] or not options["base_url"]:
            raise CommandError("give --judge ID, or --model and --base-url to configure one")
        template = DEFAULT_TEMPLATE
        if options["template"]:
            template = read_template(options["template"])
        try:
            return machine_judges.create_machine_judge(
                campaign=campaign,
                name=options["name"],
                model_name=options["model"],
                model_version=options["model_version"],
                base_url=options["base_url"],
                api_key_env=options["api_key_env"],
                template=template,
                temperature=options["temperature"],
                max_tokens=options["max_tokens"],
                concurrency=options["concurrency"],
                timeout=options["timeout"],
                max_retries=options["retries"],
                input_price=options["input_price"],
                output_price=options["output_price"],
            )
        except ValidationError as error:
            raise CommandError(describe(error)) from None


def read_template(path: str) -> PromptTemplate:
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise CommandError(f"{path}: not JSON ({error})") from None
    keys = {"name", "version", "user"}
    if not isinstance(data, dict) or not keys <= set(data):
        raise CommandError(f"{path}: needs name, version and user (and optionally system)")
    values = [data.get(k, "") for k in ("name", "version", "system", "user")]
    if not all(isinstance(v, str) for v in values):
        raise CommandError(f"{path}: name, version, system and user are texts")
    return PromptTemplate(*values)
