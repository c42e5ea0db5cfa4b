"""Record golden exchanges from a real apiserver (docs/conformance.md).

    python tools/conformance/record.py --kubeconfig /path/kubeconfig --version 1.36
    python tools/conformance/record.py --kubeconfig K --version 1.33 --scenario 'core-*' --check

Runs every scenario of ``tests/conformance/scenarios/`` that applies to the version and to the
server's authorization mode (found by asking as ``alice``: a 403 means RBAC), and writes one
golden file per scenario to ``tests/conformance/golden/<version>/``. The kubeconfig's current
user must carry a bearer token (a ``system:masters`` admin); ``--token alice=…`` names the
other users' tokens. ``--check`` writes nothing and reports where a new recording differs from
the stored one — run it right after recording to prove the masks make recordings repeatable.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.conformance import golden, runner  # noqa: E402
from tools.conformance.client import Server  # noqa: E402
from tools.conformance.scenario import load_all  # noqa: E402
from tools.conformance.webhook import WebhookServer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "tests" / "conformance" / "scenarios"
GOLDEN = REPO / "tests" / "conformance" / "golden"


def detect_mode(server: Server) -> str:
    """``RBAC`` when alice (a plain user) may not list namespaces, else ``AlwaysAllow``."""
    answer = server.send("GET", "/api/v1/namespaces?limit=1", {}, None, user="alice")
    return "RBAC" if answer.status == 403 else "AlwaysAllow"


def wait_settled(server: Server, mode: str, timeout_s: float = 120.0) -> None:
    """Wait until the server is ready and, with RBAC, its authorizer knows the bootstrap
    policy (a just-started apiserver denies ``alice`` discovery until its caches sync)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready = server.send("GET", "/readyz", {}, None).status == 200
        if ready and (mode != "RBAC" or server.send("GET", "/api", {}, None, user="alice").status == 200):
            return
        time.sleep(1.0)
    raise SystemExit(f"{server.url} did not settle in {timeout_s:.0f} s")


def served_version(server: Server) -> str:
    """The Kubernetes version the server behaves as (its emulated version when it has one)."""
    info = server.send("GET", "/version", {}, None).json() or {}
    major = info.get("emulationMajor") or info.get("major", "")
    minor = info.get("emulationMinor") or info.get("minor", "")
    return f"{major}.{minor.rstrip('+')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--version", required=True, help="the Kubernetes version recorded, e.g. 1.36")
    parser.add_argument("--out", type=Path, help="golden directory (default tests/conformance/golden/<version>)")
    parser.add_argument("--scenario", action="append", default=[], help="only scenarios matching this glob")
    parser.add_argument("--token", action="append", default=["alice=alicetoken"], help="USER=TOKEN of another user")
    parser.add_argument("--mode", choices=("AlwaysAllow", "RBAC"), help="the server's mode (default: detected)")
    parser.add_argument("--check", action="store_true", help="compare with the stored goldens, write nothing")
    args = parser.parse_args(argv)
    tokens = dict(item.split("=", 1) for item in args.token)
    server = Server.from_kubeconfig(args.kubeconfig, tokens)
    version = served_version(server)
    if version != args.version:
        print(f"the server behaves as {version}, not {args.version}", file=sys.stderr)
        return 2
    mode = args.mode or detect_mode(server)
    wait_settled(server, mode)
    out = args.out or GOLDEN / args.version
    chosen = [s for s in load_all(SCENARIOS) if s.applies_to(args.version, mode)
              and (not args.scenario or any(fnmatch.fnmatchcase(s.name, g) for g in args.scenario))]
    print(f"recording {len(chosen)} scenarios from {server.url} ({version}, {mode}) into {out}")
    webhook = WebhookServer() if any(s.webhook for s in chosen) else None
    failures = exchanges = 0
    try:
        for scenario in chosen:
            result = runner.run(scenario, server, runner.run_token(), webhook if scenario.webhook else None)
            exchanges += len(result.exchanges)
            for problem in result.problems:
                print(f"  {scenario.name}: {problem}")
            target = out / f"{scenario.name}.json"
            if args.check:
                failures += _check(target, scenario.name, result.exchanges)
            else:
                golden.write(target, scenario.name, args.version, result.exchanges)
            print(f"{scenario.name}: {len(result.exchanges)} exchanges")
    finally:
        if webhook is not None:
            webhook.close()
    print(f"{exchanges} exchanges in {len(chosen)} scenarios" + (f", {failures} differ" if args.check else ""))
    return 1 if failures else 0


def _check(target: Path, name: str, exchanges: list[dict]) -> int:
    if not target.exists():
        print(f"  {name}: no stored golden")
        return 1
    stored = golden.read(target)["exchanges"]
    diffs = golden.compare(stored, exchanges)
    if diffs or len(stored) != len(exchanges):
        print(f"  {name}: {len(diffs)} differences from the stored golden\n" + golden.explain(stored, exchanges, diffs))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
