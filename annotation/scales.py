"""Grade scales. A scale is a list of {grade, label, definition}, grades 0..max in order.

The one home of a scale's limits: every way a scale comes in (the campaign form, the API, a
campaign backup) goes through :func:`validate_scale`. At most MAX_GRADES grades (0 to 100, a
percentage or magnitude-estimation scale): every grade is a button on the judging page and a
row and a column of each pair of judges' confusion table, so a scale of 200,000 grades made
the campaign page 16 MB; and the agreement statistics hold positions on the scale in small
integers (annotation.agreement.core).
"""

MAX_GRADES = 101
LABEL_CHARS = 100
DEFINITION_CHARS = 500

MESSAGES = {
    "too_short": "a scale needs at least two grades",
    "too_long": "a scale has at most {limit} grades (0 to {top}); this one has {count:,}",
    "item": "grade {grade}: needs exactly grade, label and definition",
    "order": "grades must run 0, 1, 2, … in order; found {found!r} at {grade}",
    "label": "grade {grade}: the label must be non-empty text of at most {limit} characters",
    "definition": "grade {grade}: the definition must be text of at most {limit} characters",
}

TREC_DL_SCALE = [
    {"grade": 0, "label": "Irrelevant", "definition": "Has nothing to do with the query."},
    {
        "grade": 1,
        "label": "Related",
        "definition": "Seems related to the query but does not answer it.",
    },
    {
        "grade": 2,
        "label": "Highly relevant",
        "definition": "Has some answer for the query, but the answer may be a bit unclear, "
        "or hidden amongst extraneous information.",
    },
    {
        "grade": 3,
        "label": "Perfectly relevant",
        "definition": "Is dedicated to the query and contains the exact answer.",
    },
]

FIVE_POINT_SCALE = [
    {"grade": 0, "label": "Irrelevant", "definition": "Has nothing to do with the query."},
    {"grade": 1, "label": "Marginal", "definition": "Mentions the topic but is of almost no use."},
    {
        "grade": 2,
        "label": "Related",
        "definition": "About the topic but does not answer the query.",
    },
    {
        "grade": 3,
        "label": "Partly answers",
        "definition": "Answers part of the query, or answers it vaguely.",
    },
    {
        "grade": 4,
        "label": "Highly relevant",
        "definition": "Answers the query, with some extraneous material.",
    },
    {
        "grade": 5,
        "label": "Perfect",
        "definition": "Dedicated to the query and contains the exact answer.",
    },
]

SCALES = {"0-3": TREC_DL_SCALE, "0-5": FIVE_POINT_SCALE}


def validate_scale(scale) -> list[dict]:
    """Return the scale if it is a list of 2 to MAX_GRADES {grade, label, definition} with
    grades 0..n in order, non-empty labels of at most LABEL_CHARS characters and definitions of
    at most DEFINITION_CHARS; raise ValueError naming the problem otherwise (the first one: the
    length is checked before any grade, so a huge list costs nothing more)."""
    if not isinstance(scale, list) or len(scale) < 2:
        raise ValueError(MESSAGES["too_short"])
    if len(scale) > MAX_GRADES:
        raise ValueError(
            MESSAGES["too_long"].format(limit=MAX_GRADES, top=MAX_GRADES - 1, count=len(scale))
        )
    for expected, item in enumerate(scale):
        if not isinstance(item, dict) or set(item) != {"grade", "label", "definition"}:
            raise ValueError(MESSAGES["item"].format(grade=expected))
        if type(item["grade"]) is not int or item["grade"] != expected:  # True is not 1 here
            raise ValueError(MESSAGES["order"].format(found=item["grade"], grade=expected))
        label = item["label"]
        if not isinstance(label, str) or not label.strip() or len(label) > LABEL_CHARS:
            raise ValueError(MESSAGES["label"].format(grade=expected, limit=LABEL_CHARS))
        definition = item["definition"]
        if not isinstance(definition, str) or len(definition) > DEFINITION_CHARS:
            raise ValueError(MESSAGES["definition"].format(grade=expected, limit=DEFINITION_CHARS))
    return scale
