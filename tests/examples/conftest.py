"""List the docs blocks that are not run (``not-run: <why>`` regions) at the end of every run
that collected tests/examples/, so the opt-outs stay visible and rare."""

from __future__ import annotations

import pytest

from tests.examples.docs_blocks import all_regions


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    not_run = [region for region in all_regions() if region.not_run]
    if not not_run:
        return
    terminalreporter.section("docs blocks not run (tests/examples/ regions marked not-run)")
    for region in not_run:
        terminalreporter.write_line(f"{region.page}#{region.name} ({region.path}:{region.line}): {region.not_run}")
