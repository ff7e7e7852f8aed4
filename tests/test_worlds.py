"""The order that keeps a world made once per module out of the way of the module's other
tests (tests/conftest.py, ``before_the_world``)."""

from types import SimpleNamespace

from tests.conftest import before_the_world


def item(nodeid, *fixtures):
    return SimpleNamespace(nodeid=nodeid, fixturenames=["db", *fixtures])


def test_a_modules_tests_without_its_world_come_first_and_the_order_is_otherwise_kept():
    items = [
        item("tests/a.py::one", "world_made"),
        item("tests/a.py::two"),
        item("tests/a.py::three", "world_made"),
        item("tests/a.py::four"),
        item("tests/b.py::one", "module_world", "world_made"),
        item("tests/b.py::two[x]"),
        item("tests/c.py::one"),
        item("tests/a.py::five", "world_made"),  # transactional: pytest-django put it last
        item("tests/a.py::six"),
    ]
    before_the_world(items)
    assert [i.nodeid for i in items] == [
        "tests/a.py::two",
        "tests/a.py::four",
        "tests/a.py::one",
        "tests/a.py::three",
        "tests/b.py::two[x]",
        "tests/b.py::one",
        "tests/c.py::one",
        "tests/a.py::six",
        "tests/a.py::five",
    ]
