"""The scheduling framework's vocabulary: statuses, resources, pod and node infos, cycle state.

Upstream: ``pkg/scheduler/framework/interface.go``, ``types.go`` and ``cycle_state.go``.
A plugin is a class with a ``name`` and any of these methods; the framework (runtime.py)
calls each method at its extension point, in the profile's plugin order:

* ``pre_enqueue(pod) -> Status | None`` — may the pod enter activeQ at all (gates)?
* ``sort_key(queued) -> tuple`` — QueueSort: activeQ pops the smallest key first;
* ``pre_filter(state, pod_info) -> (set of node names | None, Status | None)`` — compute
  per-cycle data; ``SKIP`` drops the plugin's filter for this cycle; a name set narrows
  the nodes evaluated (upstream's PreFilterResult);
* ``filter(state, pod_info, node_info) -> Status | None`` — None means the node fits;
* ``post_filter(state, pod_info, statuses) -> (nominated node name | None, Status)`` —
  after every node failed (preemption);
* ``pre_score(state, pod_info, node_infos) -> Status | None`` — ``SKIP`` drops its score;
* ``score(state, pod_info, node_info) -> int`` and ``normalize_score(state, pod_info,
  scores)`` (a list parallel to the feasible nodes, changed in place to 0…100);
* ``reserve(state, pod_info, node_name) -> Status | None`` / ``unreserve(...)``,
  ``pre_bind(state, pod_info, node_name) -> Status | None``,
  ``bind(state, pod_info, node_name) -> Status | None`` (``SKIP``: the next binder);
* ``add_pod`` / ``remove_pod(state, pod_info, other: PodInfo, node_info) -> Status | None``
  — upstream's PreFilterExtensions, so preemption can ask "would it fit without them?";
* ``events_to_register() -> list[EventHint]`` — the cluster events that may make a pod
  this plugin rejected schedulable, each with an optional queueing hint.

Success is ``None`` everywhere a status is returned: the filter loop runs once per node
per plugin, and not building a Status object for a fit is most of its speed.
"""

from __future__ import annotations

import enum
import itertools
import math
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from fakekube.objects.pods import ResourceList, pod_requests
from fakekube.objects.quantity import parse_quantity
from fakekube.objects.taints import node_taints

Obj = dict[str, Any]

#: Every NodeInfo change takes the next number: a (node name, generation) pair names one
#: state of one node for good (a node deleted and re-added does not reuse numbers), so
#: plugins may memoize per-node results on it.
_GENERATIONS = itertools.count(1)

#: Upstream's MaxNodeScore: every normalized score is in 0…100.
MAX_NODE_SCORE = 100

#: What a container requesting no cpu or memory counts as when *scoring* (schedutil's
#: DefaultMilliCPURequest and DefaultMemoryRequest), so such pods still spread out.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


class Code(enum.IntEnum):
    """framework.Code."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


class Status(NamedTuple):
    """A plugin's verdict with its reasons (the texts FailedScheduling counts per node)."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


