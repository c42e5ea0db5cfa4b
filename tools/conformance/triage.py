"""Replay the goldens against fakekube and list the differences, grouped: the work queue.

    python tools/conformance/triage.py --version 1.33 [--scenario 'core-*'] [--all] [--examples 2]
    python tools/conformance/triage.py --version 1.36 --suggest /tmp/suggested.yaml

Each group is a difference path with list indexes folded (``body.items[*].metadata.labels``),
with how many exchanges show it, in which scenarios, and an example (request, expected, got).
Differences that ``ignore.yaml`` or ``known_differences.yaml`` explain are left out unless
``--all``. ``--suggest`` also writes known_differences.yaml entries for what is left: one per
exchange whose status differs, and per scenario one per object path (a crud block's repeats
collapse into one entry with its steps); their ``what`` is mechanical — rewrite it, and fold
entries with one cause into one systematic entry, before adding them to the list.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.conformance import golden  # noqa: E402
from tools.conformance.fake import Fakes  # noqa: E402
from tools.conformance.scenario import load_all  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "tests" / "conformance"
_INDEX = re.compile(r"\[\d+\]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", required=True)
    parser.add_argument("--scenario", action="append", default=[])
    parser.add_argument("--all", action="store_true", help="also the differences the lists explain")
    parser.add_argument("--examples", type=int, default=1)
    parser.add_argument("--suggest", type=Path, help="write suggested known_differences entries here")
    args = parser.parse_args(argv)
    entries = ([] if args.all else golden.load_entries(HERE / "ignore.yaml", "why")
               + golden.load_entries(HERE / "known_differences.yaml", "what"))
    groups: dict[str, list[tuple[str, dict, golden.Difference]]] = defaultdict(list)
    left: list[tuple[str, dict, golden.Difference]] = []
    fakes = Fakes()
    total = 0
    try:
        for scenario in load_all(HERE / "scenarios"):
            path = HERE / "golden" / args.version / f"{scenario.name}.json"
            if not path.exists() or args.scenario and not any(fnmatch.fnmatchcase(scenario.name, g)
                                                                  for g in args.scenario):
                continue
            recorded = golden.without_dropped(golden.read(path)["exchanges"], entries, scenario.name, args.version)
            replayed = fakes.replay(scenario, args.version).exchanges
            by_index = {e["index"]: e for e in recorded}
            for diff in golden.compare(recorded, replayed):
                if any(e.matches(scenario.name, args.version, diff) for e in entries):
                    continue
                total += 1
                groups[_INDEX.sub("[*]", diff.path)].append((scenario.name, by_index.get(diff.exchange, {}), diff))
                left.append((scenario.name, by_index.get(diff.exchange, {}), diff))
    finally:
        fakes.close()
    for key, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        scenarios = sorted({name for name, _, _ in items})
        print(f"\n== {key}  ({len(items)} differences; {', '.join(scenarios[:6])}{' …' if len(scenarios) > 6 else ''})")
        for name, exchange, diff in items[:args.examples]:
            request = exchange.get("request", {})
            print(f"   {name} #{diff.exchange} {request.get('method')} {request.get('path')}")
            print("  " + diff.line())
    print(f"\n{total} differences in {len(groups)} groups")
    if args.suggest:
        suggested = suggest(left, args.version)
        args.suggest.write_text(yaml.safe_dump(suggested, sort_keys=False, width=120, allow_unicode=True))
        print(f"{len(suggested)} suggested entries in {args.suggest}")
    return 0


_ROW_PREFIX = re.compile(r"^(body\.items\[\d+\]\.|body\.rows\[\d+\]\.object\.|events\[\d+\]\.object\.|body\.)")
_MESSAGE_PARTS = ("message", "details", "reason", "code")


def _short(value: Any, limit: int = 100) -> str:
    text = value if value == golden.ABSENT else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


def suggest(left: list[tuple[str, dict, golden.Difference]], version: str) -> list[dict[str, Any]]:
    """Entries for the differences no list explains: a status that differs explains its whole
    exchange; otherwise messages go per exchange, managedFields per scenario, and other paths
    per scenario and object path (the first two fields after the object's root)."""
    entries: list[dict[str, Any]] = []
    status = {(name, d.exchange): d for name, _, d in left if d.path == "status"}
    for (name, index), diff in status.items():
        messages = {d.path: d for n, _, d in left if (n, d.exchange) == (name, index) and d.path == "body.message"}
        said = messages.get("body.message")
        entries.append({"what": f"{diff.step_name or index}: upstream answers {diff.expected}"
                        + (f" ({_short(said.expected)})" if said and said.expected != golden.ABSENT else "")
                        + f", fakekube {diff.actual}"
                        + (f" ({_short(said.actual)})" if said and said.actual != golden.ABSENT else ""),
                        "scenario": name, "step": index, "versions": [version]})
    groups: dict[tuple[str, str, Any], list[golden.Difference]] = defaultdict(list)
    for name, _, diff in left:
        if (name, diff.exchange) in status:
            continue
        relative = _INDEX.sub("[*]", _ROW_PREFIX.sub("", diff.path))
        if relative.startswith(_MESSAGE_PARTS):
            groups[(name, "body.*", diff.exchange)].append(diff)
        elif relative.startswith("metadata.managedFields"):
            groups[(name, "*managedFields*", None)].append(diff)
        else:
            groups[(name, "*" + ".".join(relative.split(".")[:2]) + "*", None)].append(diff)
    for (name, path, _), diffs in groups.items():
        first, steps = diffs[0], sorted({d.exchange for d in diffs})
        entries.append({"what": f"{first.step_name or first.exchange}: {first.path} is {_short(first.expected)} upstream, "
                                f"{_short(first.actual)} in fakekube" + (f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""),
                        "scenario": name, "step": steps if len(steps) > 1 else steps[0], "path": path,
                        "versions": [version]})
    return entries


if __name__ == "__main__":
    sys.exit(main())
