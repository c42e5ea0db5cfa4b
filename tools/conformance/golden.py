"""Golden files, the comparison of a replay with them, and the two lists of accepted differences.

A golden file (``tests/conformance/golden/<version>/<scenario>.json``) holds one scenario's
recorded exchanges: for each, the request as the scenario wrote it and the normalized answer
(:mod:`.normalize`). The replay compares each answer field by field: JSON objects by key
(key order is not compared), lists in order. A difference has a path inside the exchange's
answer — ``status``, ``contentType``, ``warnings[0]``, ``body.metadata.labels.app``,
``events[2].object.spec``, ``reviews[0].review.request.userInfo`` — which is what the lists
match:

- ``tests/conformance/ignore.yaml``: differences that are right, because the reference runs
  without something fakekube cannot leave out. Each entry says why.
- ``tests/conformance/known_differences.yaml``: real differences not yet fixed. An entry that
  matches nothing any more fails the replay (a stale entry), so the list only shrinks.

An entry: ``scenario`` (a name or a list), optionally ``step`` (an exchange index, a glob
over the step's name, or a list of these), ``path`` (a glob over the difference's path:
:func:`glob_match`), ``except_path`` (a glob it must not match), ``expected`` and ``got`` (regular expressions searched in the JSON of the
recorded and the replayed value: ``<absent>`` when there is none), ``versions``; and ``why``
(ignore.yaml) or ``what`` (known_differences.yaml). ``request`` is for the reader (the
request that shows it) and is not matched.

An ignore.yaml entry may instead ``drop`` (a regular expression): the recorded answer's list
items at ``path`` (a glob over the list's path, e.g. ``body.items``) whose JSON matches are
removed before comparing — an object only the reference has (an OpenShift artifact in a
list) would otherwise shift every item after it.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from tools.conformance.scenario import SAFE_LOADER

Obj = dict[str, Any]
ABSENT = "<absent>"
_SIMPLE_KEY = re.compile(r"[A-Za-z_$@][A-Za-z0-9_$@/-]*")


def write(path: Path, scenario: str, version: str, exchanges: list[Obj]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"scenario": scenario, "version": version, "exchanges": exchanges}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def read(path: Path) -> Obj:
    return json.loads(path.read_text())


@dataclass(frozen=True)
class Difference:
    exchange: int
    step_name: str
    path: str
    expected: Any
    actual: Any

    def line(self) -> str:
        return f"  {self.path}: expected {_brief(self.expected)}, got {_brief(self.actual)}"


def differences(expected: Any, actual: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, expected, actual) for every place two normalized values differ."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            yield from differences(expected.get(key, ABSENT), actual.get(key, ABSENT), _join(path, key))
    elif isinstance(expected, list) and isinstance(actual, list):
        for index in range(max(len(expected), len(actual))):
            left = expected[index] if index < len(expected) else ABSENT
            right = actual[index] if index < len(actual) else ABSENT
            yield from differences(left, right, f"{path}[{index}]")
    elif expected != actual or type(expected) is not type(actual):
        yield path, expected, actual


def _join(path: str, key: str) -> str:
    if _SIMPLE_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def compare(golden: list[Obj], replayed: list[Obj]) -> list[Difference]:
    """Every difference between the recorded and the replayed exchanges of one scenario."""
    found: list[Difference] = []
    by_index = {e["index"]: e for e in replayed}
    for recorded in golden:
        index = recorded["index"]
        name = recorded["request"].get("name", "")
        mine = by_index.get(index)
        if mine is None:
            found.append(Difference(index, name, "", "an exchange", ABSENT))
            continue
        if mine["request"] != recorded["request"]:
            found.append(Difference(index, name, "request", recorded["request"], mine["request"]))
            continue
        for path, left, right in differences(recorded["response"], mine["response"]):
            found.append(Difference(index, name, path, left, right))
    return found


@dataclass(frozen=True)
class Entry:
    """One entry of ignore.yaml or known_differences.yaml."""

    scenarios: tuple[str, ...]
    #: Indexes or globs over step names (any may match); None: every step.
    step: tuple[int | str, ...] | None
    path: str | None
    versions: tuple[str, ...] | None
    text: str
    number: int
    expected: re.Pattern[str] | None = None
    got: re.Pattern[str] | None = None
    except_path: str | None = None
    drop: re.Pattern[str] | None = None

    def applies(self, scenario: str, version: str) -> bool:
        return scenario in self.scenarios and (self.versions is None or version in self.versions)

    def at_step(self, exchange: int, step_name: str) -> bool:
        return self.step is None or any(
            exchange == step if isinstance(step, int) else glob_match(step, step_name) for step in self.step)

    def matches(self, scenario: str, version: str, difference: Difference) -> bool:
        if not self.applies(scenario, version) or self.drop is not None:
            return False
        if not self.at_step(difference.exchange, difference.step_name):
            return False
        if self.path is not None and not glob_match(self.path, difference.path):
            return False
        if self.except_path is not None and glob_match(self.except_path, difference.path):
            return False
        if self.expected is not None and not self.expected.search(_shown(difference.expected)):
            return False
        return self.got is None or bool(self.got.search(_shown(difference.actual)))

    def describe(self) -> str:
        steps = ", ".join(str(step) for step in self.step) if self.step is not None else "*"
        where = f"{'/'.join(self.scenarios)} step {steps}"
        return f"entry #{self.number} ({where}, path {self.path or '*'}): {self.text}"


def glob_match(pattern: str, text: str) -> bool:
    """``*`` matches anything (dots and brackets included), ``[*]`` any list index; the rest
    is literal (so ``["."]`` and ``[0]`` in a path mean themselves)."""
    regex = re.escape(pattern).replace(re.escape("[*]"), r"\[\d+\]").replace(re.escape("*"), ".*")
    return re.fullmatch(regex, text, re.DOTALL) is not None


def load_entries(path: Path, text_key: str) -> list[Entry]:
    if not path.exists():
        return []
    entries = []
    for number, item in enumerate(yaml.load(path.read_text(), Loader=SAFE_LOADER) or [], start=1):
        scenarios = item["scenario"] if isinstance(item["scenario"], list) else [item["scenario"]]
        if not item.get(text_key):
            raise ValueError(f"{path} entry #{number}: every entry says `{text_key}:`")
        versions = item.get("versions")
        raw_step = item.get("step")
        step = None if raw_step is None else tuple(raw_step) if isinstance(raw_step, list) else (raw_step,)
        entries.append(Entry(tuple(scenarios), step, item.get("path"),
                             tuple(str(v) for v in versions) if versions else None, str(item[text_key]), number,
                             re.compile(item["expected"]) if "expected" in item else None,
                             re.compile(item["got"]) if "got" in item else None, item.get("except_path"),
                             re.compile(item["drop"]) if "drop" in item else None))
    return entries


def without_dropped(recorded: list[Obj], entries: list[Entry], scenario: str, version: str) -> list[Obj]:
    """The recorded exchanges without the list items the entries' ``drop`` names (copies
    where something goes; the rest as they were)."""
    drops = [e for e in entries if e.drop is not None and e.applies(scenario, version)]
    if not drops:
        return recorded
    out = []
    for exchange in recorded:
        name = exchange["request"].get("name", "")
        mine = [e for e in drops if e.at_step(exchange["index"], name)]
        if mine:
            exchange = {**exchange, "response": _dropped(exchange["response"], "", mine)}
        out.append(exchange)
    return out


def _dropped(value: Any, path: str, entries: list[Entry]) -> Any:
    if isinstance(value, dict):
        return {key: _dropped(item, _join(path, key), entries) for key, item in value.items()}
    if isinstance(value, list):
        kept = [item for item in value if not any(
            e.drop is not None and glob_match(e.path or "*", path) and e.drop.search(_shown(item)) for e in entries)]
        return [_dropped(item, f"{path}[{index}]", entries) for index, item in enumerate(kept)]
    return value


def explain(recorded: list[Obj], replayed: list[Obj], diffs: list[Difference]) -> str:
    """A failure message: per exchange, the request, the differing paths, and a diff of the answers."""
    by_index = {e["index"]: e for e in recorded}
    mine = {e["index"]: e for e in replayed}
    lines: list[str] = []
    for index in sorted({d.exchange for d in diffs}):
        exchange = by_index.get(index, {})
        request = exchange.get("request", {})
        lines.append(f"exchange {index} {request.get('name', '')!r}: {request.get('method')} {request.get('path')}")
        if "body" in request:
            lines.append(f"  request body: {_brief(request['body'], 300)}")
        lines += [d.line() for d in diffs if d.exchange == index]
        left = json.dumps(exchange.get("response"), indent=1, sort_keys=True).splitlines()
        right = json.dumps((mine.get(index) or {}).get("response"), indent=1, sort_keys=True).splitlines()
        diff = list(difflib.unified_diff(left, right, "reference", "fakekube", n=2, lineterm=""))
        lines += ["    " + line for line in diff[:80]]
        if len(diff) > 80:
            lines.append(f"    … {len(diff) - 80} more diff lines")
    return "\n".join(lines)


def _shown(value: Any) -> str:
    return value if value == ABSENT else json.dumps(value, ensure_ascii=False)


def _brief(value: Any, limit: int = 160) -> str:
    text = value if value == ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"
