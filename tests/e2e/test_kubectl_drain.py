"""`kubectl drain` against a PodDisruptionBudget that allows one disruption at a time.

kubectl cordons the node, asks to evict every pod on it at once and retries each refused
eviction (429) after 5 s of *wall* time, so drain runs in the background while the test
moves the virtual clock: the budget recovers only when a replacement (made by the
ReplicaSet, scheduled on another node) is Ready, one virtual second after it appears.
While the clock stands still, drain stays blocked however often it retries.
"""

from __future__ import annotations

import json
import time

import pytest

from fakekube import Cluster

from .conftest import Kubectl, Stream

pytestmark = pytest.mark.fakekube(nodes=3)

REPLICA_SET = """apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""
#: How long (wall) the test lets a drain run while it moves the clock.
DRAIN_WALL_LIMIT_S = 60.0


def web_pods(kubectl: Kubectl) -> dict[str, tuple[str, str]]:
    """Pod name → (node, phase) of the ReplicaSet's pods."""
    pods = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    return {p["metadata"]["name"]: (p["spec"].get("nodeName", ""), p["status"]["phase"]) for p in pods}


def run_clock_until(fakekube: Cluster, drain: Stream, last_line: str) -> list[str]:
    """Advance the virtual clock one second at a time while ``drain`` runs, until it prints
    ``last_line`` (or the wall-clock limit is up); returns its output lines."""
    deadline = time.monotonic() + DRAIN_WALL_LIMIT_S
    lines = drain.wait_for_lines(1, timeout_s=0)
    while last_line not in lines and time.monotonic() < deadline:
        fakekube.advance(1)
        lines = drain.wait_for_lines(len(lines) + 1, timeout_s=0.2)
    return lines


def test_drain_evicts_one_pod_at_a_time_and_blocks_while_the_budget_is_spent(kubectl: Kubectl,
                                                                              fakekube: Cluster) -> None:
    # Put the three replicas on node-1: the other nodes are cordoned while they are placed.
    kubectl.ok("cordon", "node-2", "node-3")
    kubectl.ok("apply", "-f", "-", stdin=REPLICA_SET)
    fakekube.advance(1)
    kubectl.ok("uncordon", "node-2", "node-3")
    originals = web_pods(kubectl)
    assert sorted(originals.values()) == [("node-1", "Running")] * 3
    assert kubectl.ok("create", "pdb", "web", "--selector=app=web", "--max-unavailable=1") == \
        "poddisruptionbudget.policy/web created\n"
    assert kubectl.ok("get", "pdb", "web").splitlines()[1].split() == ["web", "N/A", "1", "1", "0s"]

    drain = kubectl.stream("drain", "node-1", "--ignore-daemonsets")
    # The first round: all three evictions asked, one granted. The clock stands still, so
    # the replacement never turns Ready and the retry round 5 s later is refused again.
    lines = drain.wait_for_lines(7, timeout_s=15)
    assert lines[0] == "node/node-1 cordoned"
    assert sum(line.startswith("evicting pod default/web-") for line in lines) == 5, lines
    [evicted] = [line for line in lines if line.endswith(" evicted")]
    first = evicted.split("/")[1].split()[0]
    on_node_1 = sorted(name for name, (node, _) in web_pods(kubectl).items() if node == "node-1")
    assert on_node_1 == sorted(set(originals) - {first})
    assert kubectl.ok("get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}") == "0"
    assert json.loads(kubectl.ok("get", "node", "node-1", "-o", "json"))["spec"]["unschedulable"] is True

    # Time moves: each replacement is Ready a second after it appears and frees the budget
    # for the next retry.
    lines = run_clock_until(fakekube, drain, "node/node-1 drained")
    result = drain.stop()
    assert result.rc == 0, result.stderr
    assert lines[-1] == "node/node-1 drained"
    assert sorted(line for line in lines if line.endswith(" evicted")) == sorted(f"pod/{n} evicted" for n in originals)
    refused = [line for line in result.stderr.splitlines() if line.startswith("error when evicting")]
    assert refused and all(line.endswith(' -n "default" (will retry after 5s): Cannot evict pod as it would violate '
                                         "the pod's disruption budget.") for line in refused), result.stderr
    fakekube.advance(1)
    now = web_pods(kubectl)
    assert not set(now) & set(originals)
    assert len(now) == 3 and all(node in ("node-2", "node-3") and phase == "Running" for node, phase in now.values())
    assert kubectl.ok("get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}") == "1"
