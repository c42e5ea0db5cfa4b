"""README.md as a new user follows it: its commands and snippets, in order, as written."""

from __future__ import annotations

from tests.examples.docs_blocks import REPO_ROOT, region


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = region("README.md", "run-the-tests").text.strip()
    assert command in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
