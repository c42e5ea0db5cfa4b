"""Replay the goldens against fakekube and list the differences, grouped: the work queue.

    python tools/conformance/triage.py --version 1.33 [--scenario 'core-*'] [--all] [--examples 2]

Each group is a difference path with list indexes folded (``body.items[*].metadata.labels``),
with how many exchanges show it, in which scenarios, and an example (request, expected, got).
Differences that ``ignore.yaml`` or ``known_differences.yaml`` explain are left out unless
``--all``.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from collections import defaultdict
from pathlib import Path

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
    args = parser.parse_args(argv)
    entries = ([] if args.all else golden.load_entries(HERE / "ignore.yaml", "why")
               + golden.load_entries(HERE / "known_differences.yaml", "what"))
    groups: dict[str, list[tuple[str, dict, golden.Difference]]] = defaultdict(list)
    fakes = Fakes()
    total = 0
    try:
        for scenario in load_all(HERE / "scenarios"):
            path = HERE / "golden" / args.version / f"{scenario.name}.json"
            if not path.exists() or args.scenario and not any(fnmatch.fnmatchcase(scenario.name, g)
                                                                  for g in args.scenario):
                continue
            recorded = golden.read(path)["exchanges"]
            replayed = fakes.replay(scenario, args.version).exchanges
            by_index = {e["index"]: e for e in recorded}
            for diff in golden.compare(recorded, replayed):
                if any(e.matches(scenario.name, args.version, diff) for e in entries):
                    continue
                total += 1
                groups[_INDEX.sub("[*]", diff.path)].append((scenario.name, by_index.get(diff.exchange, {}), diff))
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
