"""Machine (LLM) judges: configuring one (model, endpoint, prompt template and version,
parameters) and choosing the pairs a run asks about. Running one is
annotation/services/machine_runs.py.

A machine judge is an ExternalJudge of kind machine (annotation/services/external.py) with a
MachineJudge configuration. Its grades are ExternalGrade rows recorded through
``external.record_machine_grade`` (one per pair per judge), so they never take a slot of a
pair's overlap; beside each, a MachineAnswer keeps the raw answer, tokens, cost and time, or
the failure and its raw text.

A machine never sees a human grade: its prompt holds the topic, the document and the scale
(annotation/llm/prompts.py), nothing else.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from annotation.llm import (
    DEFAULT_TEMPLATE,
    ChatEndpoint,
    Passage,
    PromptTemplate,
    TemplateError,
    check_template,
    render_messages,
)
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    ExternalGrade,
    ExternalJudge,
    JudgeKind,
    MachineJudge,
    MachineScope,
    Pair,
    Topic,
    lacking_text,
)
from annotation.services import external
from common import outbound
from common.ids import parse_id
from common.secrets import SecretError, seal, unseal

# What a lead may change once a machine judge is made: where it is served, how hard it is
# pushed, and its key.
EDITABLE = (*MachineJudge.ENDPOINT_FIELDS, "api_key")

MESSAGES = {
    "template": "The prompt template cannot be used: {problems}",
    "env_name": "A machine judge reads its key only from an environment variable named "
    "{prefix}<NAME> (capitals, digits and _), which the operator sets for this purpose; "
    "{name!r} is not one.",
    "env_unset": "The environment variable {name} that should hold the API key is not set "
    "on the server.",
    "env_value": "The environment variable {name} holds characters an API key cannot have "
    "(spaces, line breaks or other control characters).",
    "key_chars": "An API key is at most {limit} printable characters without spaces or line "
    "breaks.",
    "concurrency": "Concurrency must be between 1 and {high} (the server's "
    "OUTBOUND_MAX_CONCURRENCY).",
    "retries": "Retries must be between 0 and {high} (the server's OUTBOUND_MAX_RETRIES).",
    "exists": "A machine judge named {name!r} exists with another configuration ({what} "
    "differ{s}). Give this one another name: a new prompt or model is a new machine judge.",
    "imported": "{name!r} is the name of a judge whose grades were imported; choose another.",
    "topic_needed": "Choose the topic to run over.",
    "topic_elsewhere": "Topic {qid} is not in this campaign.",
    "busy": "This machine judge is already running (job {job}); cancel it or wait.",
    "no_text": "the document has no text yet: import its text, then run again",
    "not_a_grade": "{reason}",
    "gave_up": "Stopped after {n} failures in a row at the endpoint; the last: {last}",
    "gave_up_in_flight": (
        "; {n} request(s) already in flight then were recorded too ({failed} failed, "
        "{graded} graded)"
    ),
    "cancelled": "Cancelled after {done:,} of {total:,} pairs: run it again to resume.",
    "cancel_ended": "Cancelled before it started: no pair was asked. Run it again to grade them.",
    "summary": "{graded:,} pair{s} graded, {failed:,} failed{already}{tokens}{cost}.",
    "nothing": "Nothing to do: {judge} has graded every pair of this scope already.",
    "range": "{field} must be between {low} and {high}.",
    "builtin_changed": "{label} is the built-in prompt: a changed prompt needs its own name or "
    "version.",
}

NAME_CLEAN = re.compile(r"[:\s]+")
# The only environment variables a machine judge may read: a lead names one, so any other
# name would let a lead send the server's own secrets (SECRET_KEY, DATABASE_URL) anywhere.
KEY_ENV_PREFIX = "QRELSMITH_LLM_KEY_"
ENV_NAME = re.compile(rf"^{KEY_ENV_PREFIX}[A-Z0-9_]+$")
# An API key travels in a header: printable ASCII without spaces, so it can neither break the
# header nor show up in an error raised by http.client.
API_KEY = re.compile(r"^[\x21-\x7e]+$")
API_KEY_MAX = 500
# Two configurations are the same machine judge when these agree.
SAME_CONFIG = MachineJudge.FIXED_FIELDS
LIMITS = {
    "temperature": (0.0, 2.0),
    "max_tokens": (1, 32768),
    "max_passage_chars": (200, 200_000),
    "timeout": (1.0, 600.0),
}


# --- configuring ---------------------------------------------------------------------------


def default_judge_name(model_name: str, template: PromptTemplate) -> str:
    """``model-template-vN``: colons (``llama3.1:8b``) and spaces become dashes, as a
    judge's name shows as ``machine:name``."""
    name = f"{model_name}-{template.name}-v{template.version}"
    return NAME_CLEAN.sub("-", name).strip("-")[:150]


