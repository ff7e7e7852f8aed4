"""Reading a machine's answer: a grade on the scale, or a failure with the raw text."""

import pytest

from annotation.llm import AnswerError, parse_grade

GRADES = [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("2", 2),
        (" 3\n", 3),
        ("**1**", 1),
        ('"0"', 0),
        ("2.", 2),
        ("Grade: 2", 2),
        ("grade:3", 3),
        ("The passage answers part of it.\nGrade: 1", 1),
        ("Final grade: 2", 2),
        ("##final score: 3", 3),
        ("**Grade:** 2", 2),
        ("Score = 0", 0),
        ("Grade: 2/3", 2),
        ("Grade: 2\nSo, again: Grade: 2", 2),
        ('{"grade": 3}', 3),
        ('{"score": "1"}', 1),
        ("<think>Maybe 3? No, it only mentions it. Grade: 3</think>\nGrade: 1", 1),
    ],
)
def test_accepted_answers(answer, grade):
    assert parse_grade(answer, GRADES) == grade


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "the answer is empty"),
        (None, "the answer is empty"),
        ("   \n", "the answer is empty"),
        ("Highly relevant", "no grade found (expected a line 'Grade: N' or the grade alone)"),
        ("I would say 2 or 3", "no grade found (expected a line 'Grade: N' or the grade alone)"),
        ("Grade: 2\nGrade: 3", "the answer gives different grades: 2, 3"),
        ("2.5", "2.5 is not a whole grade"),
        ("Grade: 1.5", "1.5 is not a whole grade"),
        ('{"grade": 2.0}', "2.0 is not a whole grade"),
        ("7", "grade 7 is not on the scale (0–3)"),
        ("Grade: -1", "grade -1 is not on the scale (0–3)"),
        ('{"grade": true}', "no grade found (expected a line 'Grade: N' or the grade alone)"),
        (
            "<think>it is surely a 2, so",
            "the answer is still reasoning (an unclosed <think>): no grade given",
        ),
        ("Grade: two", "no grade found (expected a line 'Grade: N' or the grade alone)"),
    ],
)
def test_failures_keep_the_raw_answer_and_say_why(answer, reason):
    with pytest.raises(AnswerError) as caught:
        parse_grade(answer, GRADES)
    assert caught.value.reason == reason
    assert caught.value.raw == (answer or "")


def test_grade_on_a_five_point_scale():
    assert parse_grade("Grade: 5", [0, 1, 2, 3, 4, 5]) == 5
    with pytest.raises(AnswerError, match="not on the scale"):
        parse_grade("Grade: 5", GRADES)
