"""The differential conformance suite: every recorded exchange of a real kube-apiserver
(``golden/<version>/``) replayed against fakekube, configured as the reference was.

The reference is a bare kube-apiserver (docs/conformance.md): no kube-controller-manager, no
scheduler, no kubelet, static tokens for ``admin`` (``system:masters``) and ``alice``
(``devs``). So is the fake here: only the apiserver's own controllers, no nodes, no system
pods, no metrics-server. Each scenario runs on a reset cluster, with the same scenario file
the recorder ran, and its answers are normalized as the recorder's were
(tools/conformance/normalize.py). A difference fails the test unless ``ignore.yaml`` (what a
bare apiserver lacks) or ``known_differences.yaml`` (not fixed yet) explains it; an entry of
the latter that explains nothing fails too (stale: delete it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tools.conformance import golden
from tools.conformance.fake import Fakes
from tools.conformance.scenario import Scenario, load_all

HERE = Path(__file__).parent
#: The versions recorded: 1.36 natively, 1.33 with ``--emulated-version kube=1.33``.
VERSIONS = ("1.33", "1.36")
#: Versions fakekube does not emulate yet: their replay runs and reports its differences, as
#: an expected failure (none: fakekube serves 1.33-1.36; a newly recorded version starts here).
PENDING_VERSIONS: tuple[str, ...] = ()
SCENARIOS = {s.name: s for s in load_all(HERE / "scenarios")}
IGNORED = golden.load_entries(HERE / "ignore.yaml", "why")
KNOWN = golden.load_entries(HERE / "known_differences.yaml", "what")


def _recorded() -> list[Any]:
    cases = []
    for version in VERSIONS:
        for path in sorted((HERE / "golden" / version).glob("*.json")):
            cases.append(pytest.param(version, path.stem, id=f"{version}-{path.stem}"))
    return cases


@pytest.fixture(scope="module")
def fakes() -> Iterator[Fakes]:
    made = Fakes()
    yield made
    made.close()


@pytest.mark.parametrize("version,name", _recorded())
def test_replay(fakes: Fakes, version: str, name: str) -> None:
    scenario = SCENARIOS.get(name)
    assert scenario is not None, f"golden/{version}/{name}.json has no scenario file: delete it or restore the scenario"
    recorded = golden.read(HERE / "golden" / version / f"{name}.json")["exchanges"]
    try:
        result = fakes.replay(scenario, version)
    except ValueError as refused:  # fakekube cannot serve this version
        pytest.xfail(f"fakekube cannot serve Kubernetes {version} yet: {refused}")
    try:
        _judge(scenario, version, recorded, result.exchanges)
    except AssertionError:
        if version in PENDING_VERSIONS:
            pytest.xfail(f"fakekube does not emulate Kubernetes {version} yet (version selection)")
        raise


def _judge(scenario: Scenario, version: str, recorded: list[dict], replayed: list[dict]) -> None:
    recorded = golden.without_dropped(recorded, IGNORED, scenario.name, version)
    diffs = golden.compare(recorded, replayed)
    stale_request = [d for d in diffs if d.path in ("request", "")]
    assert not stale_request, (f"{scenario.name} ({version}): the scenario file no longer matches its golden file "
                               f"(record it again: tools/conformance/record.py):\n"
                               + "\n".join(f"  exchange {d.exchange}: {d.path or 'missing'}" for d in stale_request))
    ignored = [e for e in IGNORED if e.applies(scenario.name, version)]
    known = [e for e in KNOWN if e.applies(scenario.name, version)]
    used: set[int] = set()
    unexplained = []
    for diff in diffs:
        if any(entry.matches(scenario.name, version, diff) for entry in ignored):
            continue
        matching = [entry for entry in known if entry.matches(scenario.name, version, diff)]
        used.update(entry.number for entry in matching)
        if not matching:
            unexplained.append(diff)
    stale = [entry for entry in known if entry.number not in used]
    message = []
    if unexplained:
        message.append(f"{scenario.name} ({version}): {len(unexplained)} differences from the reference "
                       f"(not in ignore.yaml or known_differences.yaml):\n"
                       + golden.explain(recorded, replayed, unexplained))
    if stale:
        message.append("stale known_differences.yaml entries (they no longer differ: delete them):\n"
                       + "\n".join("  " + entry.describe() for entry in stale))
    assert not message, "\n\n".join(message)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_scenario_is_recorded(version: str) -> None:
    """A scenario that applies to a version has its golden file (record it: docs/conformance.md)."""
    missing = [name for name, s in sorted(SCENARIOS.items())
               if s.applies_to(version) and not (HERE / "golden" / version / f"{name}.json").exists()]
    assert not missing, f"scenarios without a {version} golden file: {missing}"


def test_enough_exchanges() -> None:
    """The issue's bar: at least 1,000 recorded exchanges per version."""
    for version in VERSIONS:
        count = sum(len(golden.read(p)["exchanges"]) for p in (HERE / "golden" / version).glob("*.json"))
        assert count >= 1000, f"{version}: {count} recorded exchanges"