def create_machine_judge(
    *,
    campaign: Campaign,
    model_name: str,
    base_url: str,
    name: str = "",
    model_version: str = "",
    api_key: str = "",
    api_key_env: str = "",
    template: PromptTemplate = DEFAULT_TEMPLATE,
    temperature: float = 0.0,
    max_tokens: int = 16,
    max_passage_chars: int = 8000,
    concurrency: int = 4,
    timeout: float = 60.0,
    max_retries: int = 4,
    input_price: float | None = None,
    output_price: float | None = None,
    created_by=None,
) -> MachineJudge:
    """A machine judge for ``campaign``. Asking again for the same name with the same model,
    prompt and parameters returns the existing one (its endpoint settings updated); the same
    name with a different configuration is refused, as its grades would be mixed."""
    try:
        check_template(template)
    except TemplateError as error:
        raise ValidationError(
            MESSAGES["template"].format(problems="; ".join(error.problems))
        ) from None
    builtin = (DEFAULT_TEMPLATE.name, DEFAULT_TEMPLATE.version)
    if (template.name, template.version) == builtin and template != DEFAULT_TEMPLATE:
        raise ValidationError(MESSAGES["builtin_changed"].format(label=DEFAULT_TEMPLATE.label))
    api_key = api_key.strip()
    _check_endpoint(base_url, model_name)
    _check_env_name(api_key_env)
    _check_api_key(api_key)
    config = {
        "model_name": model_name.strip(),
        "model_version": model_version.strip(),
        "template_name": template.name,
        "template_version": template.version,
        "system_prompt": template.system,
        "user_prompt": template.user,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "max_passage_chars": max_passage_chars,
    }
    endpoint = {
        "base_url": base_url.strip(),
        "api_key": api_key,
        "api_key_env": api_key_env.strip(),
        "concurrency": concurrency,
        "timeout": timeout,
        "max_retries": max_retries,
        "input_price": input_price,
        "output_price": output_price,
    }
    _check_limits({**config, **endpoint})
    name = external.check_judge_name(name or default_judge_name(model_name, template))
    with transaction.atomic():
        existing = ExternalJudge.objects.filter(campaign=campaign, name=name).first()
        if existing is not None and existing.kind != JudgeKind.MACHINE:
            raise ValidationError(
                external.MESSAGES["name_taken"].format(name=name, kind=existing.kind)
            )
        if existing is not None:
            machine = MachineJudge.objects.filter(judge=existing).first()
            if machine is None:
                raise ValidationError(MESSAGES["imported"].format(name=name))
            different = [f for f, v in config.items() if getattr(machine, f) != v]
            if different:
                raise ValidationError(
                    MESSAGES["exists"].format(
                        name=name,
                        what=", ".join(f.replace("_", " ") for f in different),
                        s="" if len(different) > 1 else "s",
                    )
                )
            return update_machine_judge(machine=machine, **endpoint)
        judge = external.add_external_judge(
            campaign=campaign,
            name=name,
            kind=JudgeKind.MACHINE,
            description=f"{config['model_name']} with {template.label}",
            created_by=created_by,
        )
        key = endpoint.pop("api_key")
        return MachineJudge.objects.create(
            judge=judge, created_by=created_by, api_key_sealed=seal(key), **config, **endpoint
        )


