"""The docs as a site: ``mkdocs build --strict`` (mkdocs.yml at the repository root) succeeds,
so a broken link, a missing anchor or a page left out of the nav fails the suite (and CI,
which runs the suite), and every page of docs/ is in the nav."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.examples.docs_blocks import REPO_ROOT, region
from tests.examples.shell import environment, run

pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]' (the test extra has it)")
pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e '.[docs]'")


def _nav_pages(nav: Any) -> list[str]:
    """Every page a nav names, depth first: entries are ``page``, ``{title: page}`` or
    ``{title: [entries]}``."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for entry in nav for page in _nav_pages(entry)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def test_every_page_of_docs_is_in_the_nav() -> None:
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = _nav_pages(config["nav"])
    on_disk = sorted(path.name for path in (REPO_ROOT / "docs").glob("*.md"))
    assert sorted(set(in_nav)) == on_disk, (
        f"not in mkdocs.yml's nav: {sorted(set(on_disk) - set(in_nav))}; no such page: {sorted(set(in_nav) - set(on_disk))}")
    assert len(in_nav) == len(set(in_nav)), f"a page is in the nav twice: {in_nav}"


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """docs/index.md's build command, as CI runs it: a warning (a link to a page or anchor that
    is not there, a page left out of the nav) makes ``--strict`` fail, and the output names it."""
    command = region("docs/index.md", "build").text.replace("/tmp/fakekube-site", str(tmp_path / "site"))
    env = {**environment(), "NO_MKDOCS_2_WARNING": "1"}     # not mkdocs-material's end-of-life banner
    build = run(command, REPO_ROOT, env, timeout_s=300)
    assert build.returncode == 0, build.stderr + build.stdout
    assert "WARNING" not in build.stderr, build.stderr
    for page in (REPO_ROOT / "docs").glob("*.md"):
        built = tmp_path / "site" / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), f"{page.name} was not built"
