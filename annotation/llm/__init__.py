"""Machine (LLM) judges, the pure part (no Django): prompt templates, the chat-completions
client, and the strict reading of answers.

    messages = render_messages(DEFAULT_TEMPLATE, passage, campaign_scale)
    completion = ChatClient(ChatEndpoint(base_url=..., model=..., api_key=...)).complete(messages)
    grade = parse_grade(completion.text, grades=[0, 1, 2, 3])  # AnswerError if not a grade

The Django side (judge configurations, the background job, pages, API) is in
annotation/services/machine_judges.py (configuring), machine_runs.py (running) and
annotation/tasks.py.
"""

from .answers import AnswerError, parse_grade
from .client import (
    ChatClient,
    ChatEndpoint,
    Completion,
    CompletionError,
    cost_of,
    map_bounded,
    retry_after_seconds,
)
from .prompts import (
    DEFAULT_MAX_PASSAGE_CHARS,
    DEFAULT_TEMPLATE,
    Passage,
    PromptTemplate,
    TemplateError,
    check_template,
    format_scale,
    render_messages,
)

__all__ = [
    "DEFAULT_MAX_PASSAGE_CHARS",
    "DEFAULT_TEMPLATE",
    "AnswerError",
    "ChatClient",
    "ChatEndpoint",
    "Completion",
    "CompletionError",
    "Passage",
    "PromptTemplate",
    "TemplateError",
    "check_template",
    "cost_of",
    "format_scale",
    "map_bounded",
    "parse_grade",
    "render_messages",
    "retry_after_seconds",
]
