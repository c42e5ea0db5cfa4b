"""Zones and disruption: how fast a zone's unhealthy nodes get their NoExecute taint.

Rules (upstream ComputeZoneState, handleDisruption, setLimiterInZone, ReducedQPSFunc,
HealthyQPSFunc in pkg/controller/nodelifecycle/node_lifecycle_controller.go; GetZoneKey in
k8s.io/component-helpers/node/topology):
- A zone is FullDisruption when none of its nodes is Ready; PartialDisruption when more
  than 2 nodes are not Ready *and* not-ready / all >= unhealthy_zone_threshold; else Normal.
- Normal → eviction rate. PartialDisruption → the secondary rate if the zone has more
  than large_cluster_size_threshold nodes, else 0 (stop). FullDisruption → the normal
  eviction rate (one dead zone is evicted from, as the others are healthy).
- When *every* zone is in FullDisruption the controller assumes the problem is its own
  (e.g. the control plane lost the network): it removes every node's NoExecute taint and
  stops all evictions. When any zone recovers, it resets every node's probe timestamp
  (a fresh grace period) and sets each zone's rate for its new state.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
#: Nodes with this label (any value) are left out of zone health counts.
LABEL_EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"


class ZoneState(str, Enum):
    INITIAL = "Initial"
    NORMAL = "Normal"
    PARTIAL_DISRUPTION = "PartialDisruption"
    FULL_DISRUPTION = "FullDisruption"


def zone_key(node: Mapping[str, Any]) -> str:
    """``region:\\x00:zone`` (beta labels win over GA ones), or "" for a node with neither."""
    labels = node.get("metadata", {}).get("labels") or {}
    zone = labels[LABEL_ZONE_BETA] if LABEL_ZONE_BETA in labels else labels.get(LABEL_ZONE, "")
    region = labels[LABEL_REGION_BETA] if LABEL_REGION_BETA in labels else labels.get(LABEL_REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def excluded_from_disruption_checks(node: Mapping[str, Any]) -> bool:
    return LABEL_EXCLUDE_DISRUPTION in (node.get("metadata", {}).get("labels") or {})


def compute_zone_state(ready_statuses: Sequence[str | None], config: NodeLifecycleConfig) -> tuple[int, ZoneState]:
    """(not-ready count, state) for a zone's nodes' Ready statuses (None: no Ready condition)."""
    ready = ready_statuses.count("True")
    not_ready = len(ready_statuses) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2 and not_ready / (ready + not_ready) >= config.unhealthy_zone_threshold:
        return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL


def zone_eviction_rate_per_s(state: ZoneState, zone_size: int, config: NodeLifecycleConfig) -> float | None:
    """The tainting rate for one zone in ``state`` (setLimiterInZone); None for Initial (unchanged)."""
    if state in (ZoneState.NORMAL, ZoneState.FULL_DISRUPTION):
        return config.eviction_rate_per_s
    if state is ZoneState.PARTIAL_DISRUPTION:
        return config.secondary_eviction_rate_per_s if zone_size > config.large_cluster_size_threshold else 0.0
    return None


class DisruptionDecision(NamedTuple):
    """What one handleDisruption pass changes; zone-keyed dicts are in sorted key order."""

    #: Every zone's state after the pass (zones without nodes are gone).
    zone_states: dict[str, ZoneState]
    #: Zones whose limiter is swapped to a new rate (0: evictions stop).
    rates_per_s: dict[str, float]
    #: All zones went fully disrupted: remove every node's NoExecute not-ready/unreachable
    #: taint and take every node off its tainting queue.
    mark_all_nodes_reachable: bool = False
    #: Leaving cluster-wide disruption: set every node's probe and ready-transition time to now.
    reset_probe_timestamps: bool = False


def handle_disruption(
    previous: Mapping[str, ZoneState],
    zone_ready_statuses: Mapping[str, Sequence[str | None]],
    config: NodeLifecycleConfig,
) -> DisruptionDecision:
    """One upstream handleDisruption pass.

    ``previous``: zone states after the last pass; ``zone_ready_statuses``: this pass's
    Ready statuses per zone, of nodes not excluded from disruption checks.
    """
    zones = sorted(zone_ready_statuses)
    new = {zone: compute_zone_state(zone_ready_statuses[zone], config)[1] for zone in zones}
    known = {zone: previous.get(zone, ZoneState.INITIAL) for zone in zones}
    all_are_full = all(state is ZoneState.FULL_DISRUPTION for state in new.values())
    all_were_full = all(state is ZoneState.FULL_DISRUPTION for state in known.values())
    if all_are_full and all_were_full:
        return DisruptionDecision(known, {})
    if all_are_full:
        full = {zone: ZoneState.FULL_DISRUPTION for zone in zones}
        return DisruptionDecision(full, {zone: 0.0 for zone in zones}, mark_all_nodes_reachable=True)
    sizes = {zone: len(zone_ready_statuses[zone]) for zone in zones}
    changed = zones if all_were_full else [zone for zone in zones if known[zone] is not new[zone]]
    rates = {zone: zone_eviction_rate_per_s(new[zone], sizes[zone], config) for zone in changed}
    return DisruptionDecision(
        new,
        {zone: rate for zone, rate in rates.items() if rate is not None},
        reset_probe_timestamps=all_were_full,
    )