def update_machine_judge(*, machine: MachineJudge, **changes) -> MachineJudge:
    """Change where a machine judge is served and how hard it is pushed (EDITABLE); its
    model, prompt and parameters never change. An empty ``api_key`` keeps the stored key
    (a form cannot show it back); ``clear_api_key=True`` removes it. A new base URL on
    another scheme, host or port drops the stored key unless the same change gives one: a
    key stored by someone else (an admin) must never follow a base URL a lead chose."""
    unknown = set(changes) - {*EDITABLE, "clear_api_key"}
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
    clear = changes.pop("clear_api_key", False)
    key = (changes.pop("api_key", "") or "").strip()
    if "base_url" in changes:
        changes["base_url"] = (changes["base_url"] or "").strip()
        _check_endpoint(changes["base_url"], machine.model_name)
        if _origin(changes["base_url"]) != _origin(machine.base_url) and not key:
            clear = True
    if "api_key_env" in changes:
        changes["api_key_env"] = (changes["api_key_env"] or "").strip()
        _check_env_name(changes["api_key_env"])
    _check_api_key(key)
    _check_limits(changes)
    if key:
        changes["api_key_sealed"] = seal(key)
    elif clear:
        changes["api_key_sealed"] = ""
    for field, value in changes.items():
        setattr(machine, field, value)
    if changes:
        machine.save(update_fields=list(changes))
    return machine


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def policy() -> outbound.Policy:
    return outbound.policy_from_settings(settings)


def _check_endpoint(base_url: str, model_name: str) -> None:
    try:
        ChatEndpoint(base_url=base_url.strip(), model=model_name, max_retries=0, policy=policy())
    except ValueError as error:
        raise ValidationError(str(error)[:1].upper() + str(error)[1:] + ".") from None


def _check_env_name(name: str) -> None:
    if name and not ENV_NAME.match(name.strip()):
        raise ValidationError(MESSAGES["env_name"].format(name=name, prefix=KEY_ENV_PREFIX))


def allowed_key_env(name: str) -> str:
    """``name`` if a machine judge may read it, else "" (a restore drops what it may not)."""
    return name if name and ENV_NAME.match(name) else ""


def _check_api_key(key: str) -> None:
    if key and (len(key) > API_KEY_MAX or not API_KEY.match(key)):
        raise ValidationError(MESSAGES["key_chars"].format(limit=API_KEY_MAX))


def _check_limits(values: dict) -> None:
    for field, (low, high) in LIMITS.items():
        value = values.get(field)
        if value is not None and not low <= value <= high:
            raise ValidationError(
                MESSAGES["range"].format(
                    field=field.replace("_", " ").capitalize(), low=low, high=high
                )
            )
    concurrency = values.get("concurrency")
    if concurrency is not None and not 1 <= concurrency <= settings.OUTBOUND_MAX_CONCURRENCY:
        raise ValidationError(
            MESSAGES["concurrency"].format(high=settings.OUTBOUND_MAX_CONCURRENCY)
        )
    retries = values.get("max_retries")
    if retries is not None and not 0 <= retries <= settings.OUTBOUND_MAX_RETRIES:
        raise ValidationError(MESSAGES["retries"].format(high=settings.OUTBOUND_MAX_RETRIES))
    for field in ("input_price", "output_price"):
        value = values.get(field)
        if value is not None and value < 0:
            raise ValidationError(MESSAGES["range"].format(field=field, low=0, high="any"))


def template_of(machine: MachineJudge) -> PromptTemplate:
    return PromptTemplate(
        name=machine.template_name,
        version=machine.template_version,
        system=machine.system_prompt,
        user=machine.user_prompt,
    )


def passage_of(pair: Pair) -> Passage:
    """What a machine reads of a pair (its topic and document, select_related)."""
    return Passage(
        query=pair.topic.query,
        description=pair.topic.description,
        narrative=pair.topic.narrative,
        title=pair.document.title,
        text=pair.document.text or pair.document.title,
    )


def pair_messages(pair: Pair, template: PromptTemplate, scale, max_passage_chars: int) -> list:
    """The chat messages a machine judge sends for ``pair``: the one way a run, a
    connection test and the prompt preview make them."""
    return render_messages(template, passage_of(pair), scale, max_passage_chars=max_passage_chars)


PREVIEW_CHOICES = 500  # pairs offered in the preview's list (a chosen one is always shown)


@dataclass(frozen=True)
class PromptPreview:
    pair: Pair | None  # None: the pool has no pair with text yet
    messages: list  # [{"role", "content"}], exactly as sent
    choices: list  # [(pair id, "qid · docno")], the first PREVIEW_CHOICES pairs with text


