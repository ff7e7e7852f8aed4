"""The query sandbox in the browser (Quepid's loop): an endpoint's sandbox page (edit the
template and mapping, choose a query set, the qrels and a measure, and start a trial, or
compare saved versions), a trial's page (each arm's mean, the per-query deltas, the run
diff one click away, "save as the next version"), and the versions page (who saved which
when, and a diff of two templates). Leads and engineers of the endpoint's team; a trial is
its starter's while the endpoint is in their teams. The
rules live in evaluation/services/sandbox.py."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.ids import parse_id
from evaluation import dashboards, measures, search
from evaluation.access import visible_endpoints
from evaluation.models import SearchEndpoint
from evaluation.search import sandbox as arithmetic
from evaluation.services import endpoint_runs, sandbox
from evaluation.services.endpoint_versions import versions_of
from evaluation.tasks import start_search_trial
from evaluation.views.common import require_reader

MESSAGES = {
    "started": "Trying it on every topic of the query set; the job shows its progress.",
    "saved": "Saved as version {version} of {name}.",
    "rows_cut": "The {shown:,} largest changes are listed; {more:,} more changed.",
}
ROWS_SHOWN = 200
NOT_FOUND = {"no_campaign", "no_qrels"}


class SandboxForm(forms.Form):
    template = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "class": "code"}),
        required=False,
        strip=False,
        max_length=search.templates.MAX_TEMPLATE_CHARS,
        help_text="Left as the saved version's: no edit (compare the versions ticked below).",
    )
    hits = forms.CharField(max_length=500, required=False, label="Hits (JMESPath)")
    id = forms.CharField(max_length=500, required=False, label="Document id")
    title = forms.CharField(max_length=500, required=False, label="Title")
    text = forms.CharField(max_length=500, required=False, label="Text")
    score = forms.CharField(max_length=500, required=False, label="Score")
    versions = forms.TypedMultipleChoiceField(
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Saved versions to ask (the first is the baseline)",
    )
    query_set = forms.CharField(label="Query set")
    qrels = forms.IntegerField(
        required=False, min_value=1, label="Score against", help_text="A qrels version."
    )
    measure = forms.CharField(max_length=200, initial=sandbox.DEFAULT_MEASURE)
    k = forms.IntegerField(
        min_value=1, max_value=search.MAX_K, initial=sandbox.DEFAULT_K, label="Depth k"
    )

    MAPPING = ("hits", "id", "title", "text", "score")

    def __init__(self, *args, endpoint: SearchEndpoint, **kwargs):
        super().__init__(*args, **kwargs)
        self.endpoint = endpoint
        self.fields["versions"].choices = [
            (v.number, f"v{v.number}") for v in versions_of(endpoint)
        ]

    def clean_query_set(self):
        kind, _, pk = self.cleaned_data["query_set"].partition(":")
        if kind not in ("campaign", "qrels") or parse_id(pk) is None:
            raise ValidationError("Choose a query set.")
        return {"campaign" if kind == "campaign" else "query_qrels": parse_id(pk)}

    def plan_arguments(self) -> dict:
        data = self.cleaned_data
        mapping = {field: data[field] for field in self.MAPPING}
        mapping = mapping if any(mapping.values()) else dict(self.endpoint.mapping)
        template = data["template"]
        # Unchanged, the template is no edit: the ticked versions are compared.
        if template.strip() == self.endpoint.template.strip() and mapping == self.endpoint.mapping:
            template = ""
        return {
            "template": template,
            "mapping": mapping if template else None,
            "versions": data["versions"] or None,
            "qrels": data["qrels"],
            "measure": data["measure"],
            "k": data["k"],
            **data["query_set"],
        }


def _endpoint(request, pk) -> SearchEndpoint:
    """One of the user's teams' endpoints (evaluation/access.py), else 404."""
    return get_object_or_404(visible_endpoints(request.user, SearchEndpoint.objects.all()), pk=pk)


def _initial(endpoint: SearchEndpoint, trial=None) -> dict:
    template = trial.template if trial is not None and trial.template else endpoint.template
    mapping = trial.mapping if trial is not None and trial.template else endpoint.mapping
    initial = {"template": template, **mapping, "versions": [endpoint.version]}
    if trial is not None:
        key = "campaign" if "campaign" in trial.query_set else "qrels"
        initial.update(
            query_set=f"{key}:{trial.query_set[key]}",
            qrels=trial.qrels_id,
            measure=trial.measure,
            k=trial.k,
        )
    return initial


@require_http_methods(["GET", "POST"])
@login_required
def search_sandbox(request, pk):
    """The sandbox: GET shows the form (``?from=TRIAL`` starts from a trial's edit and
    choices); POST checks everything and starts the trial's job."""
    require_reader(request.user)
    endpoint = _endpoint(request, pk)
    status = 200
    if request.method == "POST":
        form = SandboxForm(request.POST, endpoint=endpoint)
        if form.is_valid():
            try:
                plan = sandbox.plan_trial(
                    endpoint=endpoint, user=request.user, **form.plan_arguments()
                )
            except ValidationError as error:
                if error.code in NOT_FOUND:
                    raise Http404(" ".join(error.messages)) from None
                form.add_error(None, error)
            else:
                job = start_search_trial(endpoint=endpoint, user=request.user, plan=plan)
                messages.info(request, MESSAGES["started"])
                return redirect(job)
        status = 400
    else:
        trial = None
        if request.GET.get("from"):
            trial = (
                sandbox.visible_trials(request.user, endpoint)
                .filter(pk=parse_id(request.GET["from"]) or 0)
                .first()
            )
        form = SandboxForm(initial=_initial(endpoint, trial), endpoint=endpoint)
    choices = endpoint_runs.query_set_choices(request.user)
    query_sets = [
        ("Campaigns you lead", [(f"campaign:{pk}", name) for pk, name in choices["campaigns"]]),
        ("Qrels versions' topics", [(f"qrels:{pk}", label) for pk, label in choices["qrels"]]),
    ]
    return render(
        request,
        "evaluation/search_sandbox.html",
        {
            "endpoint": endpoint,
            "form": form,
            "choices": choices,
            "query_sets": [(group, options) for group, options in query_sets if options],
            "chosen_query_set": str(form["query_set"].value() or ""),
            "chosen_qrels": parse_id(str(form["qrels"].value() or "")),
            "measure_menu": dashboards.MEASURE_MENU,
            "trials": sandbox.visible_trials(request.user, endpoint)[:10],
            "max_k": search.MAX_K,
        },
        status=status,
    )


