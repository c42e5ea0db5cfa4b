"""The scheduler's configuration: a subset of KubeSchedulerConfiguration (v1).

Profiles are chosen by ``schedulerName``; each enables and disables plugins per extension
point (or for all of them through ``multiPoint``), weights score plugins and passes
plugin args. The defaults are kube-scheduler 1.33's: one ``default-scheduler`` profile with
the plugins of ``getDefaultPlugins`` in that order, adaptive percentageOfNodesToScore,
back-off from 1 s doubling to 10 s, unschedulable pods flushed after 5 minutes.

Simplified: extension-point lists are computed from the default multiPoint list minus
what is disabled plus what is enabled (upstream's merge does the same for the in-tree
set); there are no out-of-tree plugins and no extenders.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: getDefaultPlugins (pkg/scheduler/apis/config/v1/default_plugins.go), in order, with
#: the score weights set there (a plugin with no weight scores with weight 1).
DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

#: The extension points a profile's ``plugins`` may name.
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")


class PluginSet(NamedTuple):
    """``plugins.<point>``: names enabled (with score weights) and disabled ("*" = every default)."""

    enabled: tuple[tuple[str, int], ...] = ()
    disabled: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "PluginSet":
        data = data or {}
        enabled = tuple((p["name"], int(p.get("weight") or 0)) for p in data.get("enabled") or [])
        disabled = tuple(p["name"] for p in data.get("disabled") or [])
        return cls(enabled, disabled)


class Profile(NamedTuple):
    """One KubeSchedulerProfile."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    multi_point: PluginSet = PluginSet()
    #: Per-extension-point sets, by the names in EXTENSION_POINTS.
    points: tuple[tuple[str, PluginSet], ...] = ()
    #: pluginConfig: args by plugin name (e.g. NodeResourcesFit's scoringStrategy).
    plugin_args: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    #: None: the configuration's global value (0 there: adaptive, as upstream).
    percentage_of_nodes_to_score: int | None = None

    def args(self, plugin: str) -> Mapping[str, Any]:
        return dict(self.plugin_args).get(plugin, {})

    def plugins(self) -> list[tuple[str, int]]:
        """The multiPoint list: the defaults in order, minus disabled, plus enabled."""
        return _merge(DEFAULT_PLUGINS, self.multi_point)

    def point(self, name: str, implementing: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The plugins of one extension point, given the multiPoint plugins implementing it."""
        return _merge(tuple(implementing), dict(self.points).get(name, PluginSet()))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Profile":
        plugins = data.get("plugins") or {}
        unknown = sorted(set(plugins) - set(EXTENSION_POINTS) - {"multiPoint"})
        if unknown:
            raise ValueError(f"profile {data.get('schedulerName')!r}: unknown extension point(s) {unknown}")
        points = tuple((point, PluginSet.from_dict(plugins[point])) for point in EXTENSION_POINTS if point in plugins)
        args = tuple((entry["name"], entry.get("args") or {}) for entry in data.get("pluginConfig") or [])
        pct = data.get("percentageOfNodesToScore")
        return cls(data.get("schedulerName") or DEFAULT_SCHEDULER_NAME, PluginSet.from_dict(plugins.get("multiPoint")),
                   points, args, None if pct is None else int(pct))


def _merge(defaults: tuple[tuple[str, int], ...], change: PluginSet) -> list[tuple[str, int]]:
    disabled = set(change.disabled)
    weights = dict(change.enabled)
    kept = [] if "*" in disabled else [(name, weights.pop(name, weight)) for name, weight in defaults
                                         if name not in disabled]
    names = {name for name, _ in kept}
    return kept + [(name, weight) for name, weight in change.enabled if name not in names]


class SchedulerConfig(NamedTuple):
    """KubeSchedulerConfiguration's fields fakekube honours."""

    profiles: tuple[Profile, ...] = (Profile(),)
    #: 0: adaptive (50 % minus 1 % per 125 nodes, at least 5 %; at least 100 nodes).
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_s: float = 1.0
    pod_max_backoff_s: float = 10.0
    #: podMaxInUnschedulablePodsDuration, checked every FLUSH_PERIOD_S.
    pod_max_in_unschedulable_s: float = 300.0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "SchedulerConfig":
        """From a KubeSchedulerConfiguration document (apiVersion/kind are optional)."""
        data = data or {}
        profiles = tuple(Profile.from_dict(p) for p in data.get("profiles") or [{}])
        names = [p.scheduler_name for p in profiles]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate profile schedulerName in {names}")
        return cls(profiles, int(data.get("percentageOfNodesToScore") or 0),
                   float(data.get("podInitialBackoffSeconds", 1)), float(data.get("podMaxBackoffSeconds", 10)),
                   float(field_or(data, "podMaxInUnschedulablePodsDuration", 300.0)))


def field_or(data: Mapping[str, Any], name: str, default: float) -> float:
    """A duration field given as seconds or a Go duration string ("5m", "30s")."""
    value = data.get(name)
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return float(value)
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for unit in ("ms", "h", "m", "s"):
        if str(value).endswith(unit):
            return float(str(value)[: -len(unit)]) * units[unit]
    return float(value)
