"""annotation/scales.py: the one home of a scale's limits (issue 27, finding 9)."""

import pytest

from annotation.scales import (
    DEFINITION_CHARS,
    LABEL_CHARS,
    MAX_GRADES,
    MESSAGES,
    SCALES,
    validate_scale,
)


def scale_of(n: int, *, label: str = "g", definition: str = "") -> list[dict]:
    return [{"grade": g, "label": f"{label}{g}", "definition": definition} for g in range(n)]


def test_the_presets_are_valid_scales():
    for scale in SCALES.values():
        assert validate_scale([dict(item) for item in scale]) == scale


def test_the_largest_allowed_scale_is_accepted():
    scale = scale_of(MAX_GRADES)

    assert validate_scale(scale) is scale
    assert scale[-1]["grade"] == 100


@pytest.mark.parametrize("count", [MAX_GRADES + 1, 200, 200_000])
def test_a_scale_with_more_grades_than_the_cap_is_refused_with_its_size(count):
    with pytest.raises(ValueError) as refused:
        validate_scale(scale_of(count))

    assert str(refused.value) == MESSAGES["too_long"].format(
        limit=MAX_GRADES, top=MAX_GRADES - 1, count=count
    )
    assert f"at most {MAX_GRADES} grades (0 to 100)" in str(refused.value)


def test_the_size_is_checked_before_any_grade():
    # 200,000 items that are not even grades: the first thing said is the size.
    with pytest.raises(ValueError, match="at most 101 grades"):
        validate_scale([None] * 200_000)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"grade": 1, "label": "x" * (LABEL_CHARS + 1), "definition": ""},
            MESSAGES["label"].format(grade=1, limit=LABEL_CHARS),
        ),
        (
            {"grade": 1, "label": "Yes", "definition": "x" * (DEFINITION_CHARS + 1)},
            MESSAGES["definition"].format(grade=1, limit=DEFINITION_CHARS),
        ),
        (
            {"grade": 1, "label": "Yes", "definition": None},
            MESSAGES["definition"].format(grade=1, limit=DEFINITION_CHARS),
        ),
    ],
    ids=["long label", "long definition", "definition not text"],
)
def test_labels_and_definitions_are_capped(item, message):
    with pytest.raises(ValueError) as refused:
        validate_scale([{"grade": 0, "label": "No", "definition": ""}, item])

    assert str(refused.value) == message


def test_labels_and_definitions_at_their_caps_are_accepted():
    scale = scale_of(2, label="x" * (LABEL_CHARS - 1), definition="y" * DEFINITION_CHARS)

    assert validate_scale(scale) is scale
