"""Search endpoints in the browser: the list with a form for a new one, an endpoint's page
(its settings, a "test connection" that asks one query and shows the mapped hits or the
exact error, a form that makes a run from a query set, and the runs made). Leads and
engineers; the rules live in evaluation/services/search.py."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.services.teams import choose_team, teams_of
from evaluation import forms, tasks
from evaluation.access import READERS, visible_endpoints
from evaluation.models import SearchEndpoint, SearchRun
from evaluation.services import endpoint_runs as runs_service
from evaluation.services import search as service
from evaluation.views.common import require_reader

MESSAGES = {
    "created": "Endpoint {name} saved. Test it with a query below.",
    "changed": "Endpoint {name} changed (version {version}).",
    "started": "Asking {name} every topic of the query set; the job shows its progress.",
}


def _endpoint_form(endpoint: SearchEndpoint | None = None, data=None):
    if endpoint is None:
        initial = {"kind": "elasticsearch", "auth": "none", **_kind_initial("elasticsearch")}
    else:
        initial = {
            "name": endpoint.name,
            "kind": endpoint.kind,
            "url": endpoint.url,
            "method": endpoint.method,
            "template": endpoint.template,
            **endpoint.mapping,
            "auth": endpoint.auth,
            "auth_header": endpoint.auth_header,
            "api_key_env": endpoint.api_key_env,
            "timeout": endpoint.timeout,
            "max_retries": endpoint.max_retries,
            "concurrency": endpoint.concurrency,
        }
    return forms.SearchEndpointForm(data, initial=initial)


def _kind_initial(kind: str) -> dict:
    start = service.defaults_for(kind)
    return {"template": start["template"], **start["mapping"]}


@require_GET
@login_required
def search_list(request):
    require_reader(request.user)
    return render(
        request,
        "evaluation/search_list.html",
        {
            "endpoints": _endpoints(request),
            "form": _endpoint_form(),
            "defaults": _defaults(),
            **_team_choices(request),
        },
    )


def _endpoints(request):
    """The endpoints of the user's teams (evaluation/access.py)."""
    endpoints = SearchEndpoint.objects.select_related("created_by", "team")
    return visible_endpoints(request.user, endpoints)


def _endpoint_for(request, pk) -> SearchEndpoint:
    """One of the user's teams' endpoints, else 404."""
    return get_object_or_404(_endpoints(request), pk=pk)


def _team_choices(request, errors=None) -> dict:
    """The team picker of a new endpoint (templates/accounts/_team_picker.html)."""
    return {
        "teams": list(teams_of(request.user, *READERS)),
        "team_value": request.POST.get("team", ""),
        "team_errors": errors,
    }


def _defaults() -> dict:
    return {kind: service.defaults_for(kind) for kind in service.search.KINDS}


@require_POST
@login_required
def search_new(request):
    require_reader(request.user)
    form = _endpoint_form(data=request.POST)
    if form.is_valid():
        values = form.values()
        values.pop("clear_api_key")
        try:
            team = choose_team(request.user, request.POST.get("team"), *READERS)
            endpoint = service.create_search_endpoint(**values, created_by=request.user, team=team)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, MESSAGES["created"].format(name=endpoint.name))
            return redirect(endpoint)
    return render(
        request,
        "evaluation/search_list.html",
        {
            "endpoints": _endpoints(request),
            "form": form,
            "defaults": _defaults(),
            **_team_choices(request),
        },
        status=400,
    )


def _render_endpoint(request, endpoint, *, form=None, check=None, run_form=None, status=200):
    runs = SearchRun.objects.filter(endpoint=endpoint, trial=False).select_related("run__system")[
        :50
    ]
    return render(
        request,
        "evaluation/search_endpoint.html",
        {
            "endpoint": endpoint,
            "key_source": service.key_source(endpoint),
            "form": form or _endpoint_form(endpoint),
            "check": check,
            "test_query": check.query if check else "",
            "run_form": run_form or forms.SearchRunForm(),
            "choices": runs_service.query_set_choices(request.user),
            "runs": runs,
            "max_k": service.search.MAX_K,
        },
        status=status,
    )


@require_GET
@login_required
def search_endpoint(request, pk):
    require_reader(request.user)
    return _render_endpoint(request, _endpoint_for(request, pk))


@require_POST
@login_required
def search_edit(request, pk):
    require_reader(request.user)
    endpoint = _endpoint_for(request, pk)
    form = _endpoint_form(endpoint, data=request.POST)
    if form.is_valid():
        values = form.values()
        # Empty means the kind's start, as on creation (the mapping: when the kind changed).
        start = service.defaults_for(values["kind"])
        if not values["template"].strip():
            values["template"] = start["template"]
        if values["mapping"] is None:
            if values["kind"] == endpoint.kind:
                values.pop("mapping")
            else:
                values["mapping"] = start["mapping"]
        if not values["method"]:
            values["method"] = start["method"]
        try:
            service.update_search_endpoint(endpoint=endpoint, by=request.user, **values)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request, MESSAGES["changed"].format(name=endpoint.name, version=endpoint.version)
            )
            return redirect(endpoint)
    endpoint.refresh_from_db()
    return _render_endpoint(request, endpoint, form=form, status=400)


@require_http_methods(["GET", "POST"])
@login_required
def search_test(request, pk):
    """One query, shown on the endpoint's page: the mapped hits or the exact error. Nothing
    is stored. A GET (the page reloaded) goes back to the endpoint's page."""
    require_reader(request.user)
    endpoint = _endpoint_for(request, pk)
    if request.method == "GET":
        return redirect(endpoint)
    query = request.POST.get("query", "")[:10_000]
    check = service.test_connection(endpoint=endpoint, query=query)
    return _render_endpoint(request, endpoint, check=check)


@require_POST
@login_required
def search_run(request, pk):
    """Start the job that asks every topic of the chosen query set; on to the job's page."""
    require_reader(request.user)
    endpoint = _endpoint_for(request, pk)
    form = forms.SearchRunForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            runs_service.load_query_set(user=request.user, **data["query_set"])
        except ValidationError as error:
            form.add_error("query_set", error)
        else:
            job = tasks.start_search_run(
                endpoint=endpoint,
                user=request.user,
                k=data["k"],
                system=data["system"],
                name=data["name"],
                **data["query_set"],
            )
            messages.info(request, MESSAGES["started"].format(name=endpoint.name))
            return redirect(job)
    return _render_endpoint(request, endpoint, run_form=form, status=400)