def _scoring(trial) -> dashboards.Scoring:
    return dashboards.Scoring.from_params({"qrels": trial.qrels_id, **trial.result["options"]})


@require_GET
@login_required
def search_trial(request, pk, trial):
    """A trial's numbers: each arm's mean, the per-query deltas of the last arm against
    the first (largest first), the links to the run diff and the comparison, and the form
    that saves the edit as the next version."""
    require_reader(request.user)
    endpoint = _endpoint(request, pk)
    found = get_object_or_404(sandbox.visible_trials(request.user, endpoint), pk=trial)
    name, table = sandbox.table(found, request.GET.get("measure"))
    moved = table.moved()
    runs = [arm["run"] for arm in found.arms]
    base, last = runs[0], runs[-1]
    scoring = _scoring(found)
    links = {}
    if base and last:
        links["diff"] = reverse("evaluation:run-diff") + scoring.query(a=base, b=last, measure=name)
    present = [run for run in runs if run]
    if len(present) >= 2:
        links["compare"] = reverse("evaluation:compare") + scoring.query(
            baseline=present[0], runs=present[1:], measure=name
        )
    arms = [
        {**arm, "mean": mean, "delta": delta}
        for arm, mean, delta in zip(found.arms, table.means, table.mean_deltas(), strict=True)
    ]
    saved_template = endpoint.versions.filter(number=found.base_version).first()
    diff_lines, mapping_changes = [], []
    if found.template and saved_template is not None:
        diff_lines = arithmetic.text_diff(
            saved_template.template,
            found.template,
            old_label=f"v{found.base_version}",
            new_label="edit",
        )
        mapping_changes = arithmetic.mapping_changes(saved_template.mapping, found.mapping)
    rows = moved[:ROWS_SHOWN]
    return render(
        request,
        "evaluation/search_trial.html",
        {
            "endpoint": endpoint,
            "trial": found,
            "measure": name,
            "measure_names": [(n, measures.display_name(n)) for n in found.result["measures"]],
            "arms": arms,
            "counts": table.counts(),
            "rows": rows,
            "rows_cut": (
                MESSAGES["rows_cut"].format(shown=len(rows), more=len(moved) - len(rows))
                if len(moved) > len(rows)
                else ""
            ),
            "unchanged": len(table.rows) - len(moved),
            "judged": len(table.rows),
            "unjudged": table.unjudged,
            "queries": dashboards.topic_queries(request.user, [row.qid for row in rows]),
            "links": links,
            "diff_lines": diff_lines,
            "mapping_changes": mapping_changes,
            "can_save": bool(found.template)
            and found.saved_as is None
            and endpoint.version == found.base_version,
            "note_max": sandbox.NOTE_MAX,
        },
    )


@require_POST
@login_required
def search_trial_save(request, pk, trial):
    """Save the trial's edit as the endpoint's next version; back to the endpoint, or to
    the trial with the reason it was not saved."""
    require_reader(request.user)
    endpoint = _endpoint(request, pk)
    found = get_object_or_404(sandbox.visible_trials(request.user, endpoint), pk=trial)
    try:
        saved = sandbox.save_trial(
            trial=found, user=request.user, note=request.POST.get("note", "")[:1000]
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect(found)
    messages.success(request, MESSAGES["saved"].format(version=saved.version, name=saved.name))
    return redirect(saved)


@require_GET
@login_required
def search_versions(request, pk):
    """The kept versions (newest first) and, with ``?a=&b=``, a diff of two templates."""
    require_reader(request.user)
    endpoint = _endpoint(request, pk)
    versions = versions_of(endpoint)
    by_number = {v.number: v for v in versions}
    a = parse_id(request.GET.get("a", "")) if request.GET.get("a") else None
    b = parse_id(request.GET.get("b", "")) if request.GET.get("b") else None
    context = {"endpoint": endpoint, "versions": versions, "a": a, "b": b}
    status = 200
    if a is not None or b is not None or request.GET.get("a") or request.GET.get("b"):
        if a in by_number and b in by_number:
            old, new = by_number[a], by_number[b]
            context["diff_lines"] = arithmetic.text_diff(
                old.template, new.template, old_label=f"v{a}", new_label=f"v{b}"
            )
            context["mapping_changes"] = arithmetic.mapping_changes(old.mapping, new.mapping)
            context["compared"] = (old, new)
        else:
            context["problem"] = "Choose two versions this endpoint has."
            status = 400
    return render(request, "evaluation/search_versions.html", context, status=status)
