"""Pods and pod templates: defaults, QoS class, validation and the pod update rules.

Pod-spec defaulting and validation live here because every workload type embeds a pod
template; apps/v1 and batch/v1 strategies call :func:`default_pod_spec` and
:func:`validate_pod_template` so a Deployment's template comes back exactly as a real
apiserver returns it.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FIELD_NOT_FOUND, FieldError
from fakekube.api.registry import (
    ATTACH,
    BINDING,
    EPHEMERAL_CONTAINERS,
    EVICTION,
    EXEC,
    LOG,
    PORTFORWARD,
    PROXY,
    RESIZE,
    STATUS,
    ResourceType,
    Strategy,
    WriteContext,
)
from fakekube.api.selectors import POD_FIELD_SET
from fakekube.api.table import POD_TABLE
from fakekube.api.machinery.validation import validate_annotations, validate_labels
from fakekube.api.types._resources import HUGE_PAGES_PREFIX, container_resource_name_errors, nonnegative_quantity
from fakekube.api.types._util import (
    Obj,
    child,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    ensure_dict,
    index,
    key,
    parse_quantity,
    port_errors,
    required_one_of,
)
from fakekube.api.types import pod_subresources
from fakekube.api.types.pod_scheduling_validation import (
    priority_class_name_errors,
    scheduling_constraint_errors,
    toleration_errors,
)
from fakekube.api.wire.internal_core import diff_text, internal_json
from fakekube.clock import format_rfc3339
from fakekube.objects.resourcelist import canonical
from fakekube.objects.podaffinity import merged_label_selector
from fakekube.objects.versions import Release

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]
TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
MAX_INT32 = 2**31 - 1

UPDATABLE_POD_SPEC_FIELDS = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
]
POD_UPDATE_FORBIDDEN = "pod updates may not change fields other than " + ",".join(UPDATABLE_POD_SPEC_FIELDS)

# Volume sources whose ``defaultMode`` upstream defaults to 0644 (420 decimal).
_MODE_DEFAULTED_SOURCES = ("secret", "configMap", "downwardAPI", "projected")
_VOLUME_SOURCE_KEYS_NOT_SOURCES = ("name",)


# --- defaulting -------------------------------------------------------------------

def image_pull_policy_for(image: str) -> str:
    """Always for ``:latest`` or an untagged, undigested image; IfNotPresent otherwise.

    Mirrors ``parsers.ParseImageName``: the tag is the part after the last ``:`` of the
    last path component, and a digest without a tag counts as pinned.
    """
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http_get = probe.get("httpGet")
    if isinstance(http_get, dict):
        http_get.setdefault("path", "/")
        http_get.setdefault("scheme", "HTTP")


def default_container(container: Obj) -> None:
    """SetDefaults_Container plus the declarative defaults of its nested fields."""
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = image_pull_policy_for(str(container.get("image") or ""))
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    if not isinstance(container.get("resources"), dict):
        container["resources"] = {}
    for port in container.get("ports") or []:
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        default_probe(container.get(name))
    for env in container.get("env") or []:
        field_ref = (env.get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def default_volume(volume: Obj) -> None:
    sources = [k for k in volume if k not in _VOLUME_SOURCE_KEYS_NOT_SOURCES]
    if not sources:
        volume["emptyDir"] = {}
    for name in _MODE_DEFAULTED_SOURCES:
        source = volume.get(name)
        if isinstance(source, dict):
            source.setdefault("defaultMode", 420)
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict):
        host_path.setdefault("type", "")
    projected = volume.get("projected")
    if isinstance(projected, dict):
        for src in projected.get("sources") or []:
            token = src.get("serviceAccountToken") if isinstance(src, dict) else None
            if isinstance(token, dict):
                token.setdefault("expirationSeconds", 3600)


def mirror_service_account(spec: Obj) -> None:
    """v1's deprecated ``serviceAccount`` is an alias of ``serviceAccountName`` (the v1
    conversion): a spec naming only the old field names its account, and the name is
    written to both (neither when none: the ServiceAccount admission plugin names
    ``default`` for a pod)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if name:
        spec["serviceAccountName"] = spec["serviceAccount"] = name
    else:
        spec.pop("serviceAccountName", None)
        spec.pop("serviceAccount", None)


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec: what every embedded pod spec (pods and templates) gets."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if not isinstance(spec.get("securityContext"), dict):
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    mirror_service_account(spec)
    for name in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(name) or []:
            if isinstance(container, dict):
                default_container(container)
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            default_volume(volume)


