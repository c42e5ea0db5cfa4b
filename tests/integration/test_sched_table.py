"""A table of placement cases for the whole default profile (kube-scheduler 1.33), each run
on a 3-node and on a 50-node cluster.

Every case is a small scenario — three nodes (``node-1`` … ``node-3``, with labels, taints,
capacity, zones, images, ``unschedulable``), pods already bound to them, claims and volumes —
then the pod under test (``test``). The expected outcome is worked out by hand from
upstream's rules: the node it is bound to, or the exact FailedScheduling message (the event
and the PodScheduled condition say the same). Where the best total is a genuine tie, the
case names the tied nodes and pins the seeded pick (``test_ties_cover_exactly_the_tied_nodes``
shows the pick ranges over exactly those nodes).

On 50 nodes the three scenario nodes come first and 47 filler nodes follow. A filler must
not change the outcome, so by default it carries the taint ``filler=true:NoSchedule`` that
no test pod tolerates: it fails TaintToleration (the third filter) and only adds
``47 node(s) had untolerated taint {filler: true}`` to a failure message (and 47 nodes to
preemption's "not helpful" count, a taint being UnschedulableAndUnresolvable). Pods that
tolerate every taint get fillers with room for no pod instead (``47 Too many pods``); a
PreFilter that names nodes leaves fillers out (``didn't satisfy plugin(s) [...]``).
Fillers have no zone label and no pods, so they are never a topology domain of a zone
constraint; where a hostname-keyed spread would count them, the pod selects the
scenario's ``pool=main`` nodes (nodeAffinityPolicy Honor leaves fillers out).

Score arithmetic in the comments uses a node's allocatable 3900m cpu and 15872Mi memory,
Go's integer division (``//``), and the default weights: TaintToleration 3, NodeAffinity 2,
PodTopologySpread 2, InterPodAffinity 2, NodeResourcesFit (LeastAllocated) 1,
NodeResourcesBalancedAllocation 1, ImageLocality 1. LeastAllocated counts a container
without a cpu/memory request as 100m/200Mi; BalancedAllocation counts real requests and
skips a pod requesting neither (most test pods here), so it is left out of those sums.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pytest

from fakekube import Cluster
from fakekube.cluster.nodespec import NodeSpec

Obj = dict[str, Any]
MIB = 1024 * 1024
MERGE = "application/merge-patch+json"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
#: The image of the pod under test: no node holds it unless a case says so.
TEST_IMAGE = "registry.example/app:1"
#: Pods already on the nodes run another image (a pull never helps the test pod).
OTHER_IMAGE = "registry.example/other:1"

FILLER_TAINT = {"key": "filler", "value": "true", "effect": "NoSchedule"}
TAINTED, FULL, ABSENT = "tainted", "full", "absent"

# Upstream 1.33's filter reasons, word for word.
UNSCHEDULABLE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
PORTS = "node(s) didn't have free ports for the requested pod ports"
TOO_MANY_PODS = "Too many pods"
CPU = "Insufficient cpu"
MEMORY = "Insufficient memory"
EPHEMERAL = "Insufficient ephemeral-storage"
GPU = "Insufficient example.com/gpu"
DISK_CONFLICT = "node(s) had no available disk"
RWOP = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
VOLUME_NODE_CONFLICT = "node(s) had volume node affinity conflict"
NO_PV_TO_BIND = "node(s) didn't find available persistent volumes to bind"
VOLUME_ZONE = "node(s) had no available volume zone"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
#: Unschedulable (not ...AndUnresolvable): DefaultPreemption tries these nodes.
RESOLVABLE = frozenset({CPU, MEMORY, EPHEMERAL, GPU, TOO_MANY_PODS, PORTS, DISK_CONFLICT, RWOP, POD_ANTI_AFFINITY,
                        EXISTING_ANTI_AFFINITY, SPREAD})
# DefaultPreemption's per-node statuses: every pod here has priority 0, so no node has a
# lower-priority victim; nodes that failed for an unresolvable reason are not tried.
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"


def untolerated(key: str, value: str = "") -> str:
    return f"node(s) had untolerated taint {{{key}: {value}}}"


def absent(*plugins: str) -> str:
    """The status of nodes a PreFilter's node names left out."""
    return f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}]"


# -- building the scenario ------------------------------------------------------------------
def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Obj:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def node(zone: str | None = None, labels: dict[str, str] | None = None, taints: Sequence[Obj] = (),
         **allocatable: str) -> NodeSpec:
    """A scenario node; ``allocatable`` overrides (``pods="2"``, ``ephemeral_storage="20Gi"``,
    ``example_com_gpu="2"``)."""
    resources = {key.replace("example_com_", "example.com/").replace("_", "-"): value
                 for key, value in allocatable.items()}
    return NodeSpec(zone=zone, labels=dict(labels or {}), taints=tuple(taints), capacity=resources)


PLAIN = NodeSpec()
THREE = (PLAIN, PLAIN, PLAIN)


def container(name: str = "c", image: str = TEST_IMAGE, cpu: str = "", memory: str = "", ports: Sequence[Obj] = (),
              **extra: Any) -> Obj:
    out: Obj = {"name": name, "image": image}
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    if requests:
        out["resources"] = {"requests": requests}
    if ports:
        out["ports"] = list(ports)
    out.update(extra)
    return out


def pod(name: str = "test", node_name: str = "", cpu: str = "", memory: str = "", labels: dict[str, str] | None = None,
        namespace: str = "default", image: str = TEST_IMAGE, containers: Sequence[Obj] | None = None,
        **spec: Any) -> Obj:
    """A pod: one container requesting ``cpu``/``memory`` (none: best-effort) unless
    ``containers`` is given; ``node_name`` binds it there (a pod already on a node)."""
    body: Obj = {"containers": list(containers) if containers is not None else [
        container(image=image, cpu=cpu, memory=memory)], **spec}
    if node_name:
        body["nodeName"] = node_name
    meta: Obj = {"name": name, "namespace": namespace, "labels": dict(labels or {"role": "test"})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def on(node_name: str, name: str, cpu: str = "", memory: str = "", labels: dict[str, str] | None = None,
       **spec: Any) -> Obj:
    """A pod already bound to ``node_name`` (another image than the test pod's)."""
    return pod(name, node_name, cpu, memory, labels or {"role": "existing"}, image=OTHER_IMAGE, **spec)


def term(topology_key: str = HOST, **match_labels: str) -> Obj:
    return {"labelSelector": {"matchLabels": match_labels}, "topologyKey": topology_key}


def affinity(kind: str, *terms: Obj) -> Obj:
    """{kind: required terms}: kind is podAffinity or podAntiAffinity."""
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(kind: str, weight: int, pod_term: Obj) -> Obj:
    """{kind: one preferred term}: kind is podAffinity or podAntiAffinity."""
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "podAffinityTerm": pod_term}]}}


def holding(*ports: Obj) -> Obj:
    """The container of a pod already on a node that holds host ``ports``."""
    return container(image=OTHER_IMAGE, ports=ports)