def prompt_preview(
    *, campaign: Campaign, template: PromptTemplate, max_passage_chars: int, pair_id=None
) -> PromptPreview:
    """The prompt a machine judge with ``template`` sends for the pair ``pair_id`` of the
    campaign's pool (the first pair with text when it names none of them: a missing,
    malformed or foreign id is not an error, the page just shows the first)."""
    with_text = (
        Pair.objects.filter(campaign=campaign)
        .exclude(lacking_text("document__"))
        .select_related("topic", "document")
        .order_by("topic__qid", "document__docno")
    )
    choices = list(with_text[:PREVIEW_CHOICES])
    chosen, wanted = None, parse_id(pair_id)
    if wanted is not None:
        chosen = next((p for p in choices if p.pk == wanted), None)
        if chosen is None:
            chosen = with_text.filter(pk=wanted).first()
            if chosen is not None:
                choices.append(chosen)
    chosen = chosen or (choices[0] if choices else None)
    messages = []
    if chosen is not None:
        messages = pair_messages(chosen, template, campaign.scale, max_passage_chars)
    labels = [(pair.pk, f"{pair.topic.qid} · {pair.document.docno}") for pair in choices]
    return PromptPreview(chosen, messages, labels)


def key_source(machine: MachineJudge) -> str:
    """Where the key comes from, for pages (never the key, nor whether a variable is set)."""
    if machine.api_key_env:
        if not ENV_NAME.match(machine.api_key_env):
            return (
                f"environment variable {machine.api_key_env}, which a machine judge may no "
                f"longer read (rename it {KEY_ENV_PREFIX}<NAME>)"
            )
        return f"environment variable {machine.api_key_env}"
    return "stored (hidden)" if machine.api_key_sealed else "none (the endpoint needs no key)"


def endpoint_for(machine: MachineJudge) -> ChatEndpoint:
    """The endpoint with its key: from the environment variable when one is named (and
    allowed, and set), else the stored key; under the server's outbound policy.
    ValidationError when the key cannot be had."""
    if machine.api_key_env:
        _check_env_name(machine.api_key_env)
        key = os.environ.get(machine.api_key_env, "")
        if not key:
            raise ValidationError(MESSAGES["env_unset"].format(name=machine.api_key_env))
        if not API_KEY.match(key):
            raise ValidationError(MESSAGES["env_value"].format(name=machine.api_key_env))
    else:
        try:
            key = unseal(machine.api_key_sealed)
        except SecretError as error:
            raise ValidationError(str(error)) from None
        if key and not API_KEY.match(key):
            raise ValidationError(MESSAGES["key_chars"].format(limit=API_KEY_MAX))
    outbound_policy = policy()
    try:
        return ChatEndpoint(
            base_url=machine.base_url,
            model=machine.model_name,
            api_key=key,
            timeout=machine.timeout,
            max_retries=min(machine.max_retries, outbound_policy.max_retries),
            backoff_base=getattr(settings, "MACHINE_JUDGE_BACKOFF_SECONDS", 1.0),
            policy=outbound_policy,
        )
    except ValueError as error:
        raise ValidationError(str(error)[:1].upper() + str(error)[1:] + ".") from None


# --- what to grade -------------------------------------------------------------------------


def human_graded() -> Q:
    """Pairs a human has graded: a grade given here, or an outside person's imported one."""
    here = Assignment.objects.filter(
        pair=OuterRef("pk"), status=AssignmentStatus.DONE, judgment__grade__isnull=False
    )
    outside = ExternalGrade.objects.filter(pair=OuterRef("pk"), judge__kind=JudgeKind.OUTSIDE)
    return Q(Exists(here)) | Q(Exists(outside))


def scope_pairs(*, machine: MachineJudge, scope: str, topic: Topic | None = None):
    """The pairs of a scope (the whole pool, one topic, or those no human graded)."""
    pairs = Pair.objects.filter(campaign_id=machine.judge.campaign_id)
    if scope == MachineScope.TOPIC:
        pairs = pairs.filter(topic=topic)
    elif scope == MachineScope.UNJUDGED:
        pairs = pairs.exclude(human_graded())
    return pairs


def pairs_to_grade(*, machine: MachineJudge, scope: str, topic: Topic | None = None):
    """The pairs of the scope this machine judge has not graded yet (failures included)."""
    graded = ExternalGrade.objects.filter(pair=OuterRef("pk"), judge_id=machine.judge_id)
    return scope_pairs(machine=machine, scope=scope, topic=topic).exclude(Exists(graded))
