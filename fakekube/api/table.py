"""Server-side ``meta.k8s.io/v1`` Table output, the way ``kubectl get`` asks for it.

kubectl prints whatever columns the server sends, so ``kubectl get pods`` looks right
only if we compute upstream's columns: the printers of
``pkg/printers/internalversion/printers.go`` (re-expressed here, not copied). Like the
real apiserver we always generate the wide columns; kubectl hides priority-1 columns
unless ``-o wide``.

Ages are ``now - timestamp`` on the cluster's virtual clock, formatted like upstream's
``duration.HumanDuration``. Types without a printer get upstream's default table
convertor (Name + "Created At").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from fakekube.api.registry import ResourceType

Obj = dict[str, Any]
Cells = list[Any]

NONE = "<none>"
UNKNOWN = "<unknown>"
UNSET = "<unset>"
NODE_UNREACHABLE_REASON = "NodeLost"


# ------------------------------------------------------------------------ durations

def human_duration(seconds: float) -> str:
    """Upstream's ``duration.HumanDuration``: "5s", "3m10s", "70m", "2d1h", "2y1d"…

    Like Go, whole units are taken by truncation toward zero; up to one second in the
    future still reads "0s" (clock skew), further is "<invalid>".
    """
    whole_s = int(seconds)
    if whole_s < -1:
        return "<invalid>"
    if whole_s < 0:
        return "0s"
    if whole_s < 120:
        return f"{whole_s}s"
    minutes = whole_s // 60
    if minutes < 10:
        rest = whole_s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole_s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y{rest}d" if rest else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def parse_time(value: str | None) -> datetime | None:
    """RFC 3339 (``Z`` or offset, optional fraction) → aware datetime; None if absent."""
    if not value:
        return None
    text = value.replace("Z", "+00:00").replace("z", "+00:00")
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def age(timestamp: str | None, now: datetime) -> str:
    """``translateTimestampSince``: the age of a timestamp, "<unknown>" if unset."""
    parsed = parse_time(timestamp)
    if parsed is None:
        return UNKNOWN
    return human_duration((now - parsed).total_seconds())


# --------------------------------------------------------------------------- columns

@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def to_dict(self) -> Obj:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description, "priority": self.priority}


NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some "
            "resources may allow a client to request the generation of an appropriate name automatically. "
            "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
            "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
CREATED_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
               "It is not guaranteed to be set in happens-before order across separate operations. Clients may "
               "not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
               "Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/"
               "sig-architecture/api-conventions.md#metadata")
NAME = Column("Name", description=NAME_DOC, format="name")
AGE = Column("Age", description=CREATED_DOC)
CREATED_AT = Column("Created At", "date", CREATED_DOC)
CONTAINERS = Column("Containers", description="Names of each container in the template.", priority=1)
IMAGES = Column("Images", description="Images referenced by each container in the template.", priority=1)
SELECTOR = Column("Selector", description="A label query over pods that should match the replica count.", priority=1)


def _get(obj: Any, *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj or obj[key] is None:
            return default
        obj = obj[key]
    return obj


def _meta(obj: Obj, key: str, default: Any = None) -> Any:
    return _get(obj, "metadata", key, default=default)


def format_labels(labels: dict[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, "<none>" when empty."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(selector: Obj | None) -> str:
    """``metav1.FormatLabelSelector``: matchLabels then expressions; "<none>" if empty."""
    if selector is None:
        return NONE
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op} ({','.join(values)})")
    text = ",".join(parts)
    return text if text else NONE


def _container_cells(pod_spec: Obj | None) -> tuple[str, str]:
    containers = _get(pod_spec, "containers", default=[]) or []
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def _workload_wide(obj: Obj, selector: str) -> Cells:
    names, images = _container_cells(_get(obj, "spec", "template", "spec"))
    return [names, images, selector]


def _has_condition(obj: Obj, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in _get(obj, "status", "conditions", default=[]))


# --------------------------------------------------------------------------- printers

Printer = Callable[[Obj, datetime], Cells]


@dataclass(frozen=True)
class TableSpec:
    columns: tuple[Column, ...]
    cells: Printer


def _last_termination(status: Obj) -> datetime | None:
    return parse_time(_get(status, "lastState", "terminated", "finishedAt"))


def _is_sidecar(container: Obj | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"


def _terminated_reason(term: Obj, prefix: str) -> str:
    if term.get("reason"):
        return prefix + term["reason"]
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


def pod_cells(pod: Obj, now: datetime) -> Cells:
    """printPod: READY, STATUS (reason), RESTARTS ("N (Xm ago)") and the wide columns."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(spec.get("containers") or []) + sum(1 for c in init_specs.values() if _is_sidecar(c))
    ready = 0
    phase = status.get("phase", "")
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    restarts, sidecar_restarts = 0, 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for index, cs in enumerate(init_statuses):
        restarts += cs.get("restartCount", 0)
        finished = _last_termination(cs)
        last_restart = _later(last_restart, finished)
        sidecar = _is_sidecar(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += cs.get("restartCount", 0)
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if term is not None:
            reason = _terminated_reason(term, "Init:")
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _condition_true(status, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += cs.get("restartCount", 0)
            last_restart = _later(last_restart, _last_termination(cs))
            state = cs.get("state") or {}
            term, waiting = state.get("terminated"), state.get("waiting")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None:
                reason = _terminated_reason(term, "")
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"

    if _meta(pod, "deletionTimestamp") and status.get("reason") == NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif _meta(pod, "deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration((now - last_restart).total_seconds())} ago)"
    return [
        _meta(pod, "name", ""), f"{ready}/{total}", reason, restarts_text, age(_meta(pod, "creationTimestamp"), now),
        *_pod_wide(spec, status),
    ]


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


def _condition_true(status: Obj, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in status.get("conditions") or [])


def _pod_wide(spec: Obj, status: Obj) -> Cells:
    pod_ips = status.get("podIPs") or []
    ip = (pod_ips[0].get("ip") if pod_ips else status.get("podIP")) or NONE
    gates = spec.get("readinessGates") or []
    gates_text = NONE
    if gates:
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        true_count = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gates_text = f"{true_count}/{len(gates)}"
    return [ip, spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE, gates_text]


def pod_row_conditions(pod: Obj) -> list[Obj] | None:
    """Row conditions upstream attaches to finished pods (kubectl uses them to filter)."""
    phase = _get(pod, "status", "phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


def node_cells(node: Obj, now: datetime) -> Cells:
    """printNode: Ready/NotReady/Unknown plus SchedulingDisabled, roles from labels."""
    ready = next((c for c in _get(node, "status", "conditions", default=[]) if c.get("type") == "Ready"), None)
    status = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if not status:
        status = ["Unknown"]
    if _get(node, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    info = _get(node, "status", "nodeInfo", default={})
    return [
        _meta(node, "name", ""), ",".join(status), ",".join(node_roles(node)) or NONE,
        age(_meta(node, "creationTimestamp"), now), info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
        info.get("osImage") or UNKNOWN, info.get("kernelVersion") or UNKNOWN, info.get("containerRuntimeVersion") or UNKNOWN,
    ]


def node_roles(node: Obj) -> list[str]:
    """Roles from ``node-role.kubernetes.io/<role>`` and ``kubernetes.io/role`` labels, sorted."""
    roles: set[str] = set()
    for key, value in (_meta(node, "labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key[len("node-role.kubernetes.io/"):]:
            roles.add(key[len("node-role.kubernetes.io/"):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


def _node_address(node: Obj, kind: str) -> str:
    for address in _get(node, "status", "addresses", default=[]):
        if address.get("type") == kind:
            return address.get("address", "")
    return NONE


def _deployment_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [_meta(obj, "name", ""), f"{st.get('readyReplicas', 0)}/{_get(obj, 'spec', 'replicas', default=0)}",
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), age(_meta(obj, "creationTimestamp"), now),
            *_workload_wide(obj, format_label_selector(_get(obj, "spec", "selector")))]


def _replicaset_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [_meta(obj, "name", ""), _get(obj, "spec", "replicas", default=0), st.get("replicas", 0),
            st.get("readyReplicas", 0), age(_meta(obj, "creationTimestamp"), now),
            *_workload_wide(obj, format_label_selector(_get(obj, "spec", "selector")))]


def _rc_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [_meta(obj, "name", ""), _get(obj, "spec", "replicas", default=0), st.get("replicas", 0),
            st.get("readyReplicas", 0), age(_meta(obj, "creationTimestamp"), now),
            *_workload_wide(obj, format_labels(_get(obj, "spec", "selector")))]


def _statefulset_cells(obj: Obj, now: datetime) -> Cells:
    names, images = _container_cells(_get(obj, "spec", "template", "spec"))
    return [_meta(obj, "name", ""), f"{_get(obj, 'status', 'readyReplicas', default=0)}/{_get(obj, 'spec', 'replicas', default=0)}",
            age(_meta(obj, "creationTimestamp"), now), names, images]


def _daemonset_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [_meta(obj, "name", ""), st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
            st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
            format_labels(_get(obj, "spec", "template", "spec", "nodeSelector")), age(_meta(obj, "creationTimestamp"), now),
            *_workload_wide(obj, format_label_selector(_get(obj, "spec", "selector")))]


def job_status(job: Obj) -> str:
    """The STATUS column of jobs: the first terminal or notable condition, else Running."""
    if _has_condition(job, "Complete"):
        return "Complete"
    if _has_condition(job, "Failed"):
        return "Failed"
    if _meta(job, "deletionTimestamp"):
        return "Terminating"
    for ctype in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has_condition(job, ctype):
            return ctype
    return "Running"


def _job_cells(job: Obj, now: datetime) -> Cells:
    spec, st = job.get("spec") or {}, job.get("status") or {}
    succeeded = st.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    start, done = parse_time(st.get("startTime")), parse_time(st.get("completionTime"))
    duration = "" if start is None else human_duration(((done or now) - start).total_seconds())
    return [_meta(job, "name", ""), job_status(job), completions, duration, age(_meta(job, "creationTimestamp"), now),
            *_workload_wide(job, format_label_selector(spec.get("selector")))]


def _bool_ptr(value: Any) -> str:
    return UNSET if value is None else ("True" if value else "False")


def _cronjob_cells(cj: Obj, now: datetime) -> Cells:
    spec, st = cj.get("spec") or {}, cj.get("status") or {}
    job_spec = _get(spec, "jobTemplate", "spec", default={})
    names, images = _container_cells(_get(job_spec, "template", "spec"))
    last = age(st["lastScheduleTime"], now) if st.get("lastScheduleTime") else NONE
    return [_meta(cj, "name", ""), spec.get("schedule", ""), spec.get("timeZone") or NONE, _bool_ptr(spec.get("suspend")),
            len(st.get("active") or []), last, age(_meta(cj, "creationTimestamp"), now),
            names, images, format_label_selector(job_spec.get("selector"))]


def _lb_ingress(status: Obj | None) -> str:
    hosts = {i.get("ip") or i.get("hostname") for i in _get(status, "loadBalancer", "ingress", default=[])}
    return ",".join(sorted(h for h in hosts if h))


def service_external_ip(svc: Obj) -> str:
    """getServiceExternalIP: per-type rules, "<pending>" for a load balancer without one."""
    spec = svc.get("spec") or {}
    external = spec.get("externalIPs") or []
    svc_type = spec.get("type", "ClusterIP")
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if svc_type == "LoadBalancer":
        lb = _lb_ingress(svc.get("status"))
        joined = ([lb] if lb else []) + external
        return ",".join(joined) if joined else "<pending>"
    if svc_type == "ExternalName":
        return spec.get("externalName", "")
    return UNKNOWN


def service_ports(ports: list[Obj] | None) -> str:
    pieces = []
    for port in ports or []:
        protocol = port.get("protocol", "TCP")
        if port.get("nodePort"):
            pieces.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            pieces.append(f"{port.get('port')}/{protocol}")
    return ",".join(pieces) or NONE


def _service_cells(svc: Obj, now: datetime) -> Cells:
    spec = svc.get("spec") or {}
    return [_meta(svc, "name", ""), spec.get("type", "ClusterIP"), spec.get("clusterIP") or NONE, service_external_ip(svc),
            service_ports(spec.get("ports")), age(_meta(svc, "creationTimestamp"), now), format_labels(spec.get("selector"))]


def _endpoints_cells(ep: Obj, now: datetime) -> Cells:
    addresses: list[str] = []
    count = 0
    for subset in ep.get("subsets") or []:
        for port in subset.get("ports") or []:
            for addr in subset.get("addresses") or []:
                ip = addr.get("ip", "")
                host = f"[{ip}]" if ":" in ip else ip
                if len(addresses) < 3:
                    addresses.append(f"{host}:{port.get('port')}")
                count += 1
    text = ",".join(addresses) if addresses else NONE
    if count > 3:
        text = f"{text} + {count - 3} more..."
    return [_meta(ep, "name", ""), text, age(_meta(ep, "creationTimestamp"), now)]


def _event_view(ev: Obj) -> Obj:
    """events.k8s.io/v1 Events in core/v1 field names, as the upstream printer sees them."""
    if "regarding" not in ev and "note" not in ev and "deprecatedSource" not in ev:
        return ev
    return {
        "metadata": ev.get("metadata") or {}, "type": ev.get("type"), "reason": ev.get("reason"),
        "involvedObject": ev.get("regarding") or {}, "message": ev.get("note", ""),
        "source": ev.get("deprecatedSource") or {}, "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
        "lastTimestamp": ev.get("deprecatedLastTimestamp"), "count": ev.get("deprecatedCount", 0),
        "eventTime": ev.get("eventTime"), "series": ev.get("series"),
        "reportingComponent": ev.get("reportingController", ""), "reportingInstance": ev.get("reportingInstance", ""),
    }


def _event_cells(raw: Obj, now: datetime) -> Cells:
    ev = _event_view(raw)
    first = age(ev.get("firstTimestamp"), now) if ev.get("firstTimestamp") else age(ev.get("eventTime"), now)
    last = age(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = ev.get("count") or 0
    if ev.get("series"):
        last = age(ev["series"].get("lastObservedTime"), now)
        count = ev["series"].get("count", 0)
    elif count == 0:
        count = 1
    involved = ev.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    instance = source.get("host") or ev.get("reportingInstance") or ""
    source_text = f"{component}, {instance}" if instance else component
    return [last, ev.get("type", ""), ev.get("reason", ""), target, involved.get("fieldPath", ""), source_text,
            (ev.get("message") or "").strip(), first, count, _meta(raw, "name", "")]


def _simple(*getters: Callable[[Obj, datetime], Any]) -> Printer:
    return lambda obj, now: [g(obj, now) for g in getters]


def _name(obj: Obj, now: datetime) -> str:
    return _meta(obj, "name", "")


def _age(obj: Obj, now: datetime) -> str:
    return age(_meta(obj, "creationTimestamp"), now)


def _created_at(obj: Obj, now: datetime) -> Any:
    return _meta(obj, "creationTimestamp")


_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def access_modes(modes: list[str] | None) -> str:
    present = set(modes or [])
    return ",".join(short for full, short in _ACCESS_MODES if full in present)


def _pvc_cells(pvc: Obj, now: datetime) -> Cells:
    spec, st = pvc.get("spec") or {}, pvc.get("status") or {}
    phase = "Terminating" if _meta(pvc, "deletionTimestamp") else st.get("phase", "")
    capacity, modes = "", ""
    if spec.get("volumeName"):
        modes = access_modes(st.get("accessModes"))
        capacity = _get(st, "capacity", "storage", default="0")
    storage_class = (_meta(pvc, "annotations") or {}).get("volume.beta.kubernetes.io/storage-class", spec.get("storageClassName") or "")
    return [_meta(pvc, "name", ""), phase, spec.get("volumeName", ""), capacity, modes, storage_class,
            spec.get("volumeAttributesClassName") or UNSET, _age(pvc, now), spec.get("volumeMode") or UNSET]


def _pv_cells(pv: Obj, now: datetime) -> Cells:
    spec, st = pv.get("spec") or {}, pv.get("status") or {}
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    storage_class = (_meta(pv, "annotations") or {}).get("volume.beta.kubernetes.io/storage-class", spec.get("storageClassName") or "")
    phase = "Terminating" if _meta(pv, "deletionTimestamp") else st.get("phase", "")
    return [_meta(pv, "name", ""), _get(spec, "capacity", "storage", default="0"), access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), phase, claim_text, storage_class,
            spec.get("volumeAttributesClassName") or UNSET, st.get("reason", ""), _age(pv, now), spec.get("volumeMode") or UNSET]


def _quota_cells(quota: Obj, now: datetime) -> Cells:
    hard = _get(quota, "status", "hard", default={})
    used = _get(quota, "status", "used", default={})
    requests, limits = [], []
    for resource in sorted(hard):
        target = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        target.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [_meta(quota, "name", ""), _age(quota, now), ", ".join(requests), ", ".join(limits)]


def _ingress_cells(ing: Obj, now: datetime) -> Cells:
    spec = ing.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [r["host"] for r in rules if r.get("host")][:3]
    hosts_text = ",".join(hosts) if hosts else "*"
    if len(rules) > 3 and hosts:
        hosts_text = f"{hosts_text} + {len(rules) - 3} more..."
    return [_meta(ing, "name", ""), spec.get("ingressClassName") or NONE, hosts_text, _lb_ingress(ing.get("status")),
            "80, 443" if spec.get("tls") else "80", _age(ing, now)]


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


def _subjects(binding: Obj) -> Cells:
    users, groups, sas = [], [], []
    for subject in binding.get("subjects") or []:
        kind = subject.get("kind")
        if kind == "User":
            users.append(subject.get("name", ""))
        elif kind == "Group":
            groups.append(subject.get("name", ""))
        elif kind == "ServiceAccount":
            sas.append(f"{subject.get('namespace', '')}:{subject.get('name', '')}")
    return [", ".join(users), ", ".join(groups), ", ".join(sas)]


def _binding_cells(binding: Obj, now: datetime) -> Cells:
    ref = binding.get("roleRef") or {}
    return [_meta(binding, "name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", _age(binding, now), *_subjects(binding)]


def _storageclass_cells(sc: Obj, now: datetime) -> Cells:
    annotations = _meta(sc, "annotations") or {}
    is_default = "true" in (annotations.get("storageclass.kubernetes.io/is-default-class"),
                            annotations.get("storageclass.beta.kubernetes.io/is-default-class"))
    name = _meta(sc, "name", "") + (" (default)" if is_default else "")
    return [name, sc.get("provisioner", ""), sc.get("reclaimPolicy") or "Delete", sc.get("volumeBindingMode") or "Immediate",
            bool(sc.get("allowVolumeExpansion")), _age(sc, now)]


def _controller_name(obj: Obj) -> str:
    for ref in _meta(obj, "ownerReferences") or []:
        if ref.get("controller"):
            api_version = ref.get("apiVersion", "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = ref.get("kind", "")
            group_kind = f"{kind}.{group}" if group else kind
            return f"{group_kind.lower()}/{ref.get('name', '')}"
    return NONE


def _hpa_cells(hpa: Obj, now: datetime) -> Cells:
    spec, st = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    min_pods = spec.get("minReplicas")
    return [_meta(hpa, "name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", hpa_targets(hpa),
            UNSET if min_pods is None else min_pods, spec.get("maxReplicas", 0), st.get("currentReplicas", 0), _age(hpa, now)]


def hpa_targets(hpa: Obj) -> str:
    """A simplified formatHPAMetrics: resource metrics as "cpu: 50%/80%"; others "<current>/<target>"."""
    specs = _get(hpa, "spec", "metrics", default=[])
    if not specs:
        return NONE
    current = _get(hpa, "status", "currentMetrics", default=[])
    parts = []
    for index, metric in enumerate(specs[:3]):
        if metric.get("type") == "Resource":
            resource = metric.get("resource") or {}
            target = resource.get("target") or {}
            cur = (current[index].get("resource") or {}).get("current", {}) if index < len(current) else {}
            if target.get("averageUtilization") is not None:
                now_text = f"{cur['averageUtilization']}%" if cur.get("averageUtilization") is not None else UNKNOWN
                parts.append(f"{resource.get('name', '')}: {now_text}/{target['averageUtilization']}%")
            else:
                parts.append(f"{resource.get('name', '')}: {cur.get('averageValue', UNKNOWN)}/{target.get('averageValue', '')}")
        else:
            parts.append(f"{UNKNOWN}/{UNKNOWN}")
    text = ", ".join(parts)
    return text + (f" + {len(specs) - 3} more..." if len(specs) > 3 else "")


def _endpointslice_cells(es: Obj, now: datetime) -> Cells:
    ports = es.get("ports")
    ports_text = UNSET if not ports else ",".join(str(p.get("port")) if p.get("port") is not None else UNSET for p in ports)
    addresses = [a for e in es.get("endpoints") or [] for a in e.get("addresses") or []]
    addr_text = ",".join(addresses[:3]) if addresses else UNSET
    if len(addresses) > 3:
        addr_text = f"{addr_text} + {len(addresses) - 3} more..."
    return [_meta(es, "name", ""), es.get("addressType", ""), ports_text, addr_text, _age(es, now)]


def _col(name: str, typ: str = "string", description: str = "", priority: int = 0) -> Column:
    return Column(name, typ, description, priority)


_EVENT_COLUMNS = (
    _col("Last Seen", description="The time at which the most recent occurrence of this event was recorded."),
    _col("Type", description="Type of this event (Normal, Warning), new types could be added in the future"),
    _col("Reason", description="This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    _col("Object", description="The object that this event is about."),
    _col("Subobject", description="If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.", priority=1),
    _col("Source", description="The component reporting this event. Should be a short machine understandable string.", priority=1),
    _col("Message", description="A human-readable description of the status of this operation."),
    _col("First Seen", description="The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", priority=1),
    _col("Count", description="The number of times this event has occurred.", priority=1),
    Column("Name", "string", NAME_DOC, 1, "name"),
)
_BINDING_COLUMNS = (NAME, _col("Role", description="Role referenced by this binding"), AGE,
                    _col("Users", description="Users in the roleBinding", priority=1),
                    _col("Groups", description="Groups in the roleBinding", priority=1),
                    _col("ServiceAccounts", description="ServiceAccounts in the roleBinding", priority=1))

TABLES: dict[tuple[str, str], TableSpec] = {
    ("", "pods"): TableSpec((NAME, _col("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
                             _col("Status", description="The aggregate status of the containers in this pod."),
                             _col("Restarts", description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
                             AGE, _col("IP", description="IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", priority=1),
                             _col("Node", description="NodeName indicates in which node this pod is scheduled.", priority=1),
                             _col("Nominated Node", description="nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.", priority=1),
                             _col("Readiness Gates", description="If specified, all readiness gates will be evaluated for pod readiness.", priority=1)), pod_cells),
    ("", "nodes"): TableSpec((NAME, _col("Status", description="The status of the node"), _col("Roles", description="The roles of the node"), AGE,
                              _col("Version", description="Kubelet Version reported by the node."),
                              _col("Internal-IP", description="List of addresses reachable to the node.", priority=1),
                              _col("External-IP", description="List of addresses reachable to the node.", priority=1),
                              _col("OS-Image", description="OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", priority=1),
                              _col("Kernel-Version", description="Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority=1),
                              _col("Container-Runtime", description="ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", priority=1)), node_cells),
    ("", "namespaces"): TableSpec((NAME, _col("Status", description="The status of the namespace"), AGE),
                                  _simple(_name, lambda o, n: _get(o, "status", "phase", default=""), _age)),
    ("", "configmaps"): TableSpec((NAME, _col("Data", "integer", "Data contains the configuration data."), AGE),
                                  _simple(_name, lambda o, n: len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age)),
    ("", "secrets"): TableSpec((NAME, _col("Type", description="Used to facilitate programmatic handling of secret data."),
                                _col("Data", "integer", "Data contains the secret data."), AGE),
                               _simple(_name, lambda o, n: o.get("type", ""), lambda o, n: len(o.get("data") or {}) + len(o.get("stringData") or {}), _age)),
    ("", "serviceaccounts"): TableSpec((NAME, _col("Secrets", "string", "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."), AGE),
                                       _simple(_name, lambda o, n: len(o.get("secrets") or []), _age)),
    ("", "services"): TableSpec((NAME, _col("Type", description="type determines how the Service is exposed."),
                                 _col("Cluster-IP", description="clusterIP is the IP address of the service and is usually assigned randomly."),
                                 _col("External-IP", description="externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."),
                                 _col("Port(s)", description="The list of ports that are exposed by this service."), AGE,
                                 _col("Selector", description="Route service traffic to pods with label keys and values matching this selector.", priority=1)), _service_cells),
    ("", "endpoints"): TableSpec((NAME, _col("Endpoints", description="The set of all endpoints is the union of all subsets."), AGE), _endpoints_cells),
    ("", "events"): TableSpec(_EVENT_COLUMNS, _event_cells),
    ("events.k8s.io", "events"): TableSpec(_EVENT_COLUMNS, _event_cells),
    ("", "limitranges"): TableSpec((NAME, CREATED_AT), _simple(_name, _created_at)),
    ("", "resourcequotas"): TableSpec((NAME, AGE, _col("Request", description="Request represents a minimum amount of cpu/memory that a container may consume."),
                                       _col("Limit", description="Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.")), _quota_cells),
    ("", "persistentvolumeclaims"): TableSpec((NAME, _col("Status", description="phase represents the current phase of PersistentVolumeClaim."),
                                               _col("Volume", description="volumeName is the binding reference to the PersistentVolume backing this claim."),
                                               _col("Capacity", description="capacity represents the actual resources of the underlying volume."),
                                               _col("Access Modes", description="accessModes contains the desired access modes the volume should have."),
                                               _col("StorageClass", description="StorageClass of the pvc"),
                                               _col("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"), AGE,
                                               _col("VolumeMode", description="volumeMode defines what type of volume is required by the claim.", priority=1)), _pvc_cells),
    ("", "persistentvolumes"): TableSpec((NAME, _col("Capacity", description="capacity is the description of the persistent volume's resources and capacity."),
                                          _col("Access Modes", description="accessModes contains all ways the volume can be mounted."),
                                          _col("Reclaim Policy", description="persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."),
                                          _col("Status", description="phase indicates if a volume is available, bound to a claim, or released by a claim."),
                                          _col("Claim", description="claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."),
                                          _col("StorageClass", description="StorageClass of the pv"),
                                          _col("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
                                          _col("Reason", description="reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."), AGE,
                                          _col("VolumeMode", description="volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.", priority=1)), _pv_cells),
    ("", "replicationcontrollers"): TableSpec((NAME, _col("Desired", "integer", "Replicas is the number of desired replicas."),
                                               _col("Current", "integer", "Replicas is the most recently observed number of replicas."),
                                               _col("Ready", "integer", "The number of ready replicas for this replication controller."), AGE, CONTAINERS, IMAGES, SELECTOR), _rc_cells),
    ("apps", "deployments"): TableSpec((NAME, _col("Ready", description="Number of the pod with ready state"),
                                        _col("Up-to-date", "integer", "Total number of non-terminating pods targeted by this deployment that have the desired template spec."),
                                        _col("Available", "integer", "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment."),
                                        AGE, CONTAINERS, IMAGES, SELECTOR), _deployment_cells),
    ("apps", "replicasets"): TableSpec((NAME, _col("Desired", "integer", "Replicas is the number of desired pods."),
                                        _col("Current", "integer", "Replicas is the most recently observed number of non-terminating pods."),
                                        _col("Ready", "integer", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."),
                                        AGE, CONTAINERS, IMAGES, SELECTOR), _replicaset_cells),
    ("apps", "statefulsets"): TableSpec((NAME, _col("Ready", description="Number of the pod with ready state"), AGE, CONTAINERS, IMAGES), _statefulset_cells),
    ("apps", "daemonsets"): TableSpec((NAME, _col("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
                                       _col("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
                                       _col("Ready", "integer", "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
                                       _col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
                                       _col("Available", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
                                       _col("Node Selector", description="NodeSelector is a selector which must be true for the pod to fit on a node."),
                                       AGE, CONTAINERS, IMAGES, SELECTOR), _daemonset_cells),
    ("apps", "controllerrevisions"): TableSpec((NAME, _col("Controller", description="Controller of the object"),
                                                _col("Revision", "integer", "Revision indicates the revision of the state represented by Data."), AGE),
                                               _simple(_name, lambda o, n: _controller_name(o), lambda o, n: o.get("revision", 0), _age)),
    ("batch", "jobs"): TableSpec((NAME, _col("Status", description="Status of the job."),
                                  _col("Completions", description="The completion status of the job."),
                                  _col("Duration", description="Time required to complete the job."), AGE, CONTAINERS, IMAGES, SELECTOR), _job_cells),
    ("batch", "cronjobs"): TableSpec((NAME, _col("Schedule", description="The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
                                      _col("Timezone", description="The time zone name for the given schedule."),
                                      _col("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
                                      _col("Active", "integer", "A list of pointers to currently running jobs."),
                                      _col("Last Schedule", description="Information when was the last time the job was successfully scheduled."),
                                      AGE, CONTAINERS, IMAGES, SELECTOR), _cronjob_cells),
    ("autoscaling", "horizontalpodautoscalers"): TableSpec((NAME, _col("Reference", description="Reference to target resource"),
                                                            _col("Targets", description="Current and target metrics"),
                                                            _col("MinPods", "integer", "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down."),
                                                            _col("MaxPods", "integer", "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up."),
                                                            _col("Replicas", "integer", "currentReplicas is current number of replicas of pods managed by this autoscaler."), AGE), _hpa_cells),
    ("networking.k8s.io", "ingresses"): TableSpec((NAME, _col("Class", description="The name of the IngressClass resource."),
                                                   _col("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
                                                   _col("Address", description="Address is a list containing ingress points for the load-balancer"),
                                                   _col("Ports", description="Ports of TLS configurations that open"), AGE), _ingress_cells),
    ("networking.k8s.io", "networkpolicies"): TableSpec((NAME, _col("Pod-Selector", description="podSelector selects the pods to which this NetworkPolicy object applies."), AGE),
                                                        _simple(_name, lambda o, n: format_label_selector(_get(o, "spec", "podSelector", default={})), _age)),
    ("policy", "poddisruptionbudgets"): TableSpec((NAME, _col("Min Available", description="The minimum number of pods that must be available."),
                                                   _col("Max Unavailable", description="The maximum number of pods that may be unavailable."),
                                                   _col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."), AGE),
                                                  _simple(_name, lambda o, n: _int_or_string(_get(o, "spec", "minAvailable")),
                                                          lambda o, n: _int_or_string(_get(o, "spec", "maxUnavailable")),
                                                          lambda o, n: _get(o, "status", "disruptionsAllowed", default=0), _age)),
    ("rbac.authorization.k8s.io", "roles"): TableSpec((NAME, CREATED_AT), _simple(_name, _created_at)),
    ("rbac.authorization.k8s.io", "clusterroles"): TableSpec((NAME, CREATED_AT), _simple(_name, _created_at)),
    ("rbac.authorization.k8s.io", "rolebindings"): TableSpec(_BINDING_COLUMNS, _binding_cells),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): TableSpec(_BINDING_COLUMNS, _binding_cells),
    ("storage.k8s.io", "storageclasses"): TableSpec((NAME, _col("Provisioner", description="provisioner indicates the type of the provisioner."),
                                                     _col("ReclaimPolicy", description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class."),
                                                     _col("VolumeBindingMode", description="volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."),
                                                     _col("AllowVolumeExpansion", "boolean", "allowVolumeExpansion shows whether the storage class allow volume expand."), AGE), _storageclass_cells),
    ("scheduling.k8s.io", "priorityclasses"): TableSpec((NAME, _col("Value", "integer", "value represents the integer value of this priority class."),
                                                         _col("Global-Default", "boolean", "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class."),
                                                         AGE, _col("PreemptionPolicy", description="preemptionPolicy is the Policy for preempting pods with lower priority.")),
                                                        _simple(_name, lambda o, n: o.get("value", 0), lambda o, n: bool(o.get("globalDefault")), _age,
                                                                lambda o, n: o.get("preemptionPolicy") or UNSET)),
    ("coordination.k8s.io", "leases"): TableSpec((NAME, _col("Holder", description="holderIdentity contains the identity of the holder of a current lease."), AGE),
                                                 _simple(_name, lambda o, n: _get(o, "spec", "holderIdentity", default=""), _age)),
    ("discovery.k8s.io", "endpointslices"): TableSpec((NAME, _col("AddressType", description="addressType specifies the type of address carried by this EndpointSlice."),
                                                       _col("Ports", description="ports specifies the list of network ports exposed by each endpoint in this slice."),
                                                       _col("Endpoints", description="endpoints is a list of unique endpoints in this slice."), AGE), _endpointslice_cells),
}

DEFAULT_TABLE = TableSpec((NAME, CREATED_AT), _simple(_name, _created_at))


def table_spec(resource: ResourceType) -> TableSpec:
    """The printer of a resource type, or upstream's default convertor's Name/Created At."""
    return TABLES.get((resource.group, resource.plural), DEFAULT_TABLE)


# ----------------------------------------------------------------------------- table

def partial_object_metadata(obj: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata") or {}}


def _row(spec: TableSpec, resource: ResourceType, obj: Obj, now: datetime, include_object: str) -> Obj:
    row: Obj = {"cells": spec.cells(obj, now)}
    if resource.group == "" and resource.plural == "pods":
        conditions = pod_row_conditions(obj)
        if conditions:
            row["conditions"] = conditions
    if include_object == "Object":
        row["object"] = obj
    elif include_object == "Metadata":
        row["object"] = partial_object_metadata(obj)
    return row


def to_table(resource: ResourceType, objects: list[Obj], now: datetime, include_object: str = "Metadata",
             list_meta: Obj | None = None, no_headers: bool = False) -> Obj:
    """A ``meta.k8s.io/v1`` Table of ``objects`` (one object for a GET, many for a LIST).

    ``include_object`` is the request's ``includeObject``: ``Metadata`` (default) puts a
    PartialObjectMetadata in each row, ``Object`` the full object, ``None`` nothing.
    ``list_meta`` is the list's metadata; for a single object the table carries its
    resourceVersion, as upstream does. ``no_headers`` (``TableOptions.noHeaders``, which a
    watch sets after its first event) leaves out the column definitions (JSON null).
    """
    if include_object not in ("None", "Metadata", "Object"):
        raise ValueError(f"includeObject must be None, Metadata or Object, not {include_object!r}")
    spec = table_spec(resource)
    if list_meta is not None:
        metadata = dict(list_meta)
    elif len(objects) == 1 and _meta(objects[0], "resourceVersion"):
        metadata = {"resourceVersion": _meta(objects[0], "resourceVersion")}
    else:
        metadata = {}
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": None if no_headers else [c.to_dict() for c in spec.columns],
        "rows": [_row(spec, resource, obj, now, include_object) for obj in objects],
    }
