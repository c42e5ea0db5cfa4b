"""Docs whose examples are the tests: every code block of README.md and docs/*.md is a region
of a file under tests/examples/ (docs_blocks.py says how regions are marked).

Each check fails naming the page and line of the block, or the file and line of the region:
- every block is, verbatim, a region named after its page, in a file of the kind that runs
  it (Python in a ``test_*.py``, shell in a ``.sh`` a test runs, YAML in a ``.yaml``);
- every region still names a block of its page (no region tests a block that is gone);
- every YAML region loads as a cluster config file (``load_config_file`` on a copy, with
  the static pod directory it names) and builds a cluster, or is Kubernetes objects that a
  cluster accepts.
- a region marked ``not-run: excerpt of <file>`` is that file's lines, in order (some left out).
- any other ``not-run`` block still names scripts that exist (``python <path>.py``).
Blocks marked ``not-run: <why>`` are listed at the end of the pytest run (conftest.py).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import yaml

from fakekube import Cluster
from fakekube.cluster.configfile import load_config_file
from tests.examples.docs_blocks import REPO_ROOT, Block, Region, all_regions, blocks, pages

#: Which file a block of each language must be a region of: the kind of file that runs it
#: (a ``not-run`` region may be anywhere: tests/examples/not_run.txt holds them).
RUNNERS = {"python": "test_*.py", "sh": "*.sh", "bash": "*.sh", "yaml": "*.yaml"}


def _normalized(text: str) -> str:
    """Trailing spaces and blank lines at either end are not part of what a reader copies."""
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def _problem(block: Block, candidates: list[Region]) -> str | None:
    """Why ``block`` is not one of ``candidates`` (its page's regions), or None when it is."""
    same = [r for r in candidates if _normalized(r.text) == _normalized(block.text)]
    runner = RUNNERS.get(block.lang)
    if same and (runner is None or any(r.not_run or Path(r.path).match(runner) for r in same)):
        return None
    if same:
        return f"{block.where}: the ```{block.lang} block is {same[0].where}, which is not a {runner} file"
    message = f"{block.where}: the ```{block.lang} block is no region of tests/examples/ named {block.page}#<name>"
    if not candidates:
        return message + f" (there are none for {block.page} yet)"
    closest = max(candidates, key=lambda r: difflib.SequenceMatcher(None, r.text, block.text).ratio())
    diff = difflib.unified_diff(_normalized(closest.text).splitlines(), _normalized(block.text).splitlines(),
                                closest.where, block.where, lineterm="")
    return message + "; closest:\n" + "\n".join(diff)


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_block_is_a_region_of_tests_examples(page: Path) -> None:
    page_blocks = blocks(page)
    candidates = [r for r in all_regions() if r.page == page.relative_to(REPO_ROOT).as_posix()]
    problems = [p for p in (_problem(b, candidates) for b in page_blocks) if p is not None]
    assert not problems, "\n\n".join(problems)


def test_every_region_names_a_block_of_its_page() -> None:
    texts = {page.relative_to(REPO_ROOT).as_posix(): {_normalized(b.text) for b in blocks(page)} for page in pages()}
    stale = [f"{r.where}: {r.page} has no such block (any more)" for r in all_regions()
             if _normalized(r.text) not in texts.get(r.page, set())]
    assert not stale, "\n".join(stale)


def test_region_names_are_unique() -> None:
    seen: dict[tuple[str, str], str] = {}
    twice = []
    for region in all_regions():
        key = (region.page, region.name)
        if key in seen:
            twice.append(f"{region.where}: also {seen[key]}")
        seen.setdefault(key, region.where)
    assert not twice, "\n".join(twice)


YAML_REGIONS = [r for r in all_regions() if Path(r.path).suffix in (".yaml", ".yml") and not r.not_run]


@pytest.mark.parametrize("region", YAML_REGIONS, ids=lambda r: f"{r.page}#{r.name}")
def test_yaml_block_loads(region: Region, tmp_path: Path) -> None:
    """A cluster config is loaded as ``fakekube serve --config`` would load a copy of it, and
    built into a cluster; Kubernetes objects (a ``kind`` other than ClusterConfig) are created."""
    documents = [d for d in yaml.safe_load_all(region.text) if d is not None]
    if documents and all(isinstance(d, dict) and d.get("kind") not in (None, "ClusterConfig") for d in documents):
        cluster = Cluster(nodes=1)
        for document in documents:
            cluster.create(document)
        return
    path = tmp_path / "cluster.yaml"
    path.write_text(region.text, encoding="utf-8")
    config = documents[0] if documents and isinstance(documents[0], dict) else {}
    if config.get("staticPodPath"):            # a directory of manifests: an empty one
        (tmp_path / config["staticPodPath"]).mkdir(parents=True)
    if config.get("tokenAuthFile"):            # kube-apiserver's token CSV: an empty one
        (tmp_path / config["tokenAuthFile"]).touch()
    Cluster(load_config_file(path))


EXCERPTS = [r for r in all_regions() if r.not_run.startswith("excerpt of ")]


@pytest.mark.parametrize("region", EXCERPTS, ids=lambda r: f"{r.page}#{r.name}")
def test_excerpt_is_its_files_lines_in_order(region: Region) -> None:
    source = REPO_ROOT / region.not_run.removeprefix("excerpt of ").split()[0]
    remaining = iter(source.read_text(encoding="utf-8").splitlines())
    missing = [line for line in region.text.splitlines() if not any(line == candidate for candidate in remaining)]
    assert not missing, f"{region.where}: not in {source.relative_to(REPO_ROOT)} in this order: {missing[0]!r}"


NOT_RUN_COMMANDS = [r for r in all_regions() if r.not_run and not r.not_run.startswith("excerpt of ")]


@pytest.mark.parametrize("region", NOT_RUN_COMMANDS, ids=lambda r: f"{r.page}#{r.name}")
def test_scripts_a_not_run_block_names_exist(region: Region) -> None:
    """A block not run still names real scripts: ``python <path>.py`` is a file of the repository."""
    scripts = re.findall(r"^python3? (\S+\.py)", region.text, re.M)
    missing = [script for script in scripts if not (REPO_ROOT / script).is_file()]
    assert not missing, f"{region.where}: no such script: {missing}"
