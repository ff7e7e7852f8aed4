"""The README's permission tables are the tests' matrices, so the documented rules are the
enforced ones. When a matrix changes, paste its new table (printed in the failure) into
README.md."""

from pathlib import Path

from tests.api.test_permissions import matrix_as_markdown as api_matrix
from tests.pages.test_permissions import matrix_as_markdown as page_matrix

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_carries_the_apis_permission_matrix():
    table = api_matrix()
    assert table in README.read_text(encoding="utf-8"), (
        f"README.md's API permission table is out of date; replace it with:\n\n{table}"
    )


def test_the_readme_carries_the_pages_permission_matrix():
    table = page_matrix()
    assert table in README.read_text(encoding="utf-8"), (
        f"README.md's page permission table is out of date; replace it with:\n\n{table}"
    )
