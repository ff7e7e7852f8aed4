"""Search endpoints from the command line: list, add, test, run (evaluation/services/search.py).

    manage.py search_endpoint add es-bm25 --kind elasticsearch \\
        --url http://127.0.0.1:9200/docs/_search --key-env QRELSMITH_SEARCH_KEY_ES
    manage.py search_endpoint test es-bm25 "heat pumps"
    manage.py search_endpoint run es-bm25 --qrels 3 --k 100 --user alice
    manage.py search_endpoint try es-bm25 --template edit.json --campaign 2 --qrels 3 --user alice
    manage.py search_endpoint try es-bm25 --versions 1 3 --query-qrels 3 --user alice
    manage.py search_endpoint save es-bm25 TRIAL --user alice --note "title boost"
    manage.py search_endpoint versions es-bm25
    manage.py search_endpoint version-diff es-bm25 1 3
    manage.py search_endpoint add es-web --team web-search --kind opensearch --url ...

An endpoint is named within its team: every action but ``list`` takes ``--team SLUG`` (the
default team otherwise); ``--user`` must be a lead or engineer of that team.

A key is never taken on the command line (it would sit in the shell's history and the
process list): name its environment variable with --key-env, or store it on the page or
through the API.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.services.teams import team_named
from common.commands import user_named
from evaluation import measures, search
from evaluation.models import SearchEndpoint
from evaluation.search import sandbox as arithmetic
from evaluation.services import ImportRejected, sandbox
from evaluation.services import endpoint_runs as runs_service
from evaluation.services import search as service
from evaluation.services.endpoint_versions import versions_of


class Command(BaseCommand):
    help = "List, add, test and run search endpoints (live engines that make runs)."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        commands.add_parser("list", help="the endpoints")
        add = commands.add_parser("add", help="configure an endpoint")
        add.add_argument("name")
        add.add_argument("--kind", required=True, choices=search.KINDS)
        add.add_argument("--url", required=True, help="the search address, without a query")
        add.add_argument("--method", default="", choices=["", "GET", "POST"])
        add.add_argument("--template", default="", help="a file holding the JSON template")
        add.add_argument("--mapping", default="", help="JSON: hits, id, title, text, score")
        add.add_argument("--auth", default="none", choices=search.AUTHS)
        add.add_argument("--auth-header", default="")
        add.add_argument("--key-env", default="", help=f"{service.KEY_ENV_PREFIX}<NAME>")
        add.add_argument("--timeout", type=float, default=10.0)
        add.add_argument("--retries", type=int, default=2)
        add.add_argument("--concurrency", type=int, default=4)
        test = commands.add_parser("test", help="ask one query and print the mapped hits")
        test.add_argument("name")
        test.add_argument("query")
        run = commands.add_parser("run", help="ask every topic of a query set; store a run")
        run.add_argument("name")
        sets = run.add_mutually_exclusive_group(required=True)
        sets.add_argument("--campaign", type=int, help="a campaign's id (led by --user)")
        sets.add_argument("--qrels", type=int, help="a qrels version's id")
        run.add_argument("--k", type=int, default=100, help=f"depth, at most {search.MAX_K}")
        run.add_argument("--user", required=True, help="whose access rules apply")
        run.add_argument("--system", default="")
        run.add_argument("--run-name", default="")
        self._add_sandbox_arguments(commands)
        for action, subparser in commands.choices.items():
            if action != "list":
                subparser.add_argument(
                    "--team", default="", help="the endpoint's team (default: the default team)"
                )

    def _add_sandbox_arguments(self, commands):
        """The query sandbox (evaluation/services/sandbox.py)."""
        trial = commands.add_parser(
            "try", help="a sandbox trial: an edit against the saved version, or versions"
        )
        trial.add_argument("name")
        trial.add_argument("--template", default="", help="a file holding the edited template")
        trial.add_argument("--mapping", default="", help="the edit's mapping, JSON")
        trial.add_argument("--versions", type=int, nargs="+", help="saved versions to ask")
        sets = trial.add_mutually_exclusive_group(required=True)
        sets.add_argument("--campaign", type=int, help="query set: a campaign's id")
        sets.add_argument("--query-qrels", type=int, help="query set: a qrels version's topics")
        trial.add_argument("--qrels", type=int, help="score against (default: --query-qrels)")
        trial.add_argument("--measure", default=sandbox.DEFAULT_MEASURE)
        trial.add_argument("--k", type=int, default=sandbox.DEFAULT_K)
        trial.add_argument("--user", required=True, help="whose access rules apply")
        save = commands.add_parser("save", help="save a trial's edit as the next version")
        save.add_argument("name")
        save.add_argument("trial", type=int)
        save.add_argument("--user", required=True)
        save.add_argument("--note", default="")
        versions = commands.add_parser("versions", help="the endpoint's kept versions")
        versions.add_argument("name")
        diff = commands.add_parser("version-diff", help="two versions' templates, line by line")
        diff.add_argument("name")
        diff.add_argument("a", type=int)
        diff.add_argument("b", type=int)

    def handle(self, *args, action, **options):
        self.team = None
        if action != "list":
            try:
                self.team = team_named(options.pop("team"))
            except ValueError as error:
                raise CommandError(f"--team: {error}") from None
        try:
            getattr(self, f"_{action.replace('-', '_')}")(**options)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None

    def _endpoint(self, name: str) -> SearchEndpoint:
        try:
            return SearchEndpoint.objects.get(name=name, team=self.team)
        except SearchEndpoint.DoesNotExist:
            raise CommandError(f"no search endpoint named {name!r} in {self.team.slug}") from None

    def _list(self, **options):
        for endpoint in SearchEndpoint.objects.select_related("team"):
            self.stdout.write(
                f"{endpoint.name}\t{endpoint.team.slug}\t{endpoint.kind}\tv{endpoint.version}\t"
                f"{endpoint.url}\tkey: {service.key_source(endpoint)}"
            )

    def _add(
        self,
        *,
        name,
        kind,
        url,
        method,
        template,
        mapping,
        auth,
        auth_header,
        key_env,
        timeout,
        retries,
        concurrency,
        **options,
    ):
        text, mapped = _template_and_mapping(template, mapping)
        if mapped is not None and not isinstance(mapped, dict):
            raise CommandError("--mapping must be a JSON object")
        endpoint = service.create_search_endpoint(
            name=name,
            kind=kind,
            url=url,
            method=method,
            template=text,
            mapping=mapped,
            auth=auth,
            auth_header=auth_header,
            api_key_env=key_env,
            timeout=timeout,
            max_retries=retries,
            concurrency=concurrency,
            team=self.team,
        )
        self.stdout.write(
            f"Saved search endpoint {endpoint.name} in {self.team.slug} (id {endpoint.pk})."
        )

    def _test(self, *, name, query, **options):
        check = service.test_connection(endpoint=self._endpoint(name), query=query)
        if not check.ok:
            status = f", HTTP {check.status}" if check.status else ""
            raise CommandError(f"the test failed ({check.kind}{status}): {check.error}")
        self.stdout.write(f"{check.count} hits in {check.seconds:.3f} s for {check.query!r}:")
        for rank, hit in enumerate(check.hits, 1):
            self.stdout.write(f"{rank}\t{hit.docno}\t{hit.score:.4f}\t{hit.title[:80]}")

    def _run(self, *, name, campaign, qrels, k, user, system, run_name, **options):
        endpoint = self._endpoint(name)
        found = user_named(user)
        try:
            made = runs_service.make_search_run(
                endpoint=endpoint,
                user=found,
                k=k,
                campaign=campaign,
                qrels=qrels,
                system=system,
                name=run_name,
                on_progress=lambda done, total: self.stderr.write(
                    f"\rasked {done} of {total}", ending=""
                ),
            )
        except ImportRejected as rejected:
            raise CommandError(str(rejected)) from None
        self.stderr.write("")
        self.stdout.write(f"Stored run {made.run} (id {made.run.pk}). {runs_service.summary(made)}")
        if made.failed_count:
            for query in made.failed:
                self.stderr.write(f"failed: {query['qid']}: {query['error']}")

    # --- the query sandbox ---------------------------------------------------------------

    def _try(
        self,
        *,
        name,
        template,
        mapping,
        versions,
        campaign,
        query_qrels,
        qrels,
        measure,
        k,
        user,
        **options,
    ):
        endpoint = self._endpoint(name)
        text, mapped = _template_and_mapping(template, mapping)
        found = user_named(user)
        plan = sandbox.plan_trial(
            endpoint=endpoint,
            user=found,
            template=text,
            mapping=mapped,
            versions=versions,
            campaign=campaign,
            query_qrels=query_qrels,
            qrels=qrels,
            measure=measure,
            k=k,
        )
        plan.pop("endpoint")
        trial = sandbox.run_trial(
            endpoint=endpoint,
            user=found,
            on_progress=lambda done, total: self.stderr.write(
                f"\rasked {done} of {total}", ending=""
            ),
            **plan,
        )
        self.stderr.write("")
        shown, table = sandbox.table(trial)
        self.stdout.write(
            f"Trial {trial.pk} of {endpoint.name} on {trial.query_set_label}, scored against "
            f"{trial.qrels.label} ({len(table.rows)} judged topics):"
        )
        label = measures.display_name(shown)
        for arm, mean, delta in zip(trial.arms, table.means, table.mean_deltas(), strict=True):
            change = "" if delta is None else f"\t{delta:+.4f}"
            failed = f"\t{arm['failed_count']} failed" if arm["failed_count"] else ""
            self.stdout.write(f"{arm['label']}\t{label} {mean:.4f}{change}{failed}")
        counts = table.counts()
        self.stdout.write(
            f"{trial.arms[-1]['label']} against {trial.arms[0]['label']}: {counts['better']} "
            f"better, {counts['worse']} worse, {counts['same']} the same."
        )
        for row in table.moved()[:20]:
            self.stdout.write(
                f"{row.qid}\t{row.values[0]:.4f}\t{row.values[-1]:.4f}\t{row.last_delta:+.4f}"
            )

    def _save(self, *, name, trial, user, note, **options):
        endpoint = self._endpoint(name)
        found = user_named(user)
        chosen = sandbox.visible_trials(found, endpoint).filter(pk=trial).first()
        if chosen is None:
            raise CommandError(f"no trial {trial} of {endpoint.name} by {user}")
        saved = sandbox.save_trial(trial=chosen, user=found, note=note)
        self.stdout.write(f"Saved trial {chosen.pk} as version {saved.version} of {saved.name}.")

    def _versions(self, *, name, **options):
        for version in versions_of(self._endpoint(name)):
            who = version.created_by.username if version.created_by else "-"
            self.stdout.write(
                f"v{version.number}\t{version.created_at:%Y-%m-%d %H:%M}\t{who}\t{version.note}"
            )

    def _version_diff(self, *, name, a, b, **options):
        endpoint = self._endpoint(name)
        found = {v.number: v for v in endpoint.versions.filter(number__in=[a, b])}
        for number in (a, b):
            if number not in found:
                raise CommandError(f"{endpoint.name} has no version {number}")
        old, new = found[a], found[b]
        marks = {"add": "+", "remove": "-", "context": " ", "hunk": ""}
        for line in arithmetic.text_diff(
            old.template, new.template, old_label=f"v{a}", new_label=f"v{b}"
        ):
            self.stdout.write(marks[line.kind] + line.text)
        for field, before, after in arithmetic.mapping_changes(old.mapping, new.mapping):
            self.stdout.write(f"mapping {field}: {before!r} -> {after!r}")


def _template_and_mapping(template: str, mapping: str) -> tuple[str, dict | None]:
    """--template's file as text (empty: none given) and --mapping's JSON (None: none)."""
    text = ""
    if template:
        path = Path(template)
        if not path.is_file():
            raise CommandError(f"{template}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{template}: not readable as UTF-8 text ({error})") from None
    try:
        mapped = json.loads(mapping) if mapping else None
    except ValueError:
        raise CommandError("--mapping is not JSON") from None
    return text, mapped