def unschedulable(plugin: str, *reasons: str) -> Status:
    """Unschedulable on this node: preemption may help."""
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    """UnschedulableAndUnresolvable: nothing done to other pods would make this node fit."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


def error(plugin: str, message: str) -> Status:
    """An internal error: the cycle fails with reason SchedulerError."""
    return Status(Code.ERROR, (message,), plugin)


SKIP = Status(Code.SKIP)


class Resources:
    """framework.Resource: cpu in millicores, memory and ephemeral storage in bytes, a pod
    count, and scalar resources (extended, hugepages-*, attachable volumes) by name."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pods", "scalar")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0, allowed_pods: int = 0,
                 scalar: dict[str, int] | None = None) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pods = allowed_pods
        self.scalar: dict[str, int] = scalar or {}

    @classmethod
    def from_list(cls, resources: Mapping[str, Fraction]) -> "Resources":
        """From exact quantities, rounded up as upstream's MilliValue/Value."""
        out = cls()
        for name, value in resources.items():
            if name == CPU:
                out.milli_cpu = math.ceil(value * 1000)
            elif name == MEMORY:
                out.memory = math.ceil(value)
            elif name == EPHEMERAL_STORAGE:
                out.ephemeral_storage = math.ceil(value)
            elif name == PODS:
                out.allowed_pods = math.ceil(value)
            elif is_scalar_resource(name):
                out.scalar[name] = math.ceil(value)
        return out

    def add(self, other: "Resources", sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pods += sign * other.allowed_pods
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * value

    def get(self, name: str) -> int:
        """The amount of one resource by its API name."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pods
        return self.scalar.get(name, 0)

    def copy(self) -> "Resources":
        return Resources(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pods, dict(self.scalar))

    def __repr__(self) -> str:
        return (f"Resources(cpu={self.milli_cpu}m, memory={self.memory}, ephemeral={self.ephemeral_storage}, "
                f"pods={self.allowed_pods}, scalar={self.scalar})")


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended (domain-qualified), hugepages-*, native
    kubernetes.io/ prefixed, or attachable-volumes-* resources."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def non_zero_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(milli cpu, memory bytes) for scoring: PodRequests with every container's missing cpu
    or memory request replaced by 100m / 200Mi (upstream's NonMissingContainerRequests)."""
    spec = pod.get("spec") or {}

    def defaulted(containers: Iterable[Mapping[str, Any]]) -> list[Obj]:
        out = []
        for container in containers:
            requests = dict((container.get("resources") or {}).get("requests") or {})
            requests.setdefault(CPU, "100m")
            requests.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
            out.append(dict(container, resources={"requests": requests}))
        return out

    filled = {"spec": dict(spec, containers=defaulted(spec.get("containers") or []),
                           initContainers=defaulted(spec.get("initContainers") or []))}
    total = pod_requests(filled)
    return math.ceil(total.get(CPU, Fraction(0)) * 1000), math.ceil(total.get(MEMORY, Fraction(0)))


def _host_ports(pod: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """(hostIP, protocol, hostPort) of every regular container's port with a hostPort
    (upstream 1.33's HostPortInfo keys; an empty hostIP is 0.0.0.0; init containers'
    ports count from 1.34 only)."""
    spec = pod.get("spec") or {}
    ports = []
    for container in spec.get("containers") or []:
        for port in container.get("ports") or []:
            host_port = port.get("hostPort") or 0
            if host_port > 0:
                ports.append((port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", int(host_port)))
    return tuple(ports)


class PodInfo:
    """A pod with what every cycle would otherwise recompute (upstream's PodInfo).

    ``data`` is per-plugin parse cache (a plugin's parsed affinity terms, say), keyed by
    the plugin's name; a PodInfo is rebuilt whenever its pod changes, so it never goes stale.

    Immutable once made (a newer version of the pod is a new PodInfo: :meth:`for_pod`,
    :meth:`with_pod`), so snapshots (cluster/statecopy.py) refer to it rather than copy it.
    Its ``data`` then is shared too, which is sound: every entry is an immutable value
    derived from the pod alone, the same whichever cluster computes it first.
    """

    __slots__ = ("pod", "key", "uid", "namespace", "name", "labels", "requests", "non_zero_cpu",
                 "non_zero_memory", "host_ports", "has_affinity", "has_required_anti_affinity", "priority", "data")
    SNAPSHOT_SHARED = True

    def __init__(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.namespace: str = meta.get("namespace") or ""
        self.name: str = meta.get("name") or ""
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = meta.get("uid") or ""
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        self.priority: int = spec.get("priority") or 0
        self.requests = Resources.from_list(_requests_or_empty(pod))
        self.non_zero_cpu, self.non_zero_memory = non_zero_requests(pod)
        self.host_ports = _host_ports(pod)
        affinity = spec.get("affinity") or {}
        anti = affinity.get("podAntiAffinity") or {}
        self.has_affinity = bool(affinity.get("podAffinity") or anti)
        self.has_required_anti_affinity = bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))
        self.data: dict[str, Any] = {}

    def for_pod(self, pod: Obj) -> "PodInfo":
        """A PodInfo of a later version of this pod; what depends only on the containers,
        overhead and affinity is reused when those did not change (a binding sets only
        nodeName), the rest is read afresh."""
        old_spec, new_spec = self.pod.get("spec") or {}, pod.get("spec") or {}
        if any(old_spec.get(k) != new_spec.get(k) for k in _RESOURCE_FIELDS):
            return PodInfo(pod)
        other = PodInfo.__new__(PodInfo)
        meta = pod.get("metadata") or {}
        other.pod, other.namespace, other.name, other.key = pod, self.namespace, self.name, self.key
        other.uid = meta.get("uid") or ""
        other.labels = meta.get("labels") or {}
        other.priority = new_spec.get("priority") or 0
        other.requests, other.non_zero_cpu, other.non_zero_memory = self.requests, self.non_zero_cpu, self.non_zero_memory
        other.host_ports = self.host_ports
        other.has_affinity, other.has_required_anti_affinity = self.has_affinity, self.has_required_anti_affinity
        other.data = self.data if other.labels == self.labels else {}
        return other

    def with_pod(self, pod: Obj) -> "PodInfo":
        """This PodInfo for a later version of its pod that changes nothing it was computed
        from (what used to be an in-place ``info.pod = pod``)."""
        other = PodInfo.__new__(PodInfo)
        for name in PodInfo.__slots__:
            setattr(other, name, getattr(self, name))
        other.pod = pod
        return other

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


#: The spec fields a PodInfo's computed parts depend on.
_RESOURCE_FIELDS = ("containers", "initContainers", "overhead", "affinity")


def _requests_or_empty(pod: Mapping[str, Any]) -> ResourceList:
    try:
        return pod_requests(pod)
    except ValueError:  # validation refuses bad quantities; a stored one counts as nothing
        return {}


class NodeInfo:
    """A node with the pods the scheduler placed on it and what they take (upstream's
    NodeInfo). Built and kept by the cache; plugins only read it."""

    __slots__ = ("name", "labels", "taints", "unschedulable", "allocatable", "requested",
                 "non_zero_cpu", "non_zero_memory", "pods", "pods_with_affinity",
                 "pods_with_required_anti_affinity", "used_ports", "images", "generation")

    def __init__(self, node: Obj) -> None:
        self.pods: dict[str, PodInfo] = {}
        self.pods_with_affinity: dict[str, PodInfo] = {}
        self.pods_with_required_anti_affinity: dict[str, PodInfo] = {}
        self.requested = Resources()
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports: dict[tuple[str, str, int], int] = {}
        self.generation = 0
        self.set_node(node)

    def set_node(self, node: Obj) -> None:
        """Keep what plugins read of ``node``, not the object itself (the scheduler skips
        heartbeats, so the version it last synced may be older than the stored one)."""
        meta = node.get("metadata") or {}
        status = node.get("status") or {}
        self.name: str = meta.get("name") or ""
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        self.taints = node_taints(node)
        self.unschedulable = bool((node.get("spec") or {}).get("unschedulable"))
        self.allocatable = Resources.from_list(_quantities(status.get("allocatable") or {}))
        self.images: dict[str, int] = {}
        for image in status.get("images") or []:
            for image_name in image.get("names") or []:
                self.images[image_name] = int(image.get("sizeBytes") or 0)
        self.generation = next(_GENERATIONS)

    def add_pod(self, info: PodInfo) -> None:
        self.pods[info.key] = info
        if info.has_affinity:
            self.pods_with_affinity[info.key] = info
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity[info.key] = info
        self._account(info, 1)

    def remove_pod(self, key: str) -> PodInfo | None:
        info = self.pods.pop(key, None)
        if info is not None:
            self.pods_with_affinity.pop(key, None)
            self.pods_with_required_anti_affinity.pop(key, None)
            self._account(info, -1)
        return info

    def _account(self, info: PodInfo, sign: int) -> None:
        self.requested.add(info.requests, sign)
        self.non_zero_cpu += sign * info.non_zero_cpu
        self.non_zero_memory += sign * info.non_zero_memory
        for port in info.host_ports:
            count = self.used_ports.get(port, 0) + sign
            if count:
                self.used_ports[port] = count
            else:
                self.used_ports.pop(port, None)
        self.generation = next(_GENERATIONS)

    def clone(self) -> "NodeInfo":
        """A copy whose pods can be removed or added without touching this one (preemption's
        what-if); the PodInfos themselves are shared."""
        other = NodeInfo.__new__(NodeInfo)
        other.name, other.labels = self.name, self.labels
        other.taints, other.unschedulable, other.allocatable = self.taints, self.unschedulable, self.allocatable
        other.images = self.images
        other.pods = dict(self.pods)
        other.pods_with_affinity = dict(self.pods_with_affinity)
        other.pods_with_required_anti_affinity = dict(self.pods_with_required_anti_affinity)
        other.requested = self.requested.copy()
        other.non_zero_cpu, other.non_zero_memory = self.non_zero_cpu, self.non_zero_memory
        other.used_ports = dict(self.used_ports)
        other.generation = self.generation
        return other

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)}, requested={self.requested})"


