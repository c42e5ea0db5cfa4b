"""The classic kube-scheduler priorities (0–10) next to today's plugins (0–100).

Before the scheduling framework, kube-scheduler scored nodes with priority functions
(``pkg/scheduler/algorithm/priorities``, e.g. Kubernetes 1.10):

* LeastRequestedPriority: per resource ``(capacity - requested) * 10 / capacity`` (Go
  integer division, 0 when over capacity), averaged over cpu and memory (integer ``/ 2``);
* BalancedResourceAllocation: ``int((1 - |cpuFraction - memoryFraction|) * 10)``, 0 when
  either fraction reaches 1.

Today (1.33) NodeResourcesFit's LeastAllocated strategy is the same formula with 100 for
10, so per resource it is exactly the classic score times ten before truncation —
``floor(floor(100 x) / 10) == floor(10 x)`` — and the averages agree except that each
truncates on its own scale (shown below). NodeResourcesBalancedAllocation is *not* the
classic formula scaled: it scores ``int((1 - std) * 100)`` with the standard deviation of
the fractions, which for two resources is ``|cpuFraction - memoryFraction| / 2`` — half the
classic penalty. So ``today = 50 + 5 * classic`` before truncation, equal to ``classic * 10``
only where the fractions are equal; the order of nodes is the same.

The pods here request cpu and memory on every container, so the non-zero defaults
LeastAllocated applies (100m / 200Mi) and the real requests BalancedAllocation uses are the
same numbers, as they were for the classic functions. Today's scores are the plugins' own,
read from ``Cluster.explain_scheduling``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from fakekube import Cluster
from fakekube.cluster.nodespec import NodeSpec

Obj = dict[str, Any]

#: The pod under test: 500m cpu and 1Gi memory.
POD_CPU_M, POD_MEMORY_MI = 500, 1024


def pod(name: str, cpu_m: int, memory_mi: int, node: str = "") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "registry.example/app:1", "resources": {
        "requests": {"cpu": f"{cpu_m}m", "memory": f"{memory_mi}Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


# -- the classic priority functions, as they were ------------------------------------------------
def least_requested(requested: int, capacity: int) -> int:
    """leastRequestedScore: 0…10."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * 10 // capacity


def classic_least_requested(cpu_m: int, cpu_capacity_m: int, memory: int, memory_capacity: int) -> int:
    return (least_requested(cpu_m, cpu_capacity_m) + least_requested(memory, memory_capacity)) // 2


def balance_gap(cpu_m: int, cpu_capacity_m: int, memory: int, memory_capacity: int) -> Fraction:
    """|cpuFraction - memoryFraction|, exactly."""
    return abs(Fraction(cpu_m, cpu_capacity_m) - Fraction(memory, memory_capacity))


def classic_balanced(cpu_m: int, cpu_capacity_m: int, memory: int, memory_capacity: int) -> int:
    """balancedResourceScorer of the priority-function days: 0…10."""
    if cpu_m >= cpu_capacity_m or memory >= memory_capacity:
        return 0
    return math.floor((1 - balance_gap(cpu_m, cpu_capacity_m, memory, memory_capacity)) * 10)


# -- the worked example ------------------------------------------------------------------------------
# Four nodes of three sizes, each holding one pod; the new pod asks 500m / 1Gi. Requested
# (with the new pod) against allocatable, cpu in millicores and memory in Mi:
#   node-1  1500 / 3900,  5120 / 15872   (holds 1 cpu, 4Gi)
#   node-2  2500 / 8000,  5120 / 32768   (holds 2 cpu, 4Gi)
#   node-3  1000 / 2000,  2048 / 4096    (holds 500m, 1Gi)
#   node-4  3500 / 3900,  3072 / 15872   (holds 3 cpu, 2Gi)
NODES = (NodeSpec(), NodeSpec(capacity={"cpu": "8", "memory": "32Gi"}),
         NodeSpec(capacity={"cpu": "2", "memory": "4Gi"}), NodeSpec())
