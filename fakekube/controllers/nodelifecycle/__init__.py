"""Node lifecycle: upstream's node health, condition-taint and zone-disruption rules, pure
(toleration rules, which the taint manager and the scheduler share, are in fakekube.objects).

No store, engine or HTTP here: each function takes objects (dicts as the API has them),
the time and a :class:`NodeLifecycleConfig`, and returns what should change. The
controller that applies these decisions lives with the engine.
"""

from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.nodelifecycle.health import (
    HealthCheck, NodeHealth, check_node_health, find_condition, pod_conditions_not_ready,
)
from fakekube.controllers.nodelifecycle.ratelimiter import QueueFullError, RateLimitedTimedQueue, TimedValue, TokenBucket
from fakekube.controllers.nodelifecycle.taints import (
    NoExecuteAction, NoExecuteDecision, desired_noschedule_taints, noexecute_decision, noexecute_swap_for,
    noschedule_diff, swap_taints,
)
from fakekube.controllers.nodelifecycle.zones import (
    DisruptionDecision, ZoneState, compute_zone_state, handle_disruption, zone_eviction_rate_per_s, zone_key,
)

__all__ = [
    "DisruptionDecision", "HealthCheck", "NoExecuteAction", "NoExecuteDecision", "NodeHealth",
    "NodeLifecycleConfig", "QueueFullError", "RateLimitedTimedQueue", "TimedValue", "TokenBucket", "ZoneState",
    "check_node_health", "compute_zone_state", "desired_noschedule_taints", "find_condition", "handle_disruption",
    "noexecute_decision", "noexecute_swap_for", "noschedule_diff", "pod_conditions_not_ready", "swap_taints",
    "zone_eviction_rate_per_s", "zone_key",
]
