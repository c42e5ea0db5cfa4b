"""The code blocks of README.md and docs/*.md, and the regions of tests/examples/ they are copied from.

The convention (docs/architecture.md, "Docs whose examples are the tests"): every fenced
code block of a page is, verbatim, a *region* of a file under tests/examples/:

    <comment> docs:begin <page>#<name>           (<comment> is ``#`` in .py, .sh, .yaml, .txt)
    ...the block's lines, indented as the surrounding code needs...
    <comment> docs:end

A region's common indentation is removed before it is compared, so it can sit inside
the test function that runs it. A block that cannot run names why on its begin line:
``docs:begin <page>#<name> not-run: <why>``. test_docs_snippets.py holds the checks.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "tests" / "examples"

#: A fence opens with three backticks (indented or not) and an optional language.
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[^`\s]*)[^`]*$")
#: A region's first line; the text after ``not-run:`` is why the block is not run.
_BEGIN = re.compile(r"^\s*# docs:begin (?P<page>[\w./-]+\.md)#(?P<name>[\w.-]+)(?:\s+not-run:\s*(?P<why>.+))?\s*$")
_END = re.compile(r"^\s*# docs:end\s*$")
#: Files that can hold regions (not this module's docstring: it is not a region file).
_REGION_SUFFIXES = (".py", ".sh", ".yaml", ".yml", ".txt")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page: where it is, its language, its text (no fences)."""

    page: str      # relative to the repository root, e.g. "docs/config.md"
    line: int      # 1-based line of the opening fence
    lang: str      # "" when the fence names none
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Region:
    """One marked region of a file under tests/examples/: which block it is, and its text."""

    path: str      # relative to the repository root
    line: int      # 1-based line of its begin marker
    page: str
    name: str
    not_run: str   # why the block is not run; "" when it is
    text: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line} ({self.page}#{self.name})"


def pages() -> list[Path]:
    """The pages whose blocks are checked: README.md and every docs/*.md."""
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def blocks(page: Path, root: Path = REPO_ROOT) -> list[Block]:
    """Every fenced code block of ``page`` (a page of the repository at ``root``), in order;
    an unclosed fence is an error."""
    relative = page.relative_to(root).as_posix()
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = _closing_fence(lines, index + 1, opening.group("indent"))
        if end is None:
            raise ValueError(f"{relative}:{index + 1}: a code block that is never closed")
        body = [_strip_indent(text, opening.group("indent")) for text in lines[index + 1:end]]
        found.append(Block(relative, index + 1, opening.group("lang"), "\n".join(body)))
        index = end + 1
    return found


def _closing_fence(lines: list[str], start: int, indent: str) -> int | None:
    for index in range(start, len(lines)):
        if lines[index].strip() == "```" and lines[index].startswith(indent):
            return index
    return None


def _strip_indent(text: str, indent: str) -> str:
    return text[len(indent):] if text.startswith(indent) else text.lstrip()


def region_files() -> list[Path]:
    """Every file under tests/examples/ that may hold regions, in a fixed order."""
    return sorted(path for path in EXAMPLES.rglob("*")
                  if path.suffix in _REGION_SUFFIXES and path.is_file() and path.name != "docs_blocks.py"
                  and "__pycache__" not in path.parts)


def regions(path: Path) -> list[Region]:
    """Every region of ``path``; a begin without its end (or an end without a begin) is an error."""
    relative = path.relative_to(REPO_ROOT).as_posix()
    found: list[Region] = []
    opened: tuple[int, re.Match[str]] | None = None
    body: list[str] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        begin, end = _BEGIN.match(text), _END.match(text)
        if begin is not None:
            if opened is not None:
                raise ValueError(f"{relative}:{number}: docs:begin inside the region opened at line {opened[0]}")
            opened, body = (number, begin), []
        elif end is not None:
            if opened is None:
                raise ValueError(f"{relative}:{number}: docs:end without a docs:begin")
            line, match = opened
            found.append(Region(relative, line, match.group("page"), match.group("name"), match.group("why") or "",
                                textwrap.dedent("\n".join(body))))
            opened = None
        elif opened is not None:
            body.append(text)
    if opened is not None:
        raise ValueError(f"{relative}:{opened[0]}: docs:begin without a docs:end")
    return found


def all_regions() -> list[Region]:
    return [region for path in region_files() for region in regions(path)]


def region(page: str, name: str) -> Region:
    """The region of block ``page#name`` (for a test that runs a region's text itself)."""
    matches = [r for r in all_regions() if (r.page, r.name) == (page, name)]
    if len(matches) != 1:
        raise LookupError(f"{len(matches)} regions named {page}#{name} under tests/examples/")
    return matches[0]