def required_node_affinity(*terms: Obj) -> Obj:
    """nodeAffinity with ORed nodeSelectorTerms, each ``{"matchExpressions"|"matchFields": [...]}``."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, operator: str, *values: str) -> Obj:
    out: Obj = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def preferred_node_affinity(*weighted: tuple[int, Obj]) -> Obj:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "preference": preference} for weight, preference in weighted]}}


def spread(max_skew: int, key: str, when: str = "DoNotSchedule", **extra: Any) -> Obj:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def namespace(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def claim(name: str, mode: str = "ReadWriteOnce", class_name: str | None = None) -> Obj:
    spec: Obj = {"accessModes": [mode], "resources": {"requests": {"storage": "1Gi"}}}
    if class_name is not None:
        spec["storageClassName"] = class_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def volume(name: str, on_node: str | None = None, zone: str | None = None, class_name: str = "",
           mode: str = "ReadWriteOnce") -> Obj:
    spec: Obj = {"capacity": {"storage": "1Gi"}, "accessModes": [mode], "hostPath": {"path": f"/{name}"}}
    if class_name:
        spec["storageClassName"] = class_name
    if on_node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr(HOST, "In", on_node)]}]}}
    labels = {ZONE: zone} if zone else {}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels},
            "spec": spec}


def storage_class(name: str, mode: str) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": mode}


def claim_volume(name: str) -> Obj:
    return {"name": name, "persistentVolumeClaim": {"claimName": name}}


def patch(cluster: Cluster, kind: str, name: str, body: Obj, namespace: str = "", status: bool = False) -> None:
    cluster.api.patch(cluster.resource("v1", kind), namespace, name, MERGE, json.dumps(body).encode(),
                      subresource="status" if status else "")


def bind(claim_name: str, volume_name: str) -> Callable[[Cluster], None]:
    """What the PV controller would do (fakekube has none): bind the claim to the volume."""
    def setup(cluster: Cluster) -> None:
        uid = cluster.get("v1", "PersistentVolumeClaim", claim_name)["metadata"]["uid"]
        patch(cluster, "PersistentVolume", volume_name, {"spec": {"claimRef": {
            "kind": "PersistentVolumeClaim", "namespace": "default", "name": claim_name, "uid": uid,
            "apiVersion": "v1"}}})
        patch(cluster, "PersistentVolume", volume_name, {"status": {"phase": "Bound"}}, status=True)
        patch(cluster, "PersistentVolumeClaim", claim_name, {
            "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": volume_name}}, namespace="default")
        patch(cluster, "PersistentVolumeClaim", claim_name, {"status": {"phase": "Bound"}}, namespace="default",
              status=True)
    return setup


def images(**by_node: Sequence[tuple[str, int]]) -> Callable[[Cluster], None]:
    """Nodes already holding images: ``node_2=[(name, size_mib)]`` written to status.images."""
    def setup(cluster: Cluster) -> None:
        for key, held in by_node.items():
            patch(cluster, "Node", key.replace("_", "-"), {"status": {"images": [
                {"names": [name], "sizeBytes": size_mib * MIB} for name, size_mib in held]}}, status=True)
    return setup


def unschedulable(*names: str) -> Callable[[Cluster], None]:
    """``kubectl cordon`` the nodes."""
    def setup(cluster: Cluster) -> None:
        for name in names:
            patch(cluster, "Node", name, {"spec": {"unschedulable": True}})
    return setup


# -- the table ----------------------------------------------------------------------------------
Reasons = tuple[str, ...]


@dataclass(frozen=True)
class Case:
    id: str
    pod: Obj
    nodes: tuple[NodeSpec, NodeSpec, NodeSpec] = THREE
    existing: tuple[Obj, ...] = ()
    objects: tuple[Obj, ...] = ()
    setup: tuple[Callable[[Cluster], None], ...] = ()
    #: The node the pod is bound to (for a tie: the seeded pick among ``tied``).
    node: str | None = None
    tied: tuple[str, ...] = ()
    #: When nothing fits: each scenario node's filter reasons, in node order (None: a
    #: PreFilter's node names left it out, counted under ``absent_reason``).
    rejected: tuple[Reasons | None, ...] = ()
    absent_reason: str = ""
    #: A PreFilter rejection: the message replaces the per-node histogram.
    prefilter: str = ""
    filler: str = TAINTED
    #: The pod names its node: bound without the scheduler.
    bypass: bool = False


def filler_spec(kind: str, count: int) -> NodeSpec:
    if kind == FULL:
        return NodeSpec(count=count, capacity={"pods": "0"})
    return NodeSpec(count=count, taints=(FILLER_TAINT,))


def filler_reasons(case: Case) -> Reasons | None:
    if case.filler == FULL:
        return (TOO_MANY_PODS,)
    if case.filler == ABSENT:
        return None
    return (untolerated("filler", "true"),)


def fit_error(total: int, per_node: Sequence[Reasons | None], absent_reason: str = "", prefilter: str = "") -> str:
    """Upstream's FitError text: "0/N nodes are available: " then either the PreFilter
    message or "<count> <reason>" for every reason, sorted as strings; then DefaultPreemption's
    own "0/N" over the nodes it tried (all of them failed here: no lower-priority pods) and
    those it did not (unresolvable reasons, left-out nodes)."""
    message = f"0/{total} nodes are available:"
    if prefilter:
        message += f" {prefilter}."
        preemption = {NOT_HELPFUL: total}
    else:
        counts: dict[str, int] = {}
        preemption = {}
        for reasons in per_node:
            for reason in reasons if reasons is not None else (absent_reason,):
                counts[reason] = counts.get(reason, 0) + 1
            verdict = NO_VICTIMS if reasons is not None and RESOLVABLE.issuperset(reasons) else NOT_HELPFUL
            preemption[verdict] = preemption.get(verdict, 0) + 1
        message += " " + ", ".join(sorted(f"{count} {reason}" for reason, count in counts.items())) + "."
    tried = ", ".join(sorted(f"{count} {reason}" for reason, count in preemption.items()))
    return f"{message} preemption: 0/{total} nodes are available: {tried}."


def expected_message(case: Case, total: int) -> str:
    fillers = [filler_reasons(case)] * (total - len(case.nodes))
    return fit_error(total, list(case.rejected) + fillers, case.absent_reason, case.prefilter)


def run(case: Case, total: int, seed: int = 0) -> Cluster:
    """Build the scenario on ``total`` nodes, then create the pod under test and settle
    (no time passes: no kubelet status report brings pulled images into play)."""
    fillers = total - len(case.nodes)
    specs = case.nodes + ((filler_spec(case.filler, fillers),) if fillers else ())
    cluster = Cluster(nodes=specs, seed=seed)
    for obj in case.objects:
        cluster.create(obj)
    for step in case.setup:
        step(cluster)
    for existing in case.existing:
        cluster.create(existing)
    cluster.settle()
    for existing in case.existing:  # the scenario is what it says: every pod is on its node
        placed = cluster.get("v1", "Pod", existing["metadata"]["name"], existing["metadata"]["namespace"])
        assert placed["spec"]["nodeName"] == existing["spec"]["nodeName"]
        assert placed["status"].get("phase") not in ("Failed", "Succeeded")
    cluster.create(case.pod)
    cluster.settle()
    return cluster


def node_of(cluster: Cluster) -> str | None:
    name = cluster.get("v1", "Pod", "test")["spec"].get("nodeName")
    return str(name) if name else None


def scheduler_events(cluster: Cluster, reason: str) -> list[str]:
    return [e["message"] for e in cluster.events("default", involved_name="test", reason=reason)]


def pod_scheduled(cluster: Cluster) -> Obj:
    conditions = cluster.get("v1", "Pod", "test")["status"].get("conditions") or []
    return next(c for c in conditions if c["type"] == "PodScheduled")


CASES: list[Case] = []


def case(id: str, pod: Obj, **kwargs: Any) -> None:
    CASES.append(Case(id, pod, **kwargs))


# NodeUnschedulable ---------------------------------------------------------------------------
case("unschedulable-nodes-are-skipped", pod(), setup=(unschedulable("node-1", "node-2"),), node="node-3")
case("unschedulable-everywhere", pod(), setup=(unschedulable("node-1", "node-2", "node-3"),),
     rejected=((UNSCHEDULABLE,),) * 3)
# Tolerating node.kubernetes.io/unschedulable lets a pod onto a cordoned node (as DaemonSet pods do).
case("cordon-tolerated",
     pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]),
     nodes=(node(taints=[taint("dedicated", "db")]), PLAIN, node(taints=[taint("dedicated", "db")])),
     setup=(unschedulable("node-2"),), node="node-2")
# Only the first failing filter counts for a node: node-1 is cordoned and tainted (reported:
# unschedulable), node-2 tainted, node-3 has 3800m of 3900m cpu taken.
case("first-failing-filter-is-reported", pod(cpu="1"),
     nodes=(node(taints=[taint("a")]), node(taints=[taint("a")]), PLAIN),
     setup=(unschedulable("node-1"),), existing=(on("node-3", "e-1", cpu="3800m"),),
     rejected=((UNSCHEDULABLE,), (untolerated("a"),), (CPU,)))

# NodeName --------------------------------------------------------------------------------------
# A pod naming its node is bound by the API server, not scheduled: cordon and taints do not matter.
case("node-name-bypasses-the-scheduler", pod(node_name="node-2"), nodes=(PLAIN, node(taints=[taint("a")]), PLAIN),
     setup=(unschedulable("node-2"),), node="node-2", bypass=True)

# TaintToleration (filter) ------------------------------------------------------------------------
case("noschedule-and-noexecute-taints-filter", pod(),
     nodes=(node(taints=[taint("a", "1")]), node(taints=[taint("b", effect="NoExecute")]), PLAIN), node="node-3")
case("toleration-equal-value", pod(tolerations=[{"key": "gpu", "operator": "Equal", "value": "true",
                                                 "effect": "NoSchedule"}]),
     nodes=(node(taints=[taint("gpu", "true")]), node(taints=[taint("other")]), node(taints=[taint("other")])),
     node="node-1")
case("toleration-value-mismatch", pod(tolerations=[{"key": "gpu", "operator": "Equal", "value": "false"}]),
     nodes=(node(taints=[taint("gpu", "true")]),) * 3, rejected=((untolerated("gpu", "true"),),) * 3)
# The first untolerated taint is the one reported; a toleration for NoExecute does not cover NoSchedule.
case("toleration-effect-mismatch", pod(tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}]),
     nodes=(node(taints=[taint("gpu", "true")]), node(taints=[taint("dedicated", "db", "NoExecute")]),
            node(taints=[taint("gpu", "true", "NoExecute"), taint("x")])),
     rejected=((untolerated("gpu", "true"),), (untolerated("dedicated", "db"),), (untolerated("x"),)))
# An empty key with Exists tolerates every taint (fillers then need to be full instead).
# node-1 and node-3 carry a 3-cpu pod: LeastAllocated (best-effort pod: 100m/200Mi)
# node-1, node-3: cpu (3900-3000-100)*100//3900 = 20, memory (15872-200-200)*100//15872 = 97 → 58;
# node-2: cpu 3800*100//3900 = 97, memory 15672*100//15872 = 98 → 97. TaintToleration: no
# PreferNoSchedule taint anywhere, all 100.
case("tolerate-everything", pod(tolerations=[{"operator": "Exists"}]),
     nodes=(node(taints=[taint("a")]), node(taints=[taint("b", effect="NoExecute")]), node(taints=[taint("c")])),
     existing=(on("node-1", "e-1", cpu="3", tolerations=[{"operator": "Exists"}]),
               on("node-3", "e-3", cpu="3", tolerations=[{"operator": "Exists"}])),
     node="node-2", filler=FULL)


# NodeAffinity (filter) ----------------------------------------------------------------------------
case("node-selector", pod(nodeSelector={"disk": "ssd"}), nodes=(PLAIN, node(labels={"disk": "ssd"}), PLAIN),
     node="node-2")
case("node-selector-matches-nothing", pod(nodeSelector={"disk": "ssd"}),
     nodes=(node(labels={"disk": "hdd"}), PLAIN, PLAIN), rejected=((NODE_AFFINITY,),) * 3)
case("affinity-in", pod(affinity=required_node_affinity({"matchExpressions": [expr("tier", "In", "gold", "silver")]})),
     nodes=(node(labels={"tier": "bronze"}), PLAIN, node(labels={"tier": "silver"})), node="node-3")
# NotIn matches a node without the label.
case("affinity-not-in", pod(affinity=required_node_affinity({"matchExpressions": [
    expr("tier", "NotIn", "bronze", "silver")]})),
     nodes=(node(labels={"tier": "bronze"}), node(labels={"tier": "silver"}), PLAIN), node="node-3")
case("affinity-exists", pod(affinity=required_node_affinity({"matchExpressions": [expr("gpu", "Exists")]})),
     nodes=(PLAIN, node(labels={"gpu": ""}), PLAIN), node="node-2")
case("affinity-does-not-exist", pod(affinity=required_node_affinity({"matchExpressions": [
    expr("spot", "DoesNotExist")]})),
     nodes=(node(labels={"spot": "true"}), node(labels={"spot": "false"}), PLAIN), node="node-3")
# Gt/Lt compare integers; a value that is not one matches neither.
case("affinity-gt", pod(affinity=required_node_affinity({"matchExpressions": [expr("cores", "Gt", "8")]})),
     nodes=(node(labels={"cores": "4"}), node(labels={"cores": "16"}), node(labels={"cores": "many"})),
     node="node-2")
case("affinity-lt", pod(affinity=required_node_affinity({"matchExpressions": [expr("mem-gb", "Lt", "64")]})),
     nodes=(node(labels={"mem-gb": "128"}), node(labels={"mem-gb": "64"}), node(labels={"mem-gb": "32"})),
     node="node-3")
case("affinity-gt-and-lt-match-nothing", pod(affinity=required_node_affinity({"matchExpressions": [
    expr("cores", "Gt", "8"), expr("cores", "Lt", "16")]})),
     nodes=(node(labels={"cores": "8"}), node(labels={"cores": "16"}), node(labels={"cores": "twelve"})),
     rejected=((NODE_AFFINITY,),) * 3)
# Terms are ORed, expressions within a term ANDed.
case("affinity-terms-ored", pod(affinity=required_node_affinity(
    {"matchExpressions": [expr("a", "In", "1"), expr("b", "In", "2")]}, {"matchExpressions": [expr("c", "In", "3")]})),
     nodes=(node(labels={"a": "1"}), node(labels={"c": "3"}), node(labels={"b": "2"})), node="node-2")
case("affinity-expressions-anded", pod(affinity=required_node_affinity(
    {"matchExpressions": [expr("a", "In", "1"), expr("b", "In", "2")]})),
     nodes=(node(labels={"a": "1"}), node(labels={"a": "1", "b": "2"}), node(labels={"b": "2"})), node="node-2")
# nodeSelector and required node affinity must both match.
case("selector-and-affinity-both-apply", pod(nodeSelector={"disk": "ssd"}, affinity=required_node_affinity(
    {"matchExpressions": [expr("tier", "In", "gold")]})),
     nodes=(node(labels={"disk": "ssd"}), node(labels={"tier": "gold"}), node(labels={"disk": "ssd", "tier": "gold"})),
     node="node-3")
# matchFields on metadata.name: NodeAffinity's PreFilter names the node, the others are
# not even filtered (the fillers neither).
case("match-fields-in", pod(affinity=required_node_affinity({"matchFields": [expr("metadata.name", "In", "node-3")]})),
     node="node-3")
case("match-fields-in-a-tainted-node", pod(affinity=required_node_affinity(
    {"matchFields": [expr("metadata.name", "In", "node-1")]})),
     nodes=(node(taints=[taint("dedicated", "db")]), PLAIN, PLAIN),
     rejected=((untolerated("dedicated", "db"),), None, None), absent_reason=absent("NodeAffinity"), filler=ABSENT)
# NotIn is no PreFilter shortcut: every node is filtered. (A matchFields In/NotIn takes
# exactly one value; two requirements in one term are ANDed.)
case("match-fields-not-in", pod(affinity=required_node_affinity(
    {"matchFields": [expr("metadata.name", "NotIn", "node-1"), expr("metadata.name", "NotIn", "node-2")]})),
     node="node-3")

# NodePorts ----------------------------------------------------------------------------------------
PORT_8080 = {"containerPort": 80, "hostPort": 8080}
case("host-port-taken", pod(containers=[container(ports=[PORT_8080])]),
     existing=(on("node-1", "e-1", containers=[holding(PORT_8080)]),
               on("node-2", "e-2", containers=[holding(PORT_8080)])),
     node="node-3")
case("host-port-taken-everywhere", pod(containers=[container(ports=[PORT_8080])]),
     existing=tuple(on(f"node-{i}", f"e-{i}", containers=[holding(PORT_8080)]) for i in (1, 2, 3)),
     rejected=((PORTS,),) * 3)
# 0.0.0.0 (no hostIP) conflicts with every address; a specific address only with itself.
case("host-port-addresses", pod(containers=[container(ports=[dict(PORT_8080, hostIP="10.0.0.1")])]),
     existing=(on("node-1", "e-1", containers=[holding(dict(PORT_8080, hostIP="127.0.0.1"))]),
               on("node-2", "e-2", containers=[holding(PORT_8080)]),
               on("node-3", "e-3", containers=[holding(dict(PORT_8080, hostIP="10.0.0.1"))])),
     node="node-1")
# UDP 53 is free on every node (they hold TCP 53): three nodes alike, one pod each — a tie.
case("host-port-other-protocol-tie", pod(containers=[container(ports=[{"containerPort": 53, "hostPort": 53,
                                                                       "protocol": "UDP"}])]),
     existing=tuple(on(f"node-{i}", f"e-{i}", containers=[holding({"containerPort": 53, "hostPort": 53})])
                    for i in (1, 2, 3)),
     tied=("node-1", "node-2", "node-3"), node="node-3")


# NodeResourcesFit (filter) ------------------------------------------------------------------------
case("insufficient-cpu-or-memory", pod(cpu="500m", memory="1Gi"),
     existing=(on("node-1", "e-1", cpu="3500m"), on("node-2", "e-2", memory="15Gi")), node="node-3")
# Each node lists every resource it lacks; preemption finds no lower-priority pod to evict.
case("insufficient-everywhere", pod(cpu="500m", memory="1Gi"),
     existing=(on("node-1", "e-1", cpu="3500m"), on("node-2", "e-2", memory="15Gi"),
               on("node-3", "e-3", cpu="3500m", memory="15Gi")),
     rejected=((CPU,), (MEMORY,), (CPU, MEMORY)))
case("bigger-than-any-node", pod(cpu="4"), rejected=((CPU,),) * 3)
case("requests-exactly-fill-the-node", pod(cpu="900m"),
     existing=(on("node-1", "e-1", cpu="3"), on("node-2", "e-2", cpu="3100m"), on("node-3", "e-3", cpu="3100m")),
     node="node-1")
case("containers-add-up", pod(containers=[container("a", memory="4Gi"), container("b", memory="4Gi")]),
     existing=(on("node-1", "e-1", memory="8Gi"), on("node-2", "e-2", memory="7Gi"),
               on("node-3", "e-3", memory="12Gi")),
     node="node-2")  # 8Gi wanted: free 7680Mi, 8704Mi, 3584Mi
# Init containers run one at a time before the app: the pod needs max(3, 1) = 3 cpu, not 4.
case("init-container-takes-the-max", pod(containers=[container(cpu="1")], initContainers=[container("init", cpu="3")]),
     existing=(on("node-1", "e-1", cpu="1"), on("node-2", "e-2", cpu="500m"), on("node-3", "e-3", cpu="3")),
     node="node-2")  # free 2900m, 3400m, 900m
case("init-containers-do-not-add-up", pod(containers=[container(cpu="1")],
                                          initContainers=[container("i1", cpu="2"), container("i2", cpu="2")]),
     existing=(on("node-1", "e-1", cpu="1500m"), on("node-2", "e-2", cpu="2500m"), on("node-3", "e-3", cpu="3")),
     node="node-1")  # max(2, 2, 1) = 2 cpu; free 2400m, 1400m, 900m
# A sidecar (restartPolicy Always) runs beside everything after it: [init 2500m, sidecar 1]
# + app 1 needs max(2500m, 1 + 1) = 2500m; [sidecar 1, init 2500m] needs max(1 + 2500m, 1 + 1) = 3500m.
SIDECAR = container("sidecar", cpu="1", restartPolicy="Always")
SIDECAR_NODES = (node(taints=[taint("a")]), PLAIN, PLAIN)
SIDECAR_PODS = (on("node-2", "e-2", cpu="500m"), on("node-3", "e-3", cpu="1500m"))  # free 3400m, 2400m
case("init-before-sidecar",
     pod(containers=[container(cpu="1")], initContainers=[container("init", cpu="2500m"), SIDECAR]),
     nodes=SIDECAR_NODES, existing=SIDECAR_PODS, node="node-2")
case("sidecar-before-init",
     pod(containers=[container(cpu="1")], initContainers=[SIDECAR, container("init", cpu="2500m")]),
     nodes=SIDECAR_NODES, existing=SIDECAR_PODS, rejected=((untolerated("a"),), (CPU,), (CPU,)))
# Pod overhead is requested too: 3 cpu + 500m > 3400m free on node-1. (Upstream's RuntimeClass
# admission sets spec.overhead; fakekube serves no RuntimeClass, so the pod carries it.)
case("overhead-counts", pod(cpu="3", overhead={"cpu": "500m"}), existing=(on("node-1", "e-1", cpu="500m"),),
     setup=(unschedulable("node-2", "node-3"),), rejected=((CPU,), (UNSCHEDULABLE,), (UNSCHEDULABLE,)))


def gpus(count: str) -> Obj:
    """An extended resource is requested with an equal limit (it cannot be overcommitted)."""
    return {"requests": {"example.com/gpu": count}, "limits": {"example.com/gpu": count}}


GPU_POD = pod(containers=[container(resources=gpus("1"))])


def gpu_user(node_name: str, name: str, count: str) -> Obj:
    return on(node_name, name, containers=[container(image=OTHER_IMAGE, resources=gpus(count))])


case("extended-resource", GPU_POD, nodes=(PLAIN, node(example_com_gpu="2"), PLAIN), node="node-2")
case("extended-resource-used-up", GPU_POD, nodes=(node(example_com_gpu="1"), PLAIN, node(example_com_gpu="2")),
     existing=(gpu_user("node-1", "e-1", "1"), gpu_user("node-3", "e-3", "2")), rejected=((GPU,),) * 3)
case("pod-count", pod(), nodes=(node(pods="2"), node(pods="1"), node(pods="3")),
     existing=(on("node-1", "e-1"), on("node-1", "e-2"), on("node-2", "e-3"), on("node-3", "e-4"), on("node-3", "e-5")),
     node="node-3")
case("too-many-pods-everywhere", pod(), nodes=(node(pods="1"),) * 3,
     existing=(on("node-1", "e-1"), on("node-2", "e-2"), on("node-3", "e-3")), rejected=((TOO_MANY_PODS,),) * 3)
EPHEMERAL_POD = pod(containers=[container(resources={"requests": {"ephemeral-storage": "50Gi"}})])
case("ephemeral-storage", EPHEMERAL_POD,
     nodes=(node(ephemeral_storage="20Gi"), PLAIN, node(ephemeral_storage="10Gi")), node="node-2")
case("ephemeral-storage-nowhere", EPHEMERAL_POD, nodes=(node(ephemeral_storage="20Gi"),) * 3,
     rejected=((EPHEMERAL,),) * 3)
# A best-effort pod requests nothing, so it fits a node whose cpu and memory are all requested.
case("best-effort-fits-a-full-node", pod(), nodes=(PLAIN, node(taints=[taint("a")]), node(taints=[taint("a")])),
     existing=(on("node-1", "e-1", cpu="3900m", memory="15872Mi"),), node="node-1")


# VolumeRestrictions -------------------------------------------------------------------------------
def gce_pd(read_only: bool = False) -> Obj:
    return {"name": "disk", "gcePersistentDisk": {"pdName": "disk-a", "readOnly": read_only}}


case("gce-disk-in-use", pod(volumes=[gce_pd()]),
     existing=(on("node-1", "e-1", volumes=[gce_pd()]), on("node-2", "e-2", volumes=[gce_pd(read_only=True)])),
     node="node-3")
# Two read-only mounts of one disk do not conflict.
case("gce-disk-shared-read-only", pod(volumes=[gce_pd(read_only=True)]),
     nodes=(PLAIN, node(taints=[taint("a")]), node(taints=[taint("a")])),
     existing=(on("node-1", "e-1", volumes=[gce_pd(read_only=True)]),), node="node-1")
case("gce-disk-in-use-everywhere", pod(volumes=[gce_pd()]),
     existing=tuple(on(f"node-{i}", f"e-{i}", volumes=[gce_pd()]) for i in (1, 2, 3)), rejected=((DISK_CONFLICT,),) * 3)
# A ReadWriteOncePod claim in use by a pod anywhere keeps every node out.
case("read-write-once-pod-claim-in-use", pod(volumes=[claim_volume("solo")]),
     objects=(claim("solo", "ReadWriteOncePod"), volume("pv-solo", mode="ReadWriteOncePod")),
     setup=(bind("solo", "pv-solo"),), existing=(on("node-1", "e-1", volumes=[claim_volume("solo")]),),
     rejected=((RWOP,),) * 3)

# VolumeBinding ------------------------------------------------------------------------------------
case("claim-not-found", pod(volumes=[claim_volume("data")]), prefilter='persistentvolumeclaim "data" not found')
case("unbound-immediate-claim", pod(volumes=[claim_volume("data")]), objects=(claim("data"),),
     prefilter="pod has unbound immediate PersistentVolumeClaims")
case("bound-volume-node-affinity", pod(volumes=[claim_volume("data")]),
     objects=(claim("data"), volume("pv-data", on_node="node-2")), setup=(bind("data", "pv-data"),), node="node-2")
case("bound-volume-on-a-tainted-node", pod(volumes=[claim_volume("data")]),
     nodes=(node(taints=[taint("a")]), PLAIN, PLAIN),
     objects=(claim("data"), volume("pv-data", on_node="node-1")), setup=(bind("data", "pv-data"),),
     rejected=((untolerated("a"),), (VOLUME_NODE_CONFLICT,), (VOLUME_NODE_CONFLICT,)))
case("wait-for-first-consumer-without-volumes", pod(volumes=[claim_volume("data")]),
     objects=(storage_class("local", "WaitForFirstConsumer"), claim("data", class_name="local")),
     rejected=((NO_PV_TO_BIND,),) * 3)

# VolumeZone ---------------------------------------------------------------------------------------
ZONED = (node(zone="a"), node(zone="a"), node(zone="b"))
case("volume-zone", pod(volumes=[claim_volume("data")]), nodes=ZONED,
     objects=(claim("data"), volume("pv-data", zone="b")), setup=(bind("data", "pv-data"),), node="node-3")
case("volume-zone-nowhere", pod(volumes=[claim_volume("data")]), nodes=ZONED,
     objects=(claim("data"), volume("pv-data", zone="c")), setup=(bind("data", "pv-data"),),
     rejected=((VOLUME_ZONE,),) * 3)

# InterPodAffinity (filter) ------------------------------------------------------------------------
DB = {"app": "db"}
WEB = {"app": "web"}
case("pod-affinity-hostname", pod(affinity=affinity("podAffinity", term(app="db"))),
     existing=(on("node-2", "db", labels=DB),), node="node-2")
# Zone affinity: node-1 and node-2 share zone a with the db pod; the db's 1 cpu makes node-2
# the less allocated (LeastAllocated node-1: cpu (3900-1000-100)*100//3900 = 71, memory
# (15872-200-200)*100//15872 = 97 → 84; node-2: 97 and 98 → 97).
case("pod-affinity-zone", pod(affinity=affinity("podAffinity", term(ZONE, app="db"))), nodes=ZONED,
     existing=(on("node-1", "db", cpu="1", labels=DB),), node="node-2")
case("pod-affinity-matches-no-pod", pod(affinity=affinity("podAffinity", term(app="db"))),
     existing=(on("node-1", "web", labels=WEB),), rejected=((POD_AFFINITY,),) * 3)
# The first pod of a group with affinity to itself may go anywhere with the topology key.
case("first-pod-of-a-self-affine-group", pod(labels={"app": "batch"}, affinity=affinity(
    "podAffinity", term(ZONE, app="batch"))), nodes=ZONED,
     existing=(on("node-1", "e-1", cpu="2"), on("node-2", "e-2", cpu="2")), node="node-3")
case("pod-anti-affinity", pod(labels=WEB, affinity=affinity("podAntiAffinity", term(app="web"))),
     existing=(on("node-1", "web-1", labels=WEB), on("node-2", "web-2", labels=WEB)), node="node-3")
case("pod-anti-affinity-everywhere", pod(labels=WEB, affinity=affinity("podAntiAffinity", term(app="web"))),
     existing=tuple(on(f"node-{i}", f"web-{i}", labels=WEB) for i in (1, 2, 3)), rejected=((POD_ANTI_AFFINITY,),) * 3)
# An existing pod's anti-affinity keeps the newcomer out of its zone (both zone-a nodes).
case("existing-pods-anti-affinity", pod(),
     nodes=(node(zone="a"), node(zone="a"), node(zone="b", taints=[taint("a")])),
     existing=(on("node-1", "loner", affinity=affinity("podAntiAffinity", term(ZONE, role="test"))),),
     rejected=((EXISTING_ANTI_AFFINITY,), (EXISTING_ANTI_AFFINITY,), (untolerated("a"),)))
# A term's namespaces: its own namespace by default, a namespaceSelector's, a list, or all ({}).
DATA_NS = (namespace("data", team="data"),)
DB_TWICE = (on("node-1", "db", labels=DB), on("node-3", "db", labels=DB, namespace="data"))
case("affinity-own-namespace", pod(affinity=affinity("podAffinity", term(app="db"))), objects=DATA_NS,
     existing=DB_TWICE, node="node-1")
case("affinity-namespace-selector", pod(affinity=affinity("podAffinity", dict(
    term(app="db"), namespaceSelector={"matchLabels": {"team": "data"}}))), objects=DATA_NS, existing=DB_TWICE,
     node="node-3")
case("affinity-namespaces-list", pod(affinity=affinity("podAffinity", dict(term(app="db"), namespaces=["data"]))),
     objects=DATA_NS, existing=DB_TWICE, node="node-3")
case("affinity-empty-namespace-selector-means-all", pod(affinity=affinity("podAffinity", dict(
    term(app="db"), namespaceSelector={}))), objects=DATA_NS,
     existing=(on("node-2", "db", labels=DB, namespace="data"),), node="node-2")
case("anti-affinity-namespace-selector", pod(affinity=affinity("podAntiAffinity", dict(
    term(app="web"), namespaceSelector={"matchLabels": {"team": "data"}}))), objects=DATA_NS,
     existing=(on("node-1", "web-1", labels=WEB, namespace="data"), on("node-2", "web-2", labels=WEB, namespace="data"),
               on("node-3", "web-3", labels=WEB)),
     node="node-3")


# NodeResourcesFit LeastAllocated (score) ----------------------------------------------------------
# score = ((3900 - cpu) * 100 // 3900 + (15872Mi - memory) * 100 // 15872Mi) // 2, requests
# including the pod's (best-effort: 100m, 200Mi). Each node holds a pod with 4Gi and
# node-1 2 cpu: cpu 1800*100//3900 = 46, memory 11576*100//15872 = 72 → 59;
# node-2 1 cpu: 2800*100//3900 = 71, 72 → 71; node-3 3 cpu: 800*100//3900 = 20, 72 → 46.
case("least-allocated-cpu", pod(), existing=(on("node-1", "e-1", cpu="2", memory="4Gi"),
                                              on("node-2", "e-2", cpu="1", memory="4Gi"),
                                              on("node-3", "e-3", cpu="3", memory="4Gi")), node="node-2")
# Memory: node-1 8Gi: cpu (3900-200)*100//3900 = 94, memory (15872-8392)*100//15872 = 47 → 70;
# node-2 2Gi: 94, (15872-2248)*100//15872 = 85 → 89; node-3 12Gi: 94, 21 → 57.
case("least-allocated-memory", pod(), existing=(on("node-1", "e-1", memory="8Gi"), on("node-2", "e-2", memory="2Gi"),
                                                 on("node-3", "e-3", memory="12Gi")), node="node-2")

# NodeResourcesBalancedAllocation (score) ----------------------------------------------------------
# Balanced = int((1 - |cpu fraction - memory fraction| / 2) * 100) on real requests with the pod's.
# Pod 1 cpu / 1Gi. node-1 (2 cpu, 1Gi held): LeastAllocated cpu 900*100//3900 = 23, memory
# 13824*100//15872 = 87 → 55; Balanced |3000/3900 - 2048/15872| / 2 = 0.320 → 67; total 122.
# node-2 (500m, 8Gi held): cpu 2400*100//3900 = 61, memory 6656*100//15872 = 41 → 51; Balanced
# |1500/3900 - 9216/15872| / 2 = 0.098 → 90; total 141. LeastAllocated alone would pick node-1.
BALANCE_NODES = (PLAIN, PLAIN, node(taints=[taint("a")]))
case("balanced-allocation-outweighs-least-allocated", pod(cpu="1", memory="1Gi"), nodes=BALANCE_NODES,
     existing=(on("node-1", "e-1", cpu="2", memory="1Gi"), on("node-2", "e-2", cpu="500m", memory="8Gi")),
     node="node-2")
# node-1 holds 3500m / 1Gi, node-2 2500m / 11Gi. A pod asking 100m / 200Mi: LeastAllocated
# node-1 cpu 300*100//3900 = 7, memory 14648*100//15872 = 92 → 49; node-2 cpu 1300*100//3900
# = 33, memory 4408*100//15872 = 27 → 30. Balanced node-1 |3600/3900 - 1224/15872| / 2 = 0.423
# → 57, node-2 |2600/3900 - 11464/15872| / 2 = 0.028 → 97. Totals 106 and 127: node-2.
IMBALANCED = (on("node-1", "e-1", cpu="3500m", memory="1Gi"), on("node-2", "e-2", cpu="2500m", memory="11Gi"))
case("balanced-allocation-counts-requests", pod(cpu="100m", memory="200Mi"), nodes=BALANCE_NODES,
     existing=IMBALANCED, node="node-2")
# A best-effort pod scores the same LeastAllocated (100m / 200Mi by default) but 1.33's
# BalancedAllocation skips it (kubernetes#129138): 49 against 30, node-1. (Scored, node-1
# would get 58 and node-2 96 from the real requests: node-2.)
case("balanced-allocation-skips-best-effort", pod(), nodes=BALANCE_NODES, existing=IMBALANCED, node="node-1")

# ImageLocality (score) ----------------------------------------------------------------------------
# score = 100 * (clamp(sum of int(size * nodes with image / all nodes), 23Mi, 1000Mi *
# containers) - 23Mi) // (1000Mi * containers - 23Mi). node-2 holds a 3000Mi image:
# 3 nodes: 3000Mi/3 = 1000Mi → 100; 50 nodes: 3000Mi/50 = 60Mi → 100*37//977 = 3. Other scores tie.
case("image-locality", pod(), setup=(images(node_2=[(TEST_IMAGE, 3000)]),), node="node-2")
# Two containers (max 2000Mi). A (1500Mi) on node-1 and node-3, B (6000Mi) on node-3:
# 3 nodes: node-1 1500*2/3 = 1000Mi → 100*977//1977 = 49; node-3 1000 + 6000/3 = 3000 → 100.
# 50 nodes: node-1 1500*2/50 = 60Mi → 100*37//1977 = 1; node-3 60 + 120 = 180Mi → 100*157//1977 = 7.
IMAGE_A, IMAGE_B = "registry.example/a:1", "registry.example/b:1"
case("image-locality-sums-containers", pod(containers=[container("a", IMAGE_A), container("b", IMAGE_B)]),
     setup=(images(node_1=[(IMAGE_A, 1500)], node_3=[(IMAGE_A, 1500), (IMAGE_B, 6000)]),), node="node-3")
# An image without a tag is ":latest" (the only normalization upstream makes).
case("image-locality-latest-tag", pod(image="registry.example/tool"),
     setup=(images(node_3=[("registry.example/tool:latest", 3000)]),), node="node-3")

# TaintToleration (score) --------------------------------------------------------------------------
# Untolerated PreferNoSchedule taints [2, 1, 0], reversed DefaultNormalizeScore
# 100 - count * 100 // 2 = [0, 50, 100], times 3.
case("prefer-no-schedule", pod(), nodes=(node(taints=[taint("a", effect="PreferNoSchedule"),
                                                       taint("b", effect="PreferNoSchedule")]),
                                          node(taints=[taint("c", effect="PreferNoSchedule")]), PLAIN), node="node-3")
# A tolerated PreferNoSchedule taint does not count: [1, 0, 1] → [0, 100, 0].
case("prefer-no-schedule-tolerated", pod(tolerations=[{"key": "spot", "operator": "Exists"}]),
     nodes=(node(taints=[taint("x", effect="PreferNoSchedule")]),
            node(taints=[taint("spot", effect="PreferNoSchedule")]),
            node(taints=[taint("x", effect="PreferNoSchedule")])), node="node-2")

# NodeAffinity (score) -----------------------------------------------------------------------------
# Matching preferred weights [20, 80, 0], DefaultNormalizeScore w * 100 // 80 = [25, 100, 0], times 2.
case("preferred-node-affinity", pod(affinity=preferred_node_affinity(
    (20, {"matchExpressions": [expr("tier", "In", "silver")]}),
    (80, {"matchExpressions": [expr("tier", "In", "gold")]}))),
     nodes=(node(labels={"tier": "silver"}), node(labels={"tier": "gold"}), PLAIN), node="node-2")
# Weights of every matching term add up: [30 + 30, 50, 0] → [100, 83, 0].
case("preferred-node-affinity-sums-terms", pod(affinity=preferred_node_affinity(
    (30, {"matchExpressions": [expr("a", "Exists")]}), (30, {"matchExpressions": [expr("b", "Exists")]}),
    (50, {"matchExpressions": [expr("c", "Exists")]}))),
     nodes=(node(labels={"a": "", "b": ""}), node(labels={"c": ""}), PLAIN), node="node-1")

# InterPodAffinity (score) -------------------------------------------------------------------------
# Scores are normalized min-max: 100 * (s - min) // (max - min), times 2. Best-effort pods
# make LeastAllocated 97 on an empty node and 95 on a node with one such pod.
# Preferred affinity to the cache (weight 50): [0, 0, 50] → [0, 0, 100]: node-3 200 + 95.
case("preferred-pod-affinity", pod(affinity=preferred("podAffinity", 50, term(app="cache"))),
     existing=(on("node-3", "cache", labels={"app": "cache"}),), node="node-3")
# Preferred anti-affinity to noisy pods (weight 100): [-100, -100, 0] → [0, 0, 100].
case("preferred-pod-anti-affinity", pod(affinity=preferred("podAntiAffinity", 100, term(app="noisy"))),
     existing=(on("node-1", "noisy-1", labels={"app": "noisy"}), on("node-2", "noisy-2", labels={"app": "noisy"})),
     node="node-3")
# An existing pod's *required* affinity to the newcomer counts hardPodAffinityWeight (1):
# [0, 1, 0] → [0, 100, 0]: node-2 200 + 95 beats 97.
case("existing-pods-required-affinity-scores", pod(),
     existing=(on("node-2", "friend", affinity=affinity("podAffinity", term(role="test"))),), node="node-2")
# Existing pods' preferred terms count too: node-1's pod prefers away from the newcomer
# (-100), node-2's prefers it (+10): [-100, 10, 0] → [0, 100, 100*100//110 = 90]; one pod everywhere.
case("existing-pods-preferred-terms-score", pod(),
     existing=(on("node-1", "shy", affinity=preferred("podAntiAffinity", 100, term(role="test"))),
               on("node-2", "friendly", affinity=preferred("podAffinity", 10, term(role="test"))),
               on("node-3", "plain")), node="node-2")

# Combinations -------------------------------------------------------------------------------------
# PreferNoSchedule (weight 3) outweighs a preferred label (weight 2): node-1 carries both:
# 0 + 200 + 97; node-2 300 + 0 + 97 = 397; node-3 (one pod) 300 + 0 + 95.
case("taint-preference-beats-node-preference", pod(affinity=preferred_node_affinity(
    (100, {"matchExpressions": [expr("tier", "In", "gold")]}))),
     nodes=(node(labels={"tier": "gold"}, taints=[taint("a", effect="PreferNoSchedule")]), PLAIN, PLAIN),
     existing=(on("node-3", "e-3"),), node="node-2")
# Even a weight-1 preference normalizes to 100 (times 2) and beats a 3-cpu load: node-2
# LeastAllocated cpu (3900-3100)*100//3900 = 20, memory 97 → 58; 200 + 58 against 97.
case("node-preference-beats-least-allocated", pod(affinity=preferred_node_affinity(
    (1, {"matchExpressions": [expr("tier", "In", "gold")]}))),
     nodes=(PLAIN, node(labels={"tier": "gold"}), PLAIN), existing=(on("node-2", "e-2", cpu="3"),), node="node-2")
case("required-node-affinity-excludes-the-preferred-node", pod(affinity={"nodeAffinity": {
    **required_node_affinity({"matchExpressions": [expr("tier", "In", "gold", "silver")]})["nodeAffinity"],
    **preferred_node_affinity((100, {"matchExpressions": [expr("disk", "In", "ssd")]}))["nodeAffinity"]}}),
     nodes=(node(labels={"tier": "bronze", "disk": "ssd"}), node(labels={"tier": "gold"}),
            node(labels={"tier": "silver", "disk": "ssd"})), node="node-3")
# The preferred node is full: of the other two, node-2 is empty (97) and node-3 holds
# 1 cpu ((3900-2100)*100//3900 = 46, memory (15872-1224)*100//15872 = 92 → 69).
case("preferred-node-too-full", pod(cpu="1", memory="1Gi", affinity=preferred_node_affinity(
    (100, {"matchExpressions": [expr("tier", "In", "gold")]}))),
     nodes=(node(labels={"tier": "gold"}), PLAIN, PLAIN),
     existing=(on("node-1", "e-1", cpu="3"), on("node-3", "e-3", cpu="1")), node="node-2")
# Three filters, three reasons: anti-affinity (node-1), cpu (node-2), cordon (node-3).
case("anti-affinity-resources-and-cordon",
     pod(cpu="1", labels=WEB, affinity=affinity("podAntiAffinity", term(app="web"))),
     setup=(unschedulable("node-3"),), existing=(on("node-1", "web-1", labels=WEB), on("node-2", "e-2", cpu="3500m")),
     rejected=((POD_ANTI_AFFINITY,), (CPU,), (UNSCHEDULABLE,)))
# Preferred pod affinity (weight 2 after normalizing) beats a 3-cpu load: node-3 200 + 58 against 97.
case("pod-preference-beats-least-allocated", pod(affinity=preferred("podAffinity", 1, term(app="cache"))),
     existing=(on("node-3", "cache", cpu="3", labels={"app": "cache"}),), node="node-3")
# The cache's node also carries a PreferNoSchedule taint: TaintToleration [300, 300, 0],
# InterPodAffinity [0, 0, 200], LeastAllocated [97, 97, 95]: node-1 and node-2 tie at 397.
case("taint-preference-beats-pod-preference-tie", pod(affinity=preferred("podAffinity", 100, term(app="cache"))),
     nodes=(PLAIN, PLAIN, node(taints=[taint("a", effect="PreferNoSchedule")])),
     existing=(on("node-3", "cache", labels={"app": "cache"}),), tied=("node-1", "node-2"), node="node-1")
# A nodeSelector, a toleration and a host port together leave one node.
case("selector-toleration-and-port", pod(nodeSelector={"pool": "edge"}, tolerations=[
    {"key": "edge", "operator": "Exists"}], containers=[container(ports=[PORT_8080])]),
     nodes=(node(labels={"pool": "edge"}, taints=[taint("edge")]),) * 2 + (node(taints=[taint("edge")]),),
     existing=(on("node-1", "e-1", tolerations=[{"operator": "Exists"}], containers=[holding(PORT_8080)]),),
     node="node-2")

# PodTopologySpread (filter) -----------------------------------------------------------------------
# Placing the pod in a domain must keep count + 1 - (global minimum) <= maxSkew.
# Zone a holds 2 web pods, zone b none: a gives 2 + 1 - 0 = 3 > 1, b gives 1.
case("spread-zone", pod(labels=WEB, topologySpreadConstraints=[spread(1, ZONE)]), nodes=ZONED,
     existing=(on("node-1", "web-1", labels=WEB), on("node-2", "web-2", labels=WEB)), node="node-3")
# minDomains 3 with only 2 zones: the global minimum counts as 0, so 1 + 1 - 0 = 2 > 1 in both zones.
case("spread-min-domains", pod(labels=WEB, topologySpreadConstraints=[spread(1, ZONE, minDomains=3)]), nodes=ZONED,
     existing=(on("node-1", "web-1", labels=WEB), on("node-3", "web-3", labels=WEB)), rejected=((SPREAD,),) * 3)
# A node without the topology key is UnschedulableAndUnresolvable; zone a (2 pods) is too
# skewed against zone b (0 pods; its cordoned node still counts as a domain).
case("spread-missing-label-skew-and-cordon", pod(labels=WEB, topologySpreadConstraints=[spread(1, ZONE)]),
     nodes=(node(zone="a"), PLAIN, node(zone="b")), setup=(unschedulable("node-3"),),
     existing=(on("node-1", "web-1", labels=WEB), on("node-1", "web-2", labels=WEB)),
     rejected=((SPREAD,), (SPREAD_LABEL,), (UNSCHEDULABLE,)))
# By hostname, with the pod selecting pool=main (nodeAffinityPolicy Honor: only those nodes
# are domains, not the fillers with no web pod): every node holds one web pod, minimum 1,
# 1 + 1 - 1 = 1 fits everywhere; the web pods on node-1 and node-3 ask 1 cpu: node-2 (97 vs 84).
MAIN = node(labels={"pool": "main"})
case("spread-hostname-honors-node-selector", pod(labels=WEB, nodeSelector={"pool": "main"},
                                                 topologySpreadConstraints=[spread(1, HOST)]),
     nodes=(MAIN, MAIN, MAIN),
     existing=(on("node-1", "web-1", cpu="1", labels=WEB), on("node-2", "web-2", labels=WEB),
               on("node-3", "web-3", cpu="1", labels=WEB)), node="node-2")
# nodeTaintsPolicy: node-3 (tainted, no web pod) is a domain with 0 pods under Ignore (the
# default), so node-1 and node-2 (1 each) are too skewed; under Honor it is left out, the
# minimum is 1, and node-1 and node-2 tie.
TAINTED_THIRD = (PLAIN, PLAIN, node(taints=[taint("a")]))
WEB_ON_TWO = (on("node-1", "web-1", labels=WEB), on("node-2", "web-2", labels=WEB))
case("spread-taints-ignored", pod(labels=WEB, topologySpreadConstraints=[spread(1, HOST)]), nodes=TAINTED_THIRD,
     existing=WEB_ON_TWO, rejected=((SPREAD,), (SPREAD,), (untolerated("a"),)))
case("spread-taints-honored-tie",
     pod(labels=WEB, topologySpreadConstraints=[spread(1, HOST, nodeTaintsPolicy="Honor")]),
     nodes=TAINTED_THIRD, existing=WEB_ON_TWO, tied=("node-1", "node-2"), node="node-1")

# PodTopologySpread (score) ------------------------------------------------------------------------
# ScheduleAnyway: per node round(count * log(domains + 2) + maxSkew - 1), then
# 100 * (max + min - s) // max, times 2. Zones a (2 web pods) and b: log 4 = 1.386,
# node-1 and node-2 round(2.77) = 3, node-3 0 → [0, 0, 100]. node-3 holds 3 cpu
# (LeastAllocated 58 against 95): 200 + 58 wins.
case("soft-spread-zone", pod(labels=WEB, topologySpreadConstraints=[spread(1, ZONE, "ScheduleAnyway")]), nodes=ZONED,
     existing=(on("node-1", "web-1", labels=WEB), on("node-2", "web-2", labels=WEB), on("node-3", "e-3", cpu="3")),
     node="node-3")
# A pod without constraints gets the system defaults (hostname maxSkew 3, zone maxSkew 5,
# ScheduleAnyway) when a Service selects it. Hostname over 3 nodes: log 5 = 1.609; web pods
# [2, 1, 0] → round(2*1.609 + 2) = 5, round(1.609 + 2) = 4, 2 → 100 * (7 - s) // 5 =
# [40, 60, 100], times 2; no node has a zone label, so the zone constraint adds nothing.
# LeastAllocated [94, 95, 71] (node-3 holds 2 cpu). Totals [174, 215, 271]: node-3
# (without the Service: node-2).
WEB_SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": WEB, "ports": [{"port": 80}]}}
case("soft-spread-system-defaults", pod(labels=WEB), objects=(WEB_SERVICE,),
     existing=(on("node-1", "web-1", labels=WEB), on("node-1", "web-2", labels=WEB), on("node-2", "web-3", labels=WEB),
               on("node-3", "e-3", cpu="2")), node="node-3")


# Ties ---------------------------------------------------------------------------------------------
# Three empty nodes, a best-effort pod: every score alike; the seeded stream picks.
case("empty-nodes-tie", pod(), tied=("node-1", "node-2", "node-3"), node="node-3")


# -- running the table ------------------------------------------------------------------------
@pytest.mark.parametrize("total", [3, 50])
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_placement(case: Case, total: int) -> None:
    cluster = run(case, total)
    if case.node is not None:
        assert node_of(cluster) == case.node
        if case.tied:
            assert case.node in case.tied
        scheduled = scheduler_events(cluster, "Scheduled")
        if case.bypass:
            assert scheduled == []
        else:
            assert scheduled == [f"Successfully assigned default/test to {case.node}"]
            assert pod_scheduled(cluster)["status"] == "True"
        assert scheduler_events(cluster, "FailedScheduling") == []
        return
    expected = expected_message(case, total)
    assert node_of(cluster) is None
    assert scheduler_events(cluster, "FailedScheduling") == [expected]
    condition = pod_scheduled(cluster)
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", expected)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.tied])
def test_ties_cover_exactly_the_tied_nodes(case: Case) -> None:
    """A tie is genuine: over a dozen seeds the pick ranges over exactly the tied nodes."""
    picks = {node_of(run(case, 3, seed)) for seed in range(1, 13)}
    assert picks == set(case.tied)


def test_expected_messages_read_as_upstreams() -> None:
    """The helper behind every expected message, against texts kube-scheduler prints."""
    assert fit_error(3, [(untolerated("node-role.kubernetes.io/control-plane"),), (CPU,), (CPU,)]) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod.")
    assert fit_error(46, [(TOO_MANY_PODS,)] + [None] * 45, absent("NodeAffinity")).startswith(
        "0/46 nodes are available: 1 Too many pods, 45 node(s) didn't satisfy plugin(s) [NodeAffinity]. ")
    [first_failing] = [c for c in CASES if c.id == "first-failing-filter-is-reported"]
    assert expected_message(first_failing, 50) == (
        "0/50 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {a: }, "
        "1 node(s) were unschedulable, 47 node(s) had untolerated taint {filler: true}. "
        "preemption: 0/50 nodes are available: 1 No preemption victims found for incoming pod, "
        "49 Preemption is not helpful for scheduling.")
