"""The YAML cluster config (``fakekube serve --config cluster.yaml``) → :class:`ClusterConfig`.

The format is documented, with a full example, in docs/config.md. Validation is strict:
an unknown key, a wrong type or an impossible value raises :class:`ConfigError`, whose
message starts with the key path (``nodes[1].taints[0].effect: …``) and fits on one line.
YAML keys are camelCase, as Kubernetes' own config files; node lifecycle settings use
kube-controller-manager's flag names (``nodeMonitorGracePeriod: 40s``); behaviour fields
keep the names of :mod:`fakekube.kubelet.behaviour` (``run_for_s``), as the pod annotation does.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping

from fakekube.api.admission import UnknownPlugins, check_names
from fakekube.api.auth.authorizer import parse_mode
from fakekube.api.auth.identity import UserInfo
from fakekube.api.types._util import parse_quantity
from fakekube.api.machinery.validation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from fakekube.cluster import checks
from fakekube.cluster.checks import ConfigError, describe as _describe, integer as _integer, is_number as _is_number, number as _number
from fakekube.cluster.config import ClusterConfig
from fakekube.cluster.nodespec import NodeSpec, expand_nodes
from fakekube.cluster.system import SystemPods
from fakekube.controllers.nodeipam import CIDRSet
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.podgc import PodGCConfig
from fakekube.controllers.servicelb import IPPool
from fakekube.api.types.service_alloc import IPRange, PortRange
from fakekube.engine import parse_enable_list
from fakekube.kubelet.settings import KubeletConfig
from fakekube.scheduler import SchedulerConfig
from fakekube.kubelet.settings import HeartbeatConfig
from fakekube.kubelet.behaviour import BehaviourCatalog
from fakekube.kubelet.registry import ImageCatalog
from fakekube.kubelet.staticpods import check_manifest
from fakekube.objects.versions import UnsupportedVersion, release

#: The optional header; a file that names another version is refused rather than misread.
API_VERSION = "fakekube.io/v1alpha1"
KIND = "ClusterConfig"
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")

#: nodeLifecycle keys: kube-controller-manager / kube-apiserver flag names, camelCased →
#: (NodeLifecycleConfig field, parser). The last three are upstream constants, not flags.
_DURATION, _NUMBER, _INTEGER = "duration", "number", "integer"
NODE_LIFECYCLE_KEYS: dict[str, tuple[str, str]] = {
    "nodeMonitorPeriod": ("monitor_period_s", _DURATION),
    "nodeMonitorGracePeriod": ("grace_period_s", _DURATION),
    "nodeStartupGracePeriod": ("startup_grace_period_s", _DURATION),
    "nodeEvictionRate": ("eviction_rate_per_s", _NUMBER),
    "secondaryNodeEvictionRate": ("secondary_eviction_rate_per_s", _NUMBER),
    "unhealthyZoneThreshold": ("unhealthy_zone_threshold", _NUMBER),
    "largeClusterSizeThreshold": ("large_cluster_size_threshold", _INTEGER),
    "defaultNotReadyTolerationSeconds": ("default_not_ready_toleration_s", _INTEGER),
    "defaultUnreachableTolerationSeconds": ("default_unreachable_toleration_s", _INTEGER),
    "nodeEvictionPeriod": ("noexecute_tainting_period_s", _DURATION),
    "evictionBurst": ("eviction_burst", _INTEGER),
    "maxQueuedNodesPerZone": ("max_queued_nodes_per_zone", _INTEGER),
}

#: Go's time.ParseDuration units, in seconds.
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


# -- entry points ------------------------------------------------------------------------------

def load_config_file(path: str | Path) -> ClusterConfig:
    """Read, validate and convert a YAML (or JSON) cluster config file.

    Relative paths inside it (``staticPodPath``) are taken from the file's directory.
    """
    return config_from_values(load_config_values(path))


def load_config_values(path: str | Path) -> dict[str, Any]:
    """The :class:`ClusterConfig` fields a config file sets, and only those (validated one by one).

    ``fakekube serve`` layers them over its own defaults, and its flags over them, so it
    needs to know which fields the file chose (e.g. ``timeScale``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {_one_line(error)}") from None
    from fakekube.cluster.configloader import load_yaml  # PyYAML loads with a config file, not with the package (cold start)
    return parse_config_values(load_yaml(text), base_dir=path.parent)


def parse_config(data: Any, base_dir: Path | None = None) -> ClusterConfig:
    """A :class:`ClusterConfig` from already-parsed YAML; None (an empty file) is all defaults."""
    return config_from_values(parse_config_values(data, base_dir))


def config_from_values(values: Mapping[str, Any]) -> ClusterConfig:
    """A :class:`ClusterConfig` of ``values`` (field names), with the checks that span fields."""
    config = ClusterConfig(**values)
    _check_cidrs(config)
    return config


def parse_config_values(data: Any, base_dir: Path | None = None) -> dict[str, Any]:
    """The fields already-parsed YAML sets, by :class:`ClusterConfig` field name."""
    if data is None:
        data = {}
    root = _mapping(data, "(top level)")
    _known_keys(root, "", ("apiVersion", "kind", *(key for key, _, _ in _TOP_LEVEL), "staticPodPath", "tokenAuthFile"))
    _header(root)
    values: dict[str, Any] = {}
    for key, field, parse in _TOP_LEVEL:
        if key in root:
            values[field] = parse(root[key], key)
    try:
        check_names(values.get("enable_admission_plugins", ()), values.get("disable_admission_plugins", ()))
    except UnknownPlugins as error:  # a name both enabled and disabled
        raise ConfigError(f"enableAdmissionPlugins, disableAdmissionPlugins: {error}") from None
    if "staticPodPath" in root:
        values["static_pod_path"] = _static_pod_path(root["staticPodPath"], base_dir)
    if "tokenAuthFile" in root:
        values["token_auth_file"] = _token_auth_file(root["tokenAuthFile"], base_dir)
    return values


# -- top-level fields ----------------------------------------------------------------------------

def _header(root: Mapping[str, Any]) -> None:
    if "apiVersion" in root and root["apiVersion"] != API_VERSION:
        raise ConfigError(f"apiVersion: must be {API_VERSION}, got {root['apiVersion']!r}")
    if "kind" in root and root["kind"] != KIND:
        raise ConfigError(f"kind: must be {KIND}, got {root['kind']!r}")


def _seed(raw: Any, path: str) -> int:
    return checks.integer(raw, path)


def _kubernetes_version(raw: Any, path: str) -> str:
    """A supported minor release, "1.34" (YAML reads an unquoted 1.30 as the number 1.3: it
    must be quoted; a number is refused with that hint)."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        raise ConfigError(f'{path}: must be a string such as "1.34" (quote it: YAML reads {raw!r} as a number)')
    try:
        return release(_string(raw, path)).version
    except UnsupportedVersion as error:
        raise ConfigError(f"{path}: {error}") from None


def _patch_version(raw: Any, path: str) -> int:
    return _integer(raw, path, minimum=0)


def _start_time(raw: Any, path: str) -> datetime:
    """RFC 3339 with a timezone (YAML may already have parsed it into a datetime)."""
    if isinstance(raw, str):
        try:
            raw = datetime.fromisoformat(raw.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ConfigError(f"{path}: must be an RFC 3339 time such as 2025-01-01T00:00:00Z, got {raw!r}") from None
    return checks.start_time(raw, path)


def _time_scale(raw: Any, path: str) -> float:
    return checks.time_scale(raw, path)


def _event_ttl(raw: Any, path: str) -> float:
    """kube-apiserver's ``--event-ttl``: a duration (``1h``) or seconds; 0 keeps Events."""
    return parse_duration_s(raw, path)


def _flag(raw: Any, path: str) -> bool:
    if not isinstance(raw, bool):
        raise ConfigError(f"{path}: must be true or false, got {_describe(raw)}")
    return raw


def _nodes(raw: Any, path: str) -> int | tuple[NodeSpec, ...]:
    """A count, or a list of node specs."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return checks.node_count(raw, path)
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: must be a count or a list of node specs, got {_describe(raw)}")
    specs = tuple(_node_spec(item, f"{path}[{index}]") for index, item in enumerate(raw))
    try:
        names = [name for name, _ in expand_nodes(specs)]
    except ValueError as error:
        raise ConfigError(str(error)) from None
    for name in names:
        _check(is_dns1123_subdomain(name), f"{path}", f"node name {name!r}")
    return specs


#: ``systemPods`` mapping keys, as SystemPods fields (docs/config.md "System pods").
SYSTEM_POD_KEYS = {"controlPlane": "control_plane", "coreDNS": "core_dns", "kubeProxy": "kube_proxy",
                   "kindnet": "kindnet", "localPathStorage": "local_path_storage",
                   "controlPlaneTaint": "control_plane_taint"}


def _system_pods(raw: Any, path: str) -> SystemPods | bool:
    """``true``/``false``, or a mapping of parts (an omitted part is on; ``controlPlaneTaint``
    may also be ``null``: kind's rule)."""
    if isinstance(raw, bool):
        return raw
    section = _mapping(raw, path)
    _known_keys(section, path, tuple(SYSTEM_POD_KEYS))
    parts = {SYSTEM_POD_KEYS[key]: _flag(value, f"{path}.{key}")
             for key, value in section.items() if key != "controlPlaneTaint"}
    taint = section.get("controlPlaneTaint")
    return SystemPods(**parts, control_plane_taint=None if taint is None else _flag(taint, f"{path}.controlPlaneTaint"))


def _node_lifecycle(raw: Any, path: str) -> NodeLifecycleConfig:
    section = _mapping(raw, path)
    _known_keys(section, path, tuple(NODE_LIFECYCLE_KEYS))
    values: dict[str, Any] = {}
    for key, value in section.items():
        field, kind = NODE_LIFECYCLE_KEYS[key]
        where = f"{path}.{key}"
        if kind == _DURATION:
            values[field] = parse_duration_s(value, where)
        elif kind == _NUMBER:
            values[field] = _number(value, where, minimum=0.0)
        else:
            values[field] = _integer(value, where, minimum=0)
    try:
        return NodeLifecycleConfig(**values)
    except ValueError as error:
        raise ConfigError(f"{path}: {_yaml_names(str(error))}") from None


def _controllers(raw: Any, path: str) -> tuple[str, ...]:
    """kube-controller-manager's ``--controllers``: a list of words or one comma-separated string."""
    if isinstance(raw, str):
        return parse_enable_list(raw)
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: must be a list of controller names (or a comma-separated string), "
                          f"got {_describe(raw)}")
    return parse_enable_list([_string(item, f"{path}[{index}]") for index, item in enumerate(raw)])


def _plugin_names(raw: Any, path: str) -> tuple[str, ...]:
    """kube-apiserver's ``--enable-admission-plugins``/``--disable-admission-plugins``: a list
    of plugin names or one comma-separated string; an unknown name is upstream's error."""
    if isinstance(raw, str):
        names = tuple(name.strip() for name in raw.split(",") if name.strip())
    elif isinstance(raw, list):
        names = tuple(_string(item, f"{path}[{index}]") for index, item in enumerate(raw))
    else:
        raise ConfigError(f"{path}: must be a list of admission plugin names (or a comma-separated string), "
                          f"got {_describe(raw)}")
    try:
        check_names(names, ()) if path == "enableAdmissionPlugins" else check_names((), names)
    except UnknownPlugins as error:
        raise ConfigError(f"{path}: {error}") from None
    return names


#: podGC keys → PodGCConfig fields (upstream constants gcCheckPeriod and the quarantine;
#: terminatedPodGCThreshold as KubeControllerManagerConfiguration's PodGCController names it).
POD_GC_KEYS = {"checkPeriod": "period_s", "quarantinePeriod": "quarantine_s",
               "terminatedPodGCThreshold": "terminated_pod_threshold"}
#: kubelet keys: KubeletConfiguration's names → (config section, field, parser).
KUBELET_KEYS: dict[str, tuple[str, str, str]] = {
    "nodeLeaseDurationSeconds": ("heartbeat", "lease_duration_s", _INTEGER),
    "nodeStatusUpdateFrequency": ("heartbeat", "status_update_period_s", _DURATION),
    "nodeStatusReportFrequency": ("heartbeat", "status_report_period_s", _DURATION),
    "initialBackOff": ("kubelet", "backoff_initial_s", _DURATION),
    "maxContainerRestartPeriod": ("kubelet", "backoff_max_s", _DURATION),
}


def _positive_duration(raw: Any, path: str) -> float:
    seconds = parse_duration_s(raw, path)
    if seconds <= 0:
        raise ConfigError(f"{path}: must be a positive duration, got {raw!r}")
    return seconds


def _pod_gc(raw: Any, path: str) -> PodGCConfig:
    section = _mapping(raw, path)
    _known_keys(section, path, tuple(POD_GC_KEYS))
    values: dict[str, Any] = {POD_GC_KEYS[key]: _integer(value, f"{path}.{key}", minimum=0)
                              if key == "terminatedPodGCThreshold" else _positive_duration(value, f"{path}.{key}")
                              for key, value in section.items()}
    return PodGCConfig(**values)


def _kubelet(raw: Any, path: str) -> KubeletConfig:
    section = _mapping(raw, path)
    _known_keys(section, path, tuple(KUBELET_KEYS))
    values: dict[str, dict[str, Any]] = {"heartbeat": {}, "kubelet": {}}
    for key, value in section.items():
        part, field, kind = KUBELET_KEYS[key]
        where = f"{path}.{key}"
        values[part][field] = _integer(value, where, minimum=1) if kind == _INTEGER else _positive_duration(value, where)
    return KubeletConfig(heartbeat=HeartbeatConfig(**values["heartbeat"]), **values["kubelet"])


#: The KubeSchedulerConfiguration fields the ``scheduler`` section takes.
SCHEDULER_KEYS = ("apiVersion", "kind", "profiles", "percentageOfNodesToScore", "podInitialBackoffSeconds",
                  "podMaxBackoffSeconds", "podMaxInUnschedulablePodsDuration")


def _scheduler(raw: Any, path: str) -> SchedulerConfig | None:
    """A KubeSchedulerConfiguration (fakekube/scheduler/config.py), or ``false`` for no scheduler."""
    if raw is False:
        return None
    section = _mapping(raw, path)
    _known_keys(section, path, SCHEDULER_KEYS)
    try:
        config = SchedulerConfig.from_dict(section)
        from fakekube.scheduler.scheduler import Scheduler  # every plugin: only a config file with a scheduler
        Scheduler(config)  # builds every profile's plugins: an unknown plugin or bad args fail here
    except (ValueError, TypeError, KeyError) as error:
        raise ConfigError(f"{path}: {_one_line(error)}") from None
    return config


def _cluster_cidr(raw: Any, path: str) -> str:
    return _string(raw, path)


def _text(raw: Any, path: str) -> str:
    """A string checked after the config is built (service CIDR, port range, address pool)."""
    return _string(raw, path)


def _mask_size(raw: Any, path: str) -> int:
    return _integer(raw, path, minimum=0)


def _behaviours(raw: Any, path: str) -> BehaviourCatalog:
    try:
        return BehaviourCatalog.from_config(_mapping(raw, path))
    except ConfigError:
        raise
    except ValueError as error:
        raise ConfigError(_one_line(error)) from None


def _image_policy(raw: Any, path: str) -> ImageCatalog:
    try:
        return ImageCatalog.from_config(raw)
    except ValueError as error:
        raise ConfigError(_one_line(error)) from None


def _static_pods(raw: Any, path: str) -> tuple[dict[str, Any], ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: must be a list of Pod manifests, got {_describe(raw)}")
    try:
        return tuple(check_manifest(item, f"{path}[{index}]") for index, item in enumerate(raw))
    except ValueError as error:
        raise ConfigError(_one_line(error)) from None


def _static_pod_path(raw: Any, base_dir: Path | None) -> str:
    """The directory, taken from the config file's own directory when relative."""
    text = _string(raw, "staticPodPath")
    directory = _from_file(Path(text), base_dir)
    if not directory.is_dir():
        raise ConfigError(f"staticPodPath: {text!r} is not a directory{_relative_note(text, directory, base_dir)}")
    return str(directory)


def _from_file(path: Path, base_dir: Path | None) -> Path:
    """A path the file names: a relative one is taken from the file's directory (not the
    working directory), as the kubelet's config file takes its ``staticPodPath``."""
    return base_dir / path if not path.is_absolute() and base_dir is not None else path


def _relative_note(text: str, resolved: Path, base_dir: Path | None) -> str:
    """What a relative path was taken from, for an error: a file copied alone, without what
    it names beside it, otherwise fails with no clue why."""
    if Path(text).is_absolute() or base_dir is None:
        return ""
    return f" (relative to the config file's directory: {resolved.absolute()})"


def _check_cidrs(config: ClusterConfig) -> None:
    try:
        CIDRSet(config.cluster_cidr, config.node_cidr_mask_size)
    except ValueError as error:
        raise ConfigError(f"clusterCIDR: {error}") from None
    checks: tuple[tuple[str, Callable[[str], object], str], ...] = (
        ("serviceCIDR", IPRange, config.service_cidr),
        ("serviceNodePortRange", PortRange, config.service_node_port_range),
        ("loadBalancerIPPool", IPPool, config.load_balancer_ip_pool),
    )
    for key, parse, value in checks:
        try:
            parse(value)
        except ValueError as error:
            raise ConfigError(f"{key}: {_one_line(error)}") from None


def parse_webhook_addresses(raw: Any, path: str) -> dict[str, str]:
    """``{"hooks.default.svc:443": "127.0.0.1:8443"}``: both sides ``host:port``."""
    addresses = {}
    for key, value in _mapping(raw, path).items():
        target = _string(value, f"{path}.{key}")
        for text, where in ((key, f"{path}: key {key!r}"), (target, f"{path}.{key}")):
            host, _, port = text.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ConfigError(f"{where}: must be host:port, got {text!r}")
        addresses[key] = target
    return addresses


def require_loopback_targets(addresses: dict[str, str], path: str) -> None:
    """Refuse a webhook target that is not a loopback address (``127.0.0.0/8``, ``::1``,
    ``localhost``): what a control API caller may set unless the config allows any host."""
    for key, target in addresses.items():
        host = target.rpartition(":")[0].strip("[]")
        if host == "localhost" or _is_loopback_ip(host):
            continue
        raise ConfigError(f"{path}.{key}: {target!r} is not a loopback address (127.0.0.0/8, ::1, localhost); "
                          "set remoteWebhookAddresses: true in the cluster config to allow other hosts")


def _is_loopback_ip(host: str) -> bool:
    import ipaddress  # only a control API write of webhook addresses needs it
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it could resolve anywhere
        return False


def _authorization_mode(raw: Any, path: str) -> str:
    """kube-apiserver's ``--authorization-mode``: ``AlwaysAllow``, ``RBAC`` (or ``Node,RBAC``)."""
    try:
        return parse_mode(_string(raw, path))
    except ValueError as error:
        raise ConfigError(f"{path}: {error}") from None


_TOKEN_KEYS = ("token", "user", "uid", "groups")


def _static_tokens(raw: Any, path: str) -> dict[str, UserInfo]:
    """A list of ``{token, user, uid?, groups?}``: the token-auth-file's fields, as YAML."""
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: must be a list of {{token, user, uid, groups}}, got {_describe(raw)}")
    found: dict[str, UserInfo] = {}
    for index, item in enumerate(raw):
        where = f"{path}[{index}]"
        entry = _mapping(item, where)
        _known_keys(entry, where, _TOKEN_KEYS)
        for key in ("token", "user"):
            if key not in entry:
                raise ConfigError(f"{where}.{key}: required")
        groups = entry.get("groups") or []
        if not isinstance(groups, list):
            raise ConfigError(f"{where}.groups: must be a list of strings, got {_describe(groups)}")
        found[_string(entry["token"], f"{where}.token")] = UserInfo(
            _string(entry["user"], f"{where}.user"),
            tuple(_string(group, f"{where}.groups[{n}]") for n, group in enumerate(groups)),
            _string(entry.get("uid", ""), f"{where}.uid") if "uid" in entry else "")
    return found


def _token_auth_file(raw: Any, base_dir: Path | None) -> str:
    """``--token-auth-file``, relative to the config file's directory; read at cluster creation."""
    text = _string(raw, "tokenAuthFile")
    path = _from_file(Path(text), base_dir)
    if not path.is_file():
        raise ConfigError(f"tokenAuthFile: {text!r} is not a file{_relative_note(text, path, base_dir)}")
    return str(path)


#: (YAML key, ClusterConfig field, parser) for the plain top-level fields.
_TOP_LEVEL: tuple[tuple[str, str, Callable[[Any, str], Any]], ...] = (
    ("seed", "seed", _seed),
    ("kubernetesVersion", "kubernetes_version", _kubernetes_version),
    ("patchVersion", "patch_version", _patch_version),
    ("startTime", "start_time", _start_time),
    ("timeScale", "time_scale", _time_scale),
    ("autoAdvance", "auto_advance", _flag),
    ("nodes", "nodes", _nodes),
    ("nodeLifecycle", "node_lifecycle", _node_lifecycle),
    ("controllers", "controllers", _controllers),
    ("enableAdmissionPlugins", "enable_admission_plugins", _plugin_names),
    ("disableAdmissionPlugins", "disable_admission_plugins", _plugin_names),
    ("podGC", "pod_gc", _pod_gc),
    ("kubelet", "kubelet", _kubelet),
    ("scheduler", "scheduler", _scheduler),
    ("clusterCIDR", "cluster_cidr", _cluster_cidr),
    ("nodeCIDRMaskSize", "node_cidr_mask_size", _mask_size),
    ("serviceCIDR", "service_cidr", _text),
    ("serviceNodePortRange", "service_node_port_range", _text),
    ("loadBalancerIPPool", "load_balancer_ip_pool", _text),
    ("behaviours", "behaviours", _behaviours),
    ("imagePolicy", "image_policy", _image_policy),
    ("staticPods", "static_pods", _static_pods),
    ("systemPods", "system_pods", _system_pods),
    ("metricsServer", "metrics_server", _flag),
    ("webhookAddresses", "webhook_addresses", parse_webhook_addresses),
    ("remoteWebhookAddresses", "remote_webhook_addresses", _flag),
    ("authorizationMode", "authorization_mode", _authorization_mode),
    ("staticTokens", "static_tokens", _static_tokens),
    ("tls", "tls", _flag),
    ("eventTTL", "event_ttl_s", _event_ttl),
)


# -- node specs ------------------------------------------------------------------------------

_NODE_KEYS = ("name", "count", "zone", "region", "labels", "taints", "capacity", "allocatable", "staticPods")


def _node_spec(raw: Any, path: str) -> NodeSpec:
    section = _mapping(raw, path)
    _known_keys(section, path, _NODE_KEYS)
    values: dict[str, Any] = {}
    if "name" in section:
        values["name"] = _string(section["name"], f"{path}.name")
    if "count" in section:
        values["count"] = _integer(section["count"], f"{path}.count", minimum=1)
    for key in ("zone", "region"):
        if key in section:
            values[key] = _label_value(section[key], f"{path}.{key}")
    if "labels" in section:
        values["labels"] = _labels(section["labels"], f"{path}.labels")
    if "taints" in section:
        values["taints"] = _taints(section["taints"], f"{path}.taints")
    for key in ("capacity", "allocatable"):
        if key in section:
            values[key] = _resources(section[key], f"{path}.{key}")
    if "staticPods" in section:
        values["static_pods"] = _static_pods(section["staticPods"], f"{path}.staticPods")
    return NodeSpec(**values)


def _labels(raw: Any, path: str) -> dict[str, str]:
    labels = {}
    for key, value in _mapping(raw, path).items():
        _check(is_qualified_name(key), path, f"key {key!r}")
        labels[key] = _label_value(value, f"{path}.{key}")
    return labels


def _label_value(raw: Any, path: str) -> str:
    value = _string(raw, path)
    _check(is_valid_label_value(value), path, repr(value))
    return value


def _taints(raw: Any, path: str) -> tuple[dict[str, str], ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: must be a list of {{key, value, effect}}, got {_describe(raw)}")
    taints, seen = [], set()
    for index, item in enumerate(raw):
        where = f"{path}[{index}]"
        entry = _mapping(item, where)
        _known_keys(entry, where, ("key", "value", "effect"))
        if "key" not in entry:
            raise ConfigError(f"{where}.key: required")
        key = _string(entry["key"], f"{where}.key")
        _check(is_qualified_name(key), f"{where}.key", repr(key))
        effect = entry.get("effect")
        if effect not in TAINT_EFFECTS:
            raise ConfigError(f"{where}.effect: must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        if (key, effect) in seen:
            raise ConfigError(f"{where}: a second taint with key {key!r} and effect {effect}")
        seen.add((key, effect))
        taint = {"key": key, "effect": effect}
        if "value" in entry:
            taint["value"] = _label_value(entry["value"], f"{where}.value")
        taints.append(taint)
    return tuple(taints)


def _resources(raw: Any, path: str) -> dict[str, str]:
    """Resource name → quantity (``cpu: 8``, ``memory: 32Gi``), kept as strings."""
    resources = {}
    for name, value in _mapping(raw, path).items():
        _check(is_qualified_name(name), path, f"resource name {name!r}")
        where = f"{path}.{name}"
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ConfigError(f"{where}: must be a quantity such as 4, 500m or 16Gi, got {_describe(value)}")
        quantity = parse_quantity(value)
        if quantity is None or quantity < 0:
            raise ConfigError(f"{where}: must be a quantity >= 0 such as 4, 500m or 16Gi, got {value!r}")
        resources[name] = str(value)
    return resources


# -- scalar helpers ------------------------------------------------------------------------------

def parse_duration_s(raw: Any, path: str) -> float:
    """Seconds from a Go duration (``40s``, ``1m30s``, ``100ms``) or a plain number of seconds."""
    if _is_number(raw):
        if raw < 0 or not math.isfinite(raw):
            raise ConfigError(f"{path}: must be a duration >= 0, got {raw!r}")
        return float(raw)
    if not isinstance(raw, str):
        raise ConfigError(f"{path}: must be a duration such as 40s or 5m, got {_describe(raw)}")
    text, position, total = raw.strip(), 0, 0.0
    if text == "0":
        return 0.0
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        if match is None:
            raise ConfigError(f"{path}: must be a duration such as 40s, 1m30s or 500ms, got {raw!r}")
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if position == 0:
        raise ConfigError(f"{path}: must be a duration such as 40s, 1m30s or 500ms, got {raw!r}")
    return total


def _mapping(raw: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: must be a mapping, got {_describe(raw)}")
    for key in raw:
        if not isinstance(key, str):
            raise ConfigError(f"{_join(path, str(key))}: keys must be strings, got {_describe(key)}")
    return raw


def _known_keys(section: Mapping[str, Any], path: str, known: tuple[str, ...]) -> None:
    for key in section:
        if key not in known:
            error = checks.unknown(key, known, "key")  # "key: unknown key (did you mean ...?)"
            raise checks.UnknownSetting(f"{_join(path, str(error))}; known keys: {', '.join(known)}")


def _string(raw: Any, path: str) -> str:
    if not isinstance(raw, str):
        raise ConfigError(f"{path}: must be a string, got {_describe(raw)}")
    return raw








def _check(problems: list[str], path: str, what: str) -> None:
    if problems:
        raise ConfigError(f"{path}: {what} is invalid: {'; '.join(problems)}")




def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _one_line(error: object) -> str:
    return " ".join(str(error).split())


def _yaml_names(message: str) -> str:
    """NodeLifecycleConfig's messages name Python fields: say the YAML keys instead."""
    for key, (field, _) in NODE_LIFECYCLE_KEYS.items():
        message = re.sub(rf"\b{re.escape(field)}\b", key, message)
    return message

