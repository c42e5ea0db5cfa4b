"""Node lifecycle settings, named after kube-controller-manager's flags, with its defaults.

Upstream flag → field: ``--node-monitor-period`` → ``monitor_period_s``,
``--node-monitor-grace-period`` → ``grace_period_s``, ``--node-startup-grace-period`` →
``startup_grace_period_s``, ``--node-eviction-rate`` → ``eviction_rate_per_s``,
``--secondary-node-eviction-rate`` → ``secondary_eviction_rate_per_s``,
``--unhealthy-zone-threshold``, ``--large-cluster-size-threshold``; the apiserver's
``--default-not-ready-toleration-seconds`` / ``--default-unreachable-toleration-seconds``
feed the DefaultTolerationSeconds admission plugin.
"""

from __future__ import annotations

from fakekube.objects.versions import NODE_MONITOR_GRACE_PERIOD_S, Release
from fakekube.record import FrozenRecord

#: Upstream's NodeEvictionPeriod: how often the NoExecute tainting pass runs (100 ms).
NOEXECUTE_TAINTING_PERIOD_S = 0.1

#: Upstream's EvictionRateLimiterBurst: every zone's limiter has a bucket of one token.
EVICTION_BURST = 1

#: ``--node-monitor-grace-period``: the release's default (fakekube/objects/versions.py,
#: 50 s in every supported release); this one until :meth:`NodeLifecycleConfig.for_release`.
GRACE_PERIOD_S = NODE_MONITOR_GRACE_PERIOD_S


#: Nodes one zone's tainting queue holds at most: upstream's largest supported cluster
#: (5,000 nodes). One more raises QueueFullError rather than being dropped silently.
MAX_QUEUED_NODES_PER_ZONE = 5_000


class NodeLifecycleConfig(FrozenRecord):
    """What the node lifecycle controller and the taint manager may be tuned by.

    Immutable (one config is shared by the cluster's config and its controller), compared
    and hashed by value, and checked when made: a bad setting raises ValueError."""

    __slots__ = ("monitor_period_s", "grace_period_s", "startup_grace_period_s", "eviction_rate_per_s",
                 "secondary_eviction_rate_per_s", "unhealthy_zone_threshold", "large_cluster_size_threshold",
                 "default_not_ready_toleration_s", "default_unreachable_toleration_s",
                 "noexecute_tainting_period_s", "eviction_burst", "max_queued_nodes_per_zone")

    monitor_period_s: float
    #: None: the default of the Kubernetes release the cluster emulates (see :meth:`for_release`).
    grace_period_s: float | None
    startup_grace_period_s: float
    eviction_rate_per_s: float
    secondary_eviction_rate_per_s: float
    unhealthy_zone_threshold: float
    large_cluster_size_threshold: int
    default_not_ready_toleration_s: int
    default_unreachable_toleration_s: int
    noexecute_tainting_period_s: float
    eviction_burst: int
    max_queued_nodes_per_zone: int

    def __init__(self, monitor_period_s: float = 5.0, grace_period_s: float | None = None,
                 startup_grace_period_s: float = 60.0, eviction_rate_per_s: float = 0.1,
                 secondary_eviction_rate_per_s: float = 0.01, unhealthy_zone_threshold: float = 0.55,
                 large_cluster_size_threshold: int = 50, default_not_ready_toleration_s: int = 300,
                 default_unreachable_toleration_s: int = 300,
                 noexecute_tainting_period_s: float = NOEXECUTE_TAINTING_PERIOD_S,
                 eviction_burst: int = EVICTION_BURST,
                 max_queued_nodes_per_zone: int = MAX_QUEUED_NODES_PER_ZONE) -> None:
        values = (monitor_period_s, grace_period_s, startup_grace_period_s, eviction_rate_per_s,
                  secondary_eviction_rate_per_s, unhealthy_zone_threshold, large_cluster_size_threshold,
                  default_not_ready_toleration_s, default_unreachable_toleration_s, noexecute_tainting_period_s,
                  eviction_burst, max_queued_nodes_per_zone)
        for name, value in zip(self.__slots__, values, strict=True):
            self._set(name, value)
        self._check()

    def for_release(self, release: Release) -> "NodeLifecycleConfig":
        """This config with every release-dependent default filled in from ``release``'s row."""
        if self.grace_period_s is not None:
            return self
        return self.replace(grace_period_s=release.node_monitor_grace_period_s)

    @property
    def grace_s(self) -> float:
        """The grace period in force (the default until :meth:`for_release` resolved it)."""
        return self.grace_period_s if self.grace_period_s is not None else GRACE_PERIOD_S

    def _check(self) -> None:
        """Refuse settings that would make the controller loop or never decide."""
        for name in ("monitor_period_s", "grace_period_s", "startup_grace_period_s", "noexecute_tainting_period_s"):
            if getattr(self, name) is not None and getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("eviction_rate_per_s", "secondary_eviction_rate_per_s", "large_cluster_size_threshold"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 < self.unhealthy_zone_threshold <= 1:
            raise ValueError(f"unhealthy_zone_threshold must be in (0, 1], got {self.unhealthy_zone_threshold}")
        if self.eviction_burst < 1 or self.max_queued_nodes_per_zone < 1:
            raise ValueError("eviction_burst and max_queued_nodes_per_zone must be >= 1")