HELD = {"node-1": (1000, 4096), "node-2": (2000, 4096), "node-3": (500, 1024), "node-4": (3000, 2048)}
ALLOCATABLE = {"node-1": (3900, 15872), "node-2": (8000, 32768), "node-3": (2000, 4096), "node-4": (3900, 15872)}
# Classic LeastRequested, per resource then averaged:
#   node-1  2400*10//3900 = 6, 10752*10//15872 = 6  → 6
#   node-2  5500*10//8000 = 6, 27648*10//32768 = 8  → 7
#   node-3  1000*10//2000 = 5,  2048*10//4096  = 5  → 5
#   node-4   400*10//3900 = 1, 12800*10//15872 = 8  → 4
# Today's LeastAllocated: node-1 61, 67 → 64; node-2 68, 84 → 76; node-3 50, 50 → 50;
# node-4 10, 80 → 45. Each is the classic score times ten, give or take the truncation.
CLASSIC_LEAST_REQUESTED = {"node-1": 6, "node-2": 7, "node-3": 5, "node-4": 4}
LEAST_ALLOCATED = {"node-1": 64, "node-2": 76, "node-3": 50, "node-4": 45}
# Fractions cpu / memory and their gap d:
#   node-1 0.3846 / 0.3226, d 0.0620: classic int(9.38) = 9, today int(100 - 3.10) = 96
#   node-2 0.3125 / 0.1562, d 0.1562: classic int(8.44) = 8, today int(100 - 7.81) = 92
#   node-3 0.5    / 0.5,    d 0:      classic 10,            today 100
#   node-4 0.8974 / 0.1935, d 0.7039: classic int(2.96) = 2, today int(100 - 35.19) = 64
CLASSIC_BALANCED = {"node-1": 9, "node-2": 8, "node-3": 10, "node-4": 2}
BALANCED_ALLOCATION = {"node-1": 96, "node-2": 92, "node-3": 100, "node-4": 64}


def requested(name: str) -> tuple[int, int, int, int]:
    """(cpu m, cpu allocatable m, memory Mi, memory allocatable Mi) with the new pod."""
    held_cpu, held_memory = HELD[name]
    cpu_capacity, memory_capacity = ALLOCATABLE[name]
    return held_cpu + POD_CPU_M, cpu_capacity, held_memory + POD_MEMORY_MI, memory_capacity


def todays_scores() -> dict[str, dict[str, int]]:
    """Each node's NodeResourcesFit and NodeResourcesBalancedAllocation scores as the
    plugins compute them for the new pod."""
    cluster = Cluster(nodes=NODES)
    for name, (cpu_m, memory_mi) in HELD.items():
        cluster.create(pod(f"held-{name}", cpu_m, memory_mi, node=name))
    cluster.settle()
    report = cluster.explain_scheduling(pod("new", POD_CPU_M, POD_MEMORY_MI))
    return {entry["name"]: {plugin: score["score"] for plugin, score in entry["scores"].items()}
            for entry in report["nodes"]}


def test_the_worked_example_by_hand() -> None:
    for name in HELD:
        assert classic_least_requested(*requested(name)) == CLASSIC_LEAST_REQUESTED[name]
        assert classic_balanced(*requested(name)) == CLASSIC_BALANCED[name]


def test_least_requested_is_least_allocated_divided_by_ten() -> None:
    scores = todays_scores()
    for name in HELD:
        assert scores[name]["NodeResourcesFit"] == LEAST_ALLOCATED[name]
        assert scores[name]["NodeResourcesFit"] // 10 == CLASSIC_LEAST_REQUESTED[name]


