"""The domain math lives in plain Python modules that import no Django (DESIGN.md, Layout).

Checked by importing each module in a fresh interpreter, so imports made indirectly count too.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE_MODULES = [
    "evaluation.trec",
    "evaluation.measures",
    "evaluation.synthetic",
    "evaluation.cli",
    "evaluation.cli_start",
    "annotation.pooling",
    "annotation.assignment",
    "annotation.strategies",
    "annotation.strategies.settling",
    "annotation.formats",
    "annotation.highlight",
    "annotation.scales",
    "config.text_limits",
    "config.json_keys",
    "annotation.agreement",
    "annotation.agreement.machines",
    "annotation.adjudication",
    "annotation.auditing",
    "evaluation.significance",
    "evaluation.rundiff",
    "evaluation.residuals",
    "evaluation.pool_fairness",
    "annotation.settling",
    "evaluation.leaderboard_formats",
    "annotation.llm",
    "tests.llm_server",
    "evaluation.run_metadata",
    "evaluation.ranking_agreement",
    "config.outbound",
    "config.nesting",
    "accounts.addresses",
    "evaluation.collection",
    "evaluation.collection.rankers",
    "evaluation.collection.files",
    "evaluation.collection.judges",
    "evaluation.certified",
    "evaluation.search",
    "tests.search_servers",
]

PROBE = """
import importlib, sys
importlib.import_module(sys.argv[1])
loaded = sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework'})
print(','.join(loaded))
"""


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_module_imports_no_django(module):
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", (
        f"importing {module} loads {result.stdout.strip()}; pure modules must not import Django. "
        "Move the Django part to services.py, views.py or a management command."
    )