def zero_creation_timestamp(meta: Obj, release: Release) -> None:
    """An embedded ObjectMeta's unset ``creationTimestamp`` as ``release`` serialises it: Go's
    zero time is ``null`` through 1.33, left out from 1.34 (``omitzero``; a client's ``null``
    decodes to the zero time, so it goes too)."""
    if release.null_creation_timestamp:
        meta.setdefault("creationTimestamp", None)
    elif "creationTimestamp" in meta and meta["creationTimestamp"] is None:
        del meta["creationTimestamp"]


def default_pod_template(template: Any, release: Release) -> None:
    """Defaults for a ``PodTemplateSpec`` embedded in a workload; clients see its metadata's
    zero ``creationTimestamp`` as ``release`` writes it (:func:`zero_creation_timestamp`)."""
    if not isinstance(template, dict):
        return
    zero_creation_timestamp(ensure_dict(template, "metadata"), release)
    default_pod_spec(ensure_dict(template, "spec"))


def _default_requests_from_limits(container: Obj) -> None:
    resources = container.get("resources") or {}
    limits = resources.get("limits")
    if not limits:
        return
    requests = resources.setdefault("requests", {})
    for name, value in limits.items():
        requests.setdefault(name, value)


def default_pod(pod: Obj) -> None:
    """SetDefaults_Pod plus what admission plugins add to every pod on a stock cluster."""
    spec = ensure_dict(pod, "spec")
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        spec["terminationGracePeriodSeconds"] = 1  # v1 Pod conversion forces it (not a template's)
    default_pod_spec(spec)
    for name in ("initContainers", "containers"):
        for container in spec.get(name) or []:
            if isinstance(container, dict):
                _default_requests_from_limits(container)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for name in ("initContainers", "containers"):
            for container in spec.get(name) or []:
                for port in container.get("ports") or []:
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    # serviceAccountName, spec.priority and spec.preemptionPolicy: the ServiceAccount and Priority
    # admission plugins (fakekube/api/admission/).


# --- QoS --------------------------------------------------------------------------

_QOS_RESOURCES = ("cpu", "memory")


def _nonzero(resources: Obj, name: str) -> Any:
    value = (resources or {}).get(name)
    quantity = parse_quantity(value) if value is not None else None
    return quantity if quantity else None


def compute_qos_class(spec: Obj) -> str:
    """Guaranteed / Burstable / BestEffort by upstream's ``ComputePodQOS`` rules.

    Only cpu and memory count; zero quantities count as unset. Guaranteed needs every
    container to limit both, and requests (defaulted from limits) equal to limits.
    Pod-level resources, when set, decide instead of the containers.
    """
    pod_resources = spec.get("resources")
    if isinstance(pod_resources, dict) and (pod_resources.get("requests") or pod_resources.get("limits")):
        sources = [pod_resources]
    else:
        sources = [(c.get("resources") or {}) for name in ("initContainers", "containers")
                   for c in spec.get(name) or [] if isinstance(c, dict)]
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for resources in sources:
        found_limits = set()
        for name in _QOS_RESOURCES:
            req = _nonzero(resources.get("requests") or {}, name)
            if req is not None:
                requests[name] = requests.get(name, 0) + req
            lim = _nonzero(resources.get("limits") or {}, name)
            if lim is not None:
                found_limits.add(name)
                limits[name] = limits.get(name, 0) + lim
        if found_limits != set(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == value for name, value in requests.items()):
        return "Guaranteed"
    return "Burstable"


# --- validation -------------------------------------------------------------------

def _not_found(path: str, value: str) -> FieldError:
    """``field.NotFound``: our FieldError renders no value for it, so put it in the detail."""
    return FieldError(FIELD_NOT_FOUND, path, json.dumps(value))