def test_per_resource_the_scales_agree_exactly() -> None:
    """floor(floor(100 x) / 10) == floor(10 x): a resource's LeastAllocated score truncated
    to tens is its classic score, for every requested/capacity pair."""
    for capacity in (1, 7, 100, 3900, 15872):
        for used in range(0, capacity + 1, max(1, capacity // 97)):
            today = (capacity - used) * 100 // capacity
            assert today // 10 == least_requested(used, capacity)


def test_the_averages_truncate_on_their_own_scales() -> None:
    """A node holding 3500m / 12600Mi, the pod asking 100m / 200Mi: cpu 300*100//3900 = 7
    and memory 3072*100//15872 = 19 average to 13 (13 // 10 = 1), while the classic 0 and
    1 average to 0. The identity is per resource; the averages may part by one."""
    cluster = Cluster(nodes=1)
    cluster.create(pod("held", 3500, 12600, node="node-1"))
    cluster.settle()
    report = cluster.explain_scheduling(pod("new", 100, 200))
    assert report["nodes"][0]["scores"]["NodeResourcesFit"]["score"] == 13
    assert classic_least_requested(3600, 3900, 12800, 15872) == 0


def test_balanced_allocation_halves_the_classic_penalty() -> None:
    """today = int(100 - 50 d), classic = int(10 - 10 d): before truncation today is
    50 + 5 * classic, i.e. classic * 10 only where d = 0 (node-3); node-2 and node-4 show
    the difference. Both order the nodes alike."""
    scores = todays_scores()
    for name in HELD:
        gap = balance_gap(*requested(name))
        assert scores[name]["NodeResourcesBalancedAllocation"] == BALANCED_ALLOCATION[name]
        assert BALANCED_ALLOCATION[name] == math.floor(100 - 50 * gap) == math.floor(50 + 5 * (10 - 10 * gap))
        assert CLASSIC_BALANCED[name] == math.floor(10 - 10 * gap)
    assert BALANCED_ALLOCATION["node-3"] // 10 == CLASSIC_BALANCED["node-3"] == 10
    assert BALANCED_ALLOCATION["node-1"] // 10 == CLASSIC_BALANCED["node-1"] == 9
    assert (BALANCED_ALLOCATION["node-2"] // 10, CLASSIC_BALANCED["node-2"]) == (9, 8)
    assert (BALANCED_ALLOCATION["node-4"] // 10, CLASSIC_BALANCED["node-4"]) == (6, 2)
    by_today = sorted(HELD, key=lambda name: -scores[name]["NodeResourcesBalancedAllocation"])
    by_classic = sorted(HELD, key=lambda name: balance_gap(*requested(name)))
    assert by_today == by_classic == ["node-3", "node-1", "node-2", "node-4"]


def test_the_node_with_the_higher_classic_score_is_chosen() -> None:
    """Three default nodes (3900m / 15872Mi) holding 1 cpu / 4Gi, 3 cpu / 2Gi and
    500m / 12Gi; the pod asks 500m / 1Gi. Classic LeastRequested + BalancedResourceAllocation:
      node-1 (2400*10//3900 = 6, 10752*10//15872 = 6) → 6; d = |0.3846 - 0.3226| → 9; 15
      node-2 (400*10//3900 = 1, 12800*10//15872 = 8) → 4; d = |0.8974 - 0.1935| → 2; 6
      node-3 (2900*10//3900 = 7, 2560*10//15872 = 1) → 4; d = |0.2564 - 0.8387| → 4; 8
    Today: node-1 64 + 96 = 160, node-2 45 + 64 = 109, node-3 45 + 70 = 115. Every other
    score is alike on the three nodes. node-1 either way."""
    held = {"node-1": (1000, 4096), "node-2": (3000, 2048), "node-3": (500, 12288)}
    classic = {name: classic_least_requested(cpu + POD_CPU_M, 3900, memory + POD_MEMORY_MI, 15872)
               + classic_balanced(cpu + POD_CPU_M, 3900, memory + POD_MEMORY_MI, 15872)
               for name, (cpu, memory) in held.items()}
    assert classic == {"node-1": 15, "node-2": 6, "node-3": 8}
    cluster = Cluster(nodes=3)
    for name, (cpu_m, memory_mi) in held.items():
        cluster.create(pod(f"held-{name}", cpu_m, memory_mi, node=name))
    cluster.settle()
    report = cluster.explain_scheduling(pod("new", POD_CPU_M, POD_MEMORY_MI))
    resource_scores = {entry["name"]: (entry["scores"]["NodeResourcesFit"]["score"],
                                       entry["scores"]["NodeResourcesBalancedAllocation"]["score"])
                       for entry in report["nodes"]}
    assert resource_scores == {"node-1": (64, 96), "node-2": (45, 64), "node-3": (45, 70)}
    cluster.create(pod("new", POD_CPU_M, POD_MEMORY_MI))
    cluster.settle()
    assert cluster.get("v1", "Pod", "new")["spec"]["nodeName"] == max(classic, key=classic.__getitem__) == "node-1"