def _quantities(values: Mapping[str, Any]) -> ResourceList:
    out: ResourceList = {}
    for name, value in values.items():
        try:
            out[name] = parse_quantity(value)
        except (ValueError, TypeError):
            continue
    return out


class CycleState:
    """Per-cycle data plugins share between their extension points (upstream's CycleState):
    ``state.data[plugin_name]`` is a plugin's own, set in its PreFilter/PreScore."""

    __slots__ = ("data", "skip_filter", "skip_score", "node_name_plugins")

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        #: The PreFilter plugins that narrowed the nodes to a name set (for the message
        #: the nodes they left out get).
        self.node_name_plugins: list[str] = []

    def clone(self) -> "CycleState":
        """For preemption's what-ifs: plugins whose data changes with add_pod/remove_pod
        store something with a ``clone()`` method; everything else is shared."""
        other = CycleState()
        other.data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self.data.items()}
        other.skip_filter = set(self.skip_filter)
        other.skip_score = set(self.skip_score)
        other.node_name_plugins = list(self.node_name_plugins)
        return other


class QueuedPodInfo:
    """A pod in the scheduling queue (upstream's QueuedPodInfo)."""

    __slots__ = ("info", "timestamp_s", "initial_attempt_s", "attempts", "unschedulable_plugins",
                 "pending_plugins", "gated_by", "seq", "backoff_expiry_s", "consecutive_errors")

    def __init__(self, info: PodInfo, now_s: float, seq: int) -> None:
        self.info = info
        self.timestamp_s = now_s
        self.initial_attempt_s: float | None = None
        self.attempts = 0
        self.unschedulable_plugins: frozenset[str] = frozenset()
        self.pending_plugins: frozenset[str] = frozenset()
        self.gated_by: str = ""
        self.seq = seq
        self.backoff_expiry_s = 0.0
        self.consecutive_errors = 0

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.info.key}, attempts={self.attempts})"


