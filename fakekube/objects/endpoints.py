"""What the endpoints and EndpointSlice controllers agree on: which pods back a Service.

Both controllers select pods with the Service's selector, decide which pods belong in
its endpoints, resolve each service port to a container port per pod, and work out
which Services a pod change concerns. Sources (Kubernetes 1.33):
``staging/src/k8s.io/endpointslice/util/controller_utils.go`` (``ShouldPodBeInEndpoints``,
``ShouldSetHostname``, ``podEndpointsChanged``, ``GetPodUpdateProjectionKey``,
``GetServicesToUpdate``), ``.../endpointslice/utils.go`` (``FindPort``) and
``.../util/trigger_time_tracker.go``. Everything here is pure except
:class:`TriggerTimeTracker`, which a controller owns.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import datetime
from typing import Any, Iterable, Mapping, NamedTuple

from fakekube.clock import parse_time
from fakekube.objects.pods import is_pod_ready, is_pod_terminal, pod_condition

Obj = dict[str, Any]

CLUSTER_IP_NONE = "None"


def service_selector(service: Mapping[str, Any]) -> dict[str, str] | None:
    """The Service's selector, or None when it has none (an empty selector is stored as none
    upstream: such a Service gets its endpoints from someone else)."""
    selector = (service.get("spec") or {}).get("selector")
    return dict(selector) if selector else None


def selects(selector: Mapping[str, str], labels: Mapping[str, str] | None) -> bool:
    """``labels.Set(selector).AsSelector().Matches``: every pair present and equal."""
    labels = labels or {}
    return all(labels.get(key) == value for key, value in selector.items())


def is_service_ip_set(service: Mapping[str, Any]) -> bool:
    """``IsServiceIPSet``: a ClusterIP that is neither empty nor None (not headless)."""
    cluster_ip = (service.get("spec") or {}).get("clusterIP") or ""
    return cluster_ip not in ("", CLUSTER_IP_NONE)


def should_pod_be_in_endpoints(pod: Mapping[str, Any], include_terminating: bool) -> bool:
    """``ShouldPodBeInEndpoints``: not terminal, has an IP, and (unless asked to keep
    them) not being deleted."""
    if is_pod_terminal(pod):
        return False
    status = pod.get("status") or {}
    if not status.get("podIP") and not status.get("podIPs"):
        return False
    return include_terminating or not (pod.get("metadata") or {}).get("deletionTimestamp")


def should_set_hostname(pod: Mapping[str, Any], service: Mapping[str, Any]) -> bool:
    """``ShouldSetHostname``: the pod names a hostname and this Service as its subdomain."""
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == (service.get("metadata") or {}).get("name") \
        and (service.get("metadata") or {}).get("namespace") == (pod.get("metadata") or {}).get("namespace")


def find_port(pod: Mapping[str, Any], service_port: Mapping[str, Any]) -> int | None:
    """``FindPort``: a numeric targetPort as is; a named one looked up among the pod's
    container ports of the same protocol (app containers, then sidecars); None if absent."""
    target = service_port.get("targetPort")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or []), *sidecars]:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return port.get("containerPort")
    return None


def pod_ips(pod: Mapping[str, Any]) -> list[str]:
    """``status.podIPs`` (or the single ``podIP`` an old writer left)."""
    status = pod.get("status") or {}
    ips = [entry.get("ip") for entry in status.get("podIPs") or [] if entry.get("ip")]
    return ips or ([status["podIP"]] if status.get("podIP") else [])


def is_ipv6(ip: str) -> bool:
    return ":" in ip


def _endpoints_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[bool, bool]:
    """``podEndpointsChanged``: (the pod changed in a way its endpoints show, its labels or
    hostname/subdomain changed, which may change the Services it belongs to)."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    labels_changed = (old_meta.get("labels") or {}) != (new_meta.get("labels") or {}) \
        or old_spec.get("hostname") != new_spec.get("hostname") or old_spec.get("subdomain") != new_spec.get("subdomain")
    pod_changed = old_meta.get("deletionTimestamp") != new_meta.get("deletionTimestamp") \
        or is_pod_ready(old) != is_pod_ready(new) or pod_ips(old) != pod_ips(new)
    return pod_changed, labels_changed


#: Starts every :meth:`PodProjection.key`, telling it from a Service's ``namespace/name`` key.
_PROJECTION_KEY_PREFIX = "pods\x00"


