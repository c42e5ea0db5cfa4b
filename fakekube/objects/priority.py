"""Pod priority: the system PriorityClasses and how the Priority admission plugin resolves
a new pod's ``spec.priority`` and ``spec.preemptionPolicy`` (upstream
``plugin/pkg/admission/priority`` and ``pkg/apis/scheduling``, 1.33).

Pure rules, no store: the caller passes the PriorityClasses it read.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

Obj = dict[str, Any]

SYSTEM_NODE_CRITICAL = "system-node-critical"
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
#: ``scheduling.SystemCriticalPriority``; system-node-critical is 1000 above it.
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
#: The priority of a pod naming no class when no class is ``globalDefault``.
DEFAULT_PRIORITY = 0
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"

#: The classes the apiserver creates at start, as ``kubectl get priorityclasses -o yaml`` shows
#: them on a fresh 1.33 cluster (``globalDefault: false`` is omitted on the wire).
SYSTEM_PRIORITY_CLASSES: tuple[Obj, ...] = (
    {"metadata": {"name": SYSTEM_NODE_CRITICAL}, "value": SYSTEM_CRITICAL_PRIORITY + 1000,
     "description": "Used for system critical pods that must not be moved from their current node.",
     "preemptionPolicy": PREEMPT_LOWER_PRIORITY},
    {"metadata": {"name": SYSTEM_CLUSTER_CRITICAL}, "value": SYSTEM_CRITICAL_PRIORITY,
     "description": "Used for system critical pods that must run in the cluster, but can be moved to another "
                    "node if necessary.",
     "preemptionPolicy": PREEMPT_LOWER_PRIORITY},
)


class PriorityRefused(Exception):
    """Why the Priority plugin refuses a pod (upstream answers 403 Forbidden with this text)."""


class Resolved(NamedTuple):
    """What a new pod gets: the class it runs under ("" for none), its priority and policy."""

    class_name: str
    priority: int
    preemption_policy: str


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """The ``globalDefault`` class; if a race left several, the lowest value wins (upstream),
    and among equal values the first name (upstream leaves that to map order)."""
    defaults = [pc for pc in classes if pc.get("globalDefault")]
    if not defaults:
        return None
    return min(defaults, key=lambda pc: (pc.get("value") or 0, pc["metadata"]["name"]))


def resolve(class_name: str, named: Obj | None, classes: Iterable[Obj]) -> Resolved:
    """``establishPriority``: the named class (``named`` is it, or None if it does not exist),
    else the global default class, else priority 0 and ``PreemptLowerPriority``.

    Any namespace may name the system classes (the kube-system-only rule went in 1.17)."""
    if class_name:
        if named is None:
            raise PriorityRefused(f"no PriorityClass with name {class_name} was found")
        return Resolved(class_name, named.get("value") or 0, named.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)
    pc = default_class(classes)
    if pc is None:
        return Resolved("", DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY)
    return Resolved(pc["metadata"]["name"], pc.get("value") or 0, pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)


def admit(spec: Obj, resolved: Resolved) -> None:
    """Write ``resolved`` into a new pod's spec, refusing values the client set that differ
    from it (``admitPod`` on create; values equal to the computed ones are accepted)."""
    priority = spec.get("priority")
    if priority is not None and priority != resolved.priority:
        raise PriorityRefused(f"the integer value of priority ({priority}) must not be provided in pod spec; "
                              f"priority admission controller computed {resolved.priority} from the given "
                              "PriorityClass name")
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy != resolved.preemption_policy:
        raise PriorityRefused(f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; "
                              f"priority admission controller computed {resolved.preemption_policy} from the "
                              "given PriorityClass name")
    if resolved.class_name:
        spec["priorityClassName"] = resolved.class_name
    spec["priority"] = resolved.priority
    spec["preemptionPolicy"] = resolved.preemption_policy


def keep_on_update(new_spec: Obj, old_spec: Obj) -> None:
    """On update the plugin keeps what it set at create when a client leaves it out (pod
    validation then refuses any other change to either field)."""
    for name in ("priority", "preemptionPolicy"):
        if new_spec.get(name) is None and old_spec.get(name) is not None:
            new_spec[name] = old_spec[name]