# -- cluster events and queueing hints ------------------------------------------------
class Action(enum.IntFlag):
    """framework.ActionType: what happened to an object (updates split by what changed)."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE = 4096  # any other update (and every update of a resource with no finer split)

    @classmethod
    def all(cls) -> "Action":
        out = cls(0)
        for member in cls:
            out |= member
        return out


#: Resources named in cluster events. Assigned and unscheduled pods are separate, as upstream.
NODE = "Node"
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnscheduledPod"
PVC = "PersistentVolumeClaim"
PV = "PersistentVolume"
STORAGE_CLASS = "StorageClass"
CSI_NODE = "CSINode"
CSI_DRIVER = "CSIDriver"
CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
NAMESPACE = "Namespace"
WILDCARD = "*"


class ClusterEvent(NamedTuple):
    resource: str
    action: Action
    label: str = ""


class Hint(enum.Enum):
    QUEUE = "Queue"
    SKIP = "QueueSkip"


#: A queueing hint: (pod, old object or None, new object or None) -> Queue or QueueSkip.
QueueingHint = Callable[[Obj, "Obj | None", "Obj | None"], Hint]


class EventHint(NamedTuple):
    """One event a plugin registers, with the hint that filters it (None: always Queue)."""

    event: ClusterEvent
    hint: QueueingHint | None = None


class Diagnosis:
    """Why a pod fits nowhere: each failed node's status, the plugins that rejected it."""

    __slots__ = ("node_statuses", "unschedulable_plugins", "pending_plugins", "pre_filter_msg", "post_filter_msg",
                 "absent_status")

    def __init__(self, node_statuses: dict[str, Status] | None = None, unschedulable_plugins: set[str] | None = None,
                 pending_plugins: set[str] | None = None, pre_filter_msg: str = "", post_filter_msg: str = "",
                 absent_status: Status | None = None) -> None:
        self.node_statuses: dict[str, Status] = {} if node_statuses is None else node_statuses
        self.unschedulable_plugins: set[str] = set() if unschedulable_plugins is None else unschedulable_plugins
        self.pending_plugins: set[str] = set() if pending_plugins is None else pending_plugins
        self.pre_filter_msg = pre_filter_msg
        self.post_filter_msg = post_filter_msg
        #: The status every node not in node_statuses has (a PreFilter result that left it out).
        self.absent_status = absent_status