def port_name_errors(name: str, path: str) -> list[FieldError]:
    """``IsValidPortName`` (an IANA service name), with upstream's messages."""
    messages = []
    if len(name) > 15:
        messages.append("must be no more than 15 characters")
    if not all(c.islower() or c.isdigit() or c == "-" for c in name) or not name.isascii():
        messages.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        messages.append("must not contain consecutive hyphens")
    if not any(c.isalpha() for c in name):
        messages.append("must contain at least one letter (a-z)")
    if name.startswith("-") or name.endswith("-"):
        messages.append("must not begin or end with a hyphen")
    return [errors.invalid(path, name, m) for m in messages]


def _validate_container_ports(ports: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, port in enumerate(ports or []):
        p = index(path, i)
        if port.get("name"):
            errs += port_name_errors(str(port["name"]), child(p, "name"))
        container_port = port.get("containerPort")
        if not container_port:
            errs.append(errors.required(child(p, "containerPort")))
        else:
            errs += port_errors(container_port, child(p, "containerPort"))
        if port.get("hostPort"):
            errs += port_errors(port["hostPort"], child(p, "hostPort"))
        errs += required_one_of(port.get("protocol"), child(p, "protocol"), PORT_PROTOCOLS)
    return errs


def _validate_container(container: Obj, path: str, volumes: set[str], image_required: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    image = container.get("image")
    if not image:
        errs.append(errors.required(child(path, "image")))
    elif image_required and image.strip() != image:
        errs.append(errors.invalid(child(path, "image"), image, "must not have leading or trailing whitespace"))
    errs += required_one_of(container.get("imagePullPolicy"), child(path, "imagePullPolicy"), PULL_POLICIES)
    tmp = container.get("terminationMessagePolicy")
    if tmp and tmp not in TERMINATION_MESSAGE_POLICIES:
        errs.append(errors.not_supported(child(path, "terminationMessagePolicy"), tmp, TERMINATION_MESSAGE_POLICIES))
    errs += _validate_container_ports(container.get("ports"), child(path, "ports"))
    errs += _env_errors(container.get("env") or [], child(path, "env"))
    for i, mount in enumerate(container.get("volumeMounts") or []):
        mp = index(child(path, "volumeMounts"), i)
        name = mount.get("name", "")
        if not name:
            errs.append(errors.required(child(mp, "name")))
        elif name not in volumes:
            errs.append(_not_found(child(mp, "name"), name))
        if not mount.get("mountPath"):
            errs.append(errors.required(child(mp, "mountPath")))
    errs += resource_requirement_errors(container.get("resources") or {}, child(path, "resources"))
    return errs


#: ``IsRelaxedEnvVarName``'s message (RelaxedEnvironmentVariableValidation is on in every
#: supported release).
ENV_NAME_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def _env_errors(env: list[Any], path: str) -> list[FieldError]:
    """``validateEnv``: each variable's name is present and printable ASCII without '='."""
    errs: list[FieldError] = []
    for i, variable in enumerate(env):
        name_path = child(index(path, i), "name")
        name = variable.get("name") or ""
        if not name:
            errs.append(errors.required(name_path))
        elif any(not " " <= c <= "~" or c == "=" for c in name):
            errs.append(errors.invalid(name_path, name, ENV_NAME_MSG))
    return errs


def resource_requirement_errors(resources: Obj, path: str) -> list[FieldError]:
    """``validateResourceRequirements`` for a container: resource names, quantities not
    negative, and each request at most its limit (equal to it for resources that cannot be
    overcommitted: hugepages and extended resources)."""
    errs: list[FieldError] = []
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for name, value in limits.items():
        errs += container_resource_name_errors(name, key(child(path, "limits"), name))
        errs += nonnegative_quantity(value, key(child(path, "limits"), name))
    for name, value in requests.items():
        errs += container_resource_name_errors(name, key(child(path, "requests"), name))
        errs += nonnegative_quantity(value, key(child(path, "requests"), name))
        overcommit = "/" not in name or "kubernetes.io/" in name
        overcommit = overcommit and not name.startswith(HUGE_PAGES_PREFIX)
        request, limit = parse_quantity(value), parse_quantity(limits.get(name))
        if name in limits and request is not None and limit is not None:
            if request != limit and not overcommit:
                errs.append(errors.invalid(child(path, "requests"), canonical(value),
                                           f"must be equal to {name} limit of {canonical(limits[name])}"))
            elif request > limit:
                errs.append(errors.invalid(child(path, "requests"), canonical(value),
                                           f"must be less than or equal to {name} limit of {canonical(limits[name])}"))
        elif name not in limits and not overcommit:
            errs.append(errors.required(child(path, "limits"), "Limit must be set for non overcommitable resources"))
    return errs


_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


def _probe_errors(container: Obj, path: str) -> list[FieldError]:
    """``validateProbe`` for the three probes: exactly one handler each."""
    errs: list[FieldError] = []
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(probe_name)
        if not isinstance(probe, dict):
            continue
        given = [h for h in _HANDLERS if probe.get(h) is not None]
        probe_path = child(path, probe_name)
        if not given:
            errs.append(errors.required(probe_path, "must specify a handler type"))
        errs += [errors.forbidden(child(probe_path, h), "may not specify more than 1 handler type") for h in given[1:]]
    return errs


def _validate_containers(spec: Obj, path: str, volumes: set[str], image_required: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    containers = spec.get("containers") or []
    if not containers:
        errs.append(errors.required(child(path, "containers")))
    seen: set[str] = set()
    for field_name in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(field_name) or []):
            cpath = index(child(path, field_name), i)
            name = container.get("name") or ""
            if not name:
                errs.append(errors.required(child(cpath, "name")))
            else:
                errs += dns1123_label_errors(name, child(cpath, "name"))
                if name in seen:
                    errs.append(errors.duplicate(child(cpath, "name"), name))
                seen.add(name)
            errs += _validate_container(container, cpath, volumes, image_required)
            if field_name == "containers":
                errs += _probe_errors(container, cpath)
    return errs


def _validate_volumes(spec: Obj, path: str) -> tuple[set[str], list[FieldError]]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, volume in enumerate(spec.get("volumes") or []):
        vp = index(child(path, "volumes"), i)
        name = volume.get("name") or ""
        problems = _volume_source_errors(volume, vp)
        if not name:
            problems.append(errors.required(child(vp, "name")))
        else:
            problems += dns1123_label_errors(name, child(vp, "name"))
        if name in names:
            problems.append(errors.duplicate(child(vp, "name"), name))
        if problems:  # upstream keeps a volume with errors out of the names mounts may use
            errs += problems
        else:
            names.add(name)
    return names, errs


#: A pod volume's sources in the order ``validateVolumeSource`` counts them: (JSON field,
#: the path its "more than 1 volume type" error names — upstream's own spelling).
_VOLUME_SOURCES = (
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"), ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"), ("cinder", "cinder"), ("cephfs", "cephFS"),
    ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"), ("fc", "fc"), ("flexVolume", "flexVolume"),
    ("configMap", "configMap"), ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"), ("storageos", "storageos"), ("projected", "projected"), ("scaleIO", "scaleIO"),
    ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"),
)


def _volume_source_errors(volume: Obj, path: str) -> list[FieldError]:
    """One source per volume (defaulting gave a volume without one an emptyDir)."""
    given = [name for field_name, name in _VOLUME_SOURCES if volume.get(field_name) is not None]
    if not given:
        return [errors.required(path, "must specify a volume type")]
    return [errors.forbidden(child(path, name), "may not specify more than 1 volume type") for name in given[1:]]


def validate_pod_spec(spec: Any, path: str, *, is_pod: bool) -> list[FieldError]:
    """The parts of ``ValidatePodSpec`` clients run into: containers, ports, enums, and the
    scheduling fields (:mod:`fakekube.api.types.pod_scheduling_validation`), in upstream's order."""
    if not isinstance(spec, dict):
        return [errors.required(path)]
    volumes, errs = _validate_volumes(spec, path)
    errs += _validate_containers(spec, path, volumes, image_required=is_pod)
    errs += required_one_of(spec.get("restartPolicy"), child(path, "restartPolicy"), RESTART_POLICIES)
    errs += required_one_of(spec.get("dnsPolicy"), child(path, "dnsPolicy"), DNS_POLICIES)
    errs += scheduling_constraint_errors(spec, path)
    if spec.get("nodeName"):
        errs += dns1123_subdomain_errors(spec["nodeName"], child(path, "nodeName"))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(errors.invalid(child(path, "activeDeadlineSeconds"), deadline,
                                   f"must be between 1 and {MAX_INT32}, inclusive"))
    errs += toleration_errors(spec.get("tolerations") or [], child(path, "tolerations"))
    errs += priority_class_name_errors(spec.get("priorityClassName"), child(path, "priorityClassName"))
    return errs


def validate_pod_template(template: Any, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: the embedded spec (no pod-only image whitespace check)."""
    if not isinstance(template, dict):
        return [errors.required(path)]
    meta = template.get("metadata") or {}
    errs = validate_labels(meta.get("labels"), child(path, "labels"))
    errs += validate_annotations(meta.get("annotations"), child(path, "annotations"))
    errs += validate_pod_spec(template.get("spec"), child(path, "spec"), is_pod=False)
    if (template.get("spec") or {}).get("ephemeralContainers"):
        errs.append(errors.forbidden(child(path, "spec.ephemeralContainers"),
                                     "ephemeral containers not allowed in pod template"))
    return errs


def validate_replicated_template(template: Obj, path: str) -> list[FieldError]:
    """The template of a controller that keeps its pods running (Deployments, ReplicaSets,
    StatefulSets, DaemonSets, ReplicationControllers): a valid template whose pods restart Always.
    """
    errs = validate_pod_template(template, path)
    restart = (template.get("spec") or {}).get("restartPolicy")
    if restart and restart != "Always":
        errs.append(errors.not_supported(child(path, "spec.restartPolicy"), restart, ["Always"]))
    return errs


def template_deadline_errors(spec: Obj, kind: str) -> list[FieldError]:
    """Those controllers' pods never finish, so their template may not set activeDeadlineSeconds."""
    if ((spec.get("template") or {}).get("spec") or {}).get("activeDeadlineSeconds") is not None:
        return [errors.forbidden("spec.template.spec.activeDeadlineSeconds",
                                 f"activeDeadlineSeconds in {kind} is not Supported")]
    return []


# --- update rules -----------------------------------------------------------------

def _container_update_errors(new: list, old: list, path: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [errors.forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, container in enumerate(new):
        image = container.get("image") or ""
        if not image:
            errs.append(errors.required(child(index(path, i), "image")))
        elif image.strip() != image:
            errs.append(errors.invalid(child(index(path, i), "image"), image,
                                       "must not have leading or trailing whitespace"))
    return errs, False


def _only_added_tolerations(new: list, old: list, path: str) -> list[FieldError]:
    """Every old toleration must survive; only its tolerationSeconds may change. Upstream
    then validates the new list again (the 422's message lists each error once)."""
    for old_tol in old:
        wanted = {k: v for k, v in old_tol.items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in t.items() if k != "tolerationSeconds"} == wanted for t in new):
            return [errors.forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return toleration_errors(new, path)


def _spec_diff(old: Obj, new: Obj) -> str:
    """``diff.Diff`` of the internal PodSpecs (from 1.34, upstream's text); up to 1.33 a
    short, stable rendering of what changed, in the shape of go-cmp's diff."""
    if errors.emulated().pod_spec_json_diff:
        return diff_text(internal_json("PodSpec", old), internal_json("PodSpec", new))
    lines = ["  core.PodSpec{"]
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            if name in old:
                lines.append(f"- \t{name}: {json.dumps(old[name], sort_keys=True)},")
            if name in new:
                lines.append(f"+ \t{name}: {json.dumps(new[name], sort_keys=True)},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def validate_pod_update(new_spec: Obj, old_spec: Obj) -> list[FieldError]:
    """``ValidatePodUpdate``: only images, a shrinking deadline and added tolerations move."""
    errs: list[FieldError] = []
    for name in ("containers", "initContainers"):
        found, stop = _container_update_errors(new_spec.get(name) or [], old_spec.get(name) or [], child("spec", name))
        errs += found
        if stop:
            return errs
    new_deadline = new_spec.get("activeDeadlineSeconds")
    old_deadline = old_spec.get("activeDeadlineSeconds")
    if new_deadline is not None:
        if new_deadline < 0 or new_deadline > MAX_INT32:
            return errs + [errors.invalid("spec.activeDeadlineSeconds", new_deadline,
                                          f"must be between 0 and {MAX_INT32}, inclusive")]
        if old_deadline is not None and old_deadline < new_deadline:
            return errs + [errors.invalid("spec.activeDeadlineSeconds", new_deadline,
                                          "must be less than or equal to previous value")]
    elif old_deadline is not None:
        errs.append(errors.invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    errs += _only_added_tolerations(new_spec.get("tolerations") or [], old_spec.get("tolerations") or [], "spec.tolerations")
    errs += _scheduling_gate_errors(new_spec.get("schedulingGates") or [], old_spec.get("schedulingGates") or [])
    if new_spec == old_spec:
        return errs
    munged = _munge_updatable(new_spec, old_spec)
    if munged != old_spec:
        errs.append(errors.forbidden("spec", POD_UPDATE_FORBIDDEN + "\n" + _spec_diff(old_spec, munged)))
    return errs


def _scheduling_gate_errors(new: list, old: list) -> list[FieldError]:
    """Gates may only be removed once set."""
    old_names = [g.get("name") for g in old]
    for i, gate in enumerate(new):
        if gate.get("name") not in old_names:
            return [errors.forbidden(index("spec.schedulingGates", i), "only deletion is allowed, but found new scheduling gate '"
                                     + str(gate.get("name")) + "'")]
    return []


def _munge_updatable(new_spec: Obj, old_spec: Obj) -> Obj:
    """``new_spec`` with every field a user may change copied back from ``old_spec``."""
    munged = copy.deepcopy(new_spec)
    for name in ("containers", "initContainers"):
        for new_c, old_c in zip(munged.get(name) or [], old_spec.get(name) or []):
            if "image" in old_c:
                new_c["image"] = old_c["image"]
            else:
                new_c.pop("image", None)
    for name in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        if name in old_spec:
            munged[name] = copy.deepcopy(old_spec[name])
        else:
            munged.pop(name, None)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if old_grace is not None and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    return munged


def merge_affinity_label_keys(spec: Obj, labels: Mapping[str, str]) -> None:
    """upstream's mutatePodAffinity at create (MatchLabelKeysInPodAffinity, GA in 1.33): each
    pod (anti-)affinity term's matchLabelKeys/mismatchLabelKeys become In/NotIn expressions
    of its labelSelector with the pod's own label values (a nil selector stays nil)."""
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind)
        if not isinstance(section, dict):
            continue
        required = section.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        preferred = section.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        terms = list(required) + [p.get("podAffinityTerm") for p in preferred if isinstance(p, dict)]
        for term in terms:
            if isinstance(term, dict) and isinstance(term.get("labelSelector"), dict):
                term["labelSelector"] = merged_label_selector(term, labels, once=False)


class PodStrategy(Strategy):
    """Pods: defaults, Pending status with QoS class, and the narrow update rules.

    ``metadata.generation`` is 1 at create and grows with every change of the spec (also
    through ``ephemeralcontainers`` and ``resize``) and at graceful deletion, in every
    supported release (set unconditionally since 1.33, kubernetes/kubernetes#130181). A
    status write keeps ``status.observedGeneration`` and the conditions' when it leaves them
    out; with PodObservedGenerationTracking off (1.33) a client cannot start setting them."""

    tracks_generation = True
    # podStatusStrategy: PrepareForUpdate resets spec, deletionTimestamp and ownerReferences.
    status_writes_client_metadata = True
    status_reset_fields = {"f:spec": {}, "f:metadata": {"f:deletionTimestamp": {}, "f:ownerReferences": {}}}

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_pod(obj)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        spec = obj.get("spec") or {}
        obj["status"] = {"phase": "Pending", "qosClass": compute_qos_class(spec)}
        if isinstance(spec, dict):
            merge_affinity_label_keys(spec, (obj.get("metadata") or {}).get("labels") or {})
            if spec.get("schedulingGates"):
                obj["status"]["conditions"] = [{
                    "type": "PodScheduled", "status": "False", "lastProbeTime": None,
                    "lastTransitionTime": format_rfc3339(ctx.now), "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"}]

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = validate_pod_spec(obj.get("spec"), "spec", is_pod=True)
        if (obj.get("spec") or {}).get("ephemeralContainers"):
            errs.append(errors.forbidden("spec.ephemeralContainers", "cannot be set on create"))
        spec = obj.get("spec") or {}
        if spec.get("nodeName") and spec.get("schedulingGates"):
            errs.append(errors.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_pod_spec(new.get("spec"), "spec", is_pod=True)
        return errs + validate_pod_update(new.get("spec") or {}, old.get("spec") or {})

    def prepare_subresource(self, subresource: str, new: Obj, old: Obj, ctx: WriteContext) -> Obj:
        """``ephemeralcontainers`` and ``resize`` take their part of the body (see
        :mod:`.pod_subresources`); new ephemeral containers get a container's defaults."""
        if subresource == EPHEMERAL_CONTAINERS:
            merged = pod_subresources.ephemeral_update(new, old)
            for container in merged["spec"].get("ephemeralContainers") or []:
                if isinstance(container, dict):
                    default_container(container)
                    if container.get("resources") == {}:
                        del container["resources"]
            return merged
        if subresource == RESIZE:
            return pod_subresources.resize_update(new, old)
        if subresource == STATUS:
            observed_generation_on_status_write(new, old, ctx.release.enabled("PodObservedGenerationTracking"))
        return new

    def validate_subresource(self, subresource: str, new: Obj, old: Obj) -> list[FieldError]:
        if subresource == EPHEMERAL_CONTAINERS:
            return pod_subresources.ephemeral_problems(new, old)
        if subresource == RESIZE:
            errs = validate_pod_spec(new.get("spec"), "spec", is_pod=True)
            return errs + pod_subresources.resize_problems(compute_qos_class(new.get("spec") or {}),
                                                           compute_qos_class(old.get("spec") or {}),
                                                           (new.get("status") or {}).get("qosClass") or "")
        return []


def observed_generation_on_status_write(new: Obj, old: Obj, tracking: bool) -> None:
    """A pod status write's ``observedGeneration`` fields (upstream's ``dropDisabledPodStatusFields``
    and ``preserveOldObservedGeneration``): with the gate off, a client may not start using
    them; a write that leaves one out (0) keeps the stored value."""
    sent, old_status = new.get("status"), old.get("status") or {}
    if not isinstance(sent, dict):
        return
    status = new["status"] = dict(sent)  # the caller's dicts (a controller's) may be stored ones: never edited
    old_conditions = [c for c in old_status.get("conditions") or [] if isinstance(c, dict)]
    in_use = bool(old_status.get("observedGeneration")) or any(c.get("observedGeneration") for c in old_conditions)
    if not tracking and not in_use:
        status.pop("observedGeneration", None)
        if isinstance(status.get("conditions"), list):
            status["conditions"] = [{k: v for k, v in c.items() if k != "observedGeneration"} if isinstance(c, dict)
                                    else c for c in status["conditions"]]
        return
    if not status.get("observedGeneration") and old_status.get("observedGeneration"):
        status["observedGeneration"] = old_status["observedGeneration"]
    remembered: dict[Any, list[Any]] = {}
    for condition in old_conditions:
        remembered.setdefault(condition.get("type"), []).append(condition.get("observedGeneration"))
    if isinstance(status.get("conditions"), list):
        status["conditions"] = [_keep_condition_generation(c, remembered) for c in status["conditions"]]


def _keep_condition_generation(condition: Any, remembered: dict[Any, list[Any]]) -> Any:
    """The condition, with the stored one's ``observedGeneration`` (of its type, in order) when it has none."""
    if not isinstance(condition, dict):
        return condition
    before = remembered.get(condition.get("type")) or [None]
    kept = before.pop(0)
    if condition.get("observedGeneration") or not kept:
        return condition
    return {"type": condition.get("type"), "observedGeneration": kept,
            **{k: v for k, v in condition.items() if k != "type"}}


PODS = ResourceType(
    "", "v1", "Pod", "pods", namespaced=True, short_names=("po",), categories=("all",),
    subresources=(STATUS, BINDING, EVICTION, LOG, ATTACH, EXEC, PORTFORWARD, PROXY, EPHEMERAL_CONTAINERS, RESIZE),
    strategy=PodStrategy(), table=POD_TABLE, field_set=POD_FIELD_SET,
    returns_deleted_object=True,
)