class PodProjection(NamedTuple):
    """``PodProjectionKey``: what a pod change means for Service membership — the pod's
    namespace and labels, its old labels when they changed, and whether the pod itself
    changed too. Encoded as a work-queue key, so equal changes collapse into one."""

    namespace: str
    labels: Mapping[str, str]
    old_labels: Mapping[str, str] | None = None
    pod_changed: bool = False

    def key(self) -> str:
        fields = [self.namespace, self.labels, self.old_labels, self.pod_changed]
        return _PROJECTION_KEY_PREFIX + json.dumps(fields, sort_keys=True, separators=(",", ":"))

    @staticmethod
    def is_key(key: str) -> bool:
        """Is this work-queue key a pod projection (rather than a Service's key)?"""
        return key.startswith(_PROJECTION_KEY_PREFIX)

    @classmethod
    def from_key(cls, key: str) -> "PodProjection":
        namespace, labels, old_labels, pod_changed = json.loads(key[len(_PROJECTION_KEY_PREFIX):])
        return cls(namespace, labels, old_labels, pod_changed)


def pod_projection(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> PodProjection | None:
    """``GetPodUpdateProjectionKey`` for a pod that was added (``old`` None), deleted (``new``
    None) or updated; None when the update cannot concern any Service's endpoints."""
    current = new if new is not None else old
    if current is None:
        return None
    meta = current.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    if old is None or new is None:
        return PodProjection(meta.get("namespace") or "", labels)
    pod_changed, labels_changed = _endpoints_changed(old, new)
    if not pod_changed and not labels_changed:
        return None
    if not labels_changed:
        return PodProjection(meta.get("namespace") or "", labels)
    old_labels = dict((old.get("metadata") or {}).get("labels") or {})
    return PodProjection(meta.get("namespace") or "", labels, old_labels, pod_changed)


def services_to_update(services: Iterable[Mapping[str, Any]], projection: PodProjection) -> list[str]:
    """``GetServicesToUpdate``: the ``namespace/name`` keys of the Services (in the given
    order) whose endpoints may change. After a label change only the Services the pod
    joined or left, unless the pod changed too (then every Service it was or is in)."""
    keys = []
    for service in services:
        selector = service_selector(service)
        if selector is None:
            continue
        now = selects(selector, projection.labels)
        before = projection.old_labels is not None and selects(selector, projection.old_labels)
        if projection.old_labels is None:
            wanted = now
        elif projection.pod_changed:
            wanted = now or before
        else:
            wanted = now != before
        if wanted:
            meta = service.get("metadata") or {}
            keys.append(f"{meta.get('namespace')}/{meta.get('name')}")
    return keys


#: Services whose trigger times a :class:`TriggerTimeTracker` keeps; past it the least
#: recently synced is forgotten (its next sync then reports the Service's creation time).
MAX_TRACKED_SERVICES = 100_000


class TriggerTimeTracker:
    """``TriggerTimeTracker``: the ``endpoints.kubernetes.io/last-change-trigger-time`` of a
    sync — the earliest trigger among the changes since the last sync of that Service (a
    pod's Ready transition, the Service's creation), the Service's creation time on its
    first sync, and none when nothing triggered (the annotation is then removed).

    Bounded: at most :data:`MAX_TRACKED_SERVICES` Services, each with its pods' times.
    """

    def __init__(self, limit: int = MAX_TRACKED_SERVICES) -> None:
        self.limit = limit
        self._states: OrderedDict[str, tuple[datetime | None, dict[str, datetime]]] = OrderedDict()

    def compute(self, service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> datetime | None:
        """``ComputeEndpointLastChangeTriggerTime``; updates the Service's state."""
        meta = service.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        known = key in self._states
        last_service, last_pods = self._states.pop(key, (None, {}))
        earliest: datetime | None = None
        pod_times: dict[str, datetime] = {}
        for pod in pods:
            ready = pod_condition(pod, "Ready")
            moment = parse_time((ready or {}).get("lastTransitionTime"))
            if moment is None:
                continue
            name = (pod.get("metadata") or {}).get("name") or ""
            pod_times[name] = moment
            previous = last_pods.get(name)
            if previous is None or moment > previous:
                earliest = moment if earliest is None or moment < earliest else earliest
        created = parse_time(meta.get("creationTimestamp"))
        if created is not None and (last_service is None or created > last_service):
            earliest = created if earliest is None or created < earliest else earliest
        self._states[key] = (created, pod_times)
        while len(self._states) > self.limit:
            self._states.popitem(last=False)
        return created if not known else earliest

    def forget(self, namespace: str, name: str) -> None:
        """``DeleteService``: the Service is gone."""
        self._states.pop(f"{namespace}/{name}", None)
