"""Grade scales. A scale is a list of {grade, label, definition}, grades 0..max in order."""

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
    """Return the scale if it is a list of {grade, label, definition} with grades 0..n in
    order and non-empty labels; raise ValueError naming the problem otherwise."""
    if not isinstance(scale, list) or len(scale) < 2:
        raise ValueError("a scale needs at least two grades")
    for expected, item in enumerate(scale):
        if not isinstance(item, dict) or set(item) != {"grade", "label", "definition"}:
            raise ValueError(f"grade {expected}: needs exactly grade, label and definition")
        if type(item["grade"]) is not int or item["grade"] != expected:  # True is not 1 here
            raise ValueError(
                f"grades must run 0, 1, 2, … in order; found {item['grade']!r} at {expected}"
            )
        if not isinstance(item["label"], str) or not item["label"].strip():
            raise ValueError(f"grade {expected}: the label must be non-empty text")
    return scale
