"""The kubelet's settings records, apart from the parts they configure.

``ClusterConfig`` holds them, and a config is read before anything runs (a phased boot's
first half, ``fakekube serve``'s flags): importing the heartbeats or the pod runner for their
settings would load most of the kubelet. Both records are re-exported where they are used.
"""

from __future__ import annotations

from typing import NamedTuple

from fakekube.kubelet.backoff import INITIAL_BACKOFF_S, MAX_BACKOFF_S


class HeartbeatConfig(NamedTuple):
    """Upstream kubelet defaults; all overridable."""

    lease_duration_s: int = 40
    renew_fraction: float = 0.25
    status_update_period_s: float = 10.0
    status_report_period_s: float = 300.0

    @property
    def renew_interval_s(self) -> float:
        return self.lease_duration_s * self.renew_fraction


class KubeletConfig(NamedTuple):
    """The kubelet settings upstream exposes (KubeletConfiguration and flags), with its defaults."""

    heartbeat: HeartbeatConfig = HeartbeatConfig()
    #: CrashLoopBackOff and ImagePullBackOff: 10 s doubling to 300 s (not configurable upstream
    #: before the KubeletCrashLoopBackOffMax alpha; settings here so tests can shorten them).
    backoff_initial_s: float = INITIAL_BACKOFF_S
    backoff_max_s: float = MAX_BACKOFF_S
