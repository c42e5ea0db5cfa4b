"""mypy over fakekube/ and pytest_fakekube/ (pyproject's [tool.mypy]) reports no error.

Part of the suite so that the README's one test command, and CI with it, check types.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: A cold mypy (a fresh clone has no cache) over 430 files takes minutes on a busy 2-core
#: machine; the bound only stops a hung checker.
MYPY_TIMEOUT_S = 1800


def test_mypy_reports_no_error() -> None:
    pytest.importorskip("mypy", reason="mypy is in the [test] extra: pip install -e '.[test]'")
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True,
                            timeout=MYPY_TIMEOUT_S)
    assert result.returncode == 0, result.stdout + result.stderr
