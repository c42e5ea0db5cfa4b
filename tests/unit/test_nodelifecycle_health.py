"""Node health: stale after grace period, Unknown conditions with upstream's texts."""

import copy
import pickle
from datetime import timedelta

import pytest

from fakekube.clock import DEFAULT_EPOCH, format_rfc3339
from fakekube.controllers.nodelifecycle import NodeLifecycleConfig, check_node_health, pod_conditions_not_ready
from fakekube.controllers.nodelifecycle.health import find_condition
from fakekube.objects.versions import SUPPORTED_VERSIONS, release

CONFIG = NodeLifecycleConfig().for_release(release("1.33"))


def at(seconds: float):
    return DEFAULT_EPOCH + timedelta(seconds=seconds)


def ts(seconds: float) -> str:
    return format_rfc3339(at(seconds))


def ready_node(heartbeat_s: float = 0, extra=()):
    conditions = [
        {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": ts(heartbeat_s), "lastTransitionTime": ts(0)},
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
         "lastHeartbeatTime": ts(heartbeat_s), "lastTransitionTime": ts(0)},
        *extra,
    ]
    return {"metadata": {"name": "n1", "creationTimestamp": ts(0)}, "status": {"conditions": conditions}}


def run_passes(node, lease_times, until_s, start_s=0.0):
    """Monitor passes every 5 s from start_s to until_s; lease_times maps pass time → renewTime."""
    health, checks, t = None, [], start_s
    while t <= until_s:
        lease = lease_times(t)
        check = check_node_health(node, lease, health, at(t), CONFIG)
        health = check.health
        checks.append((t, check))
        if check.new_conditions is not None:
            node = {**node, "status": {"conditions": check.new_conditions}}
        t += CONFIG.monitor_period_s
    return checks


def test_defaults_are_upstream() -> None:
    assert (CONFIG.monitor_period_s, CONFIG.grace_period_s, CONFIG.startup_grace_period_s) == (5, 50, 60)
    assert (CONFIG.eviction_rate_per_s, CONFIG.secondary_eviction_rate_per_s) == (0.1, 0.01)
    assert (CONFIG.unhealthy_zone_threshold, CONFIG.large_cluster_size_threshold) == (0.55, 50)
    assert (CONFIG.default_not_ready_toleration_s, CONFIG.default_unreachable_toleration_s) == (300, 300)
    assert CONFIG.eviction_burst == 1


def test_the_grace_period_default_follows_the_emulated_release() -> None:
    """kubernetes/kubernetes PR 126287 raised node-monitor-grace-period from 40 s to 50 s in
    1.32; every supported release (1.33–1.36) keeps 50 s, and a configured value wins."""
    assert NodeLifecycleConfig().grace_period_s is None  # the emulated release decides
    assert [NodeLifecycleConfig().for_release(release(v)).grace_period_s for v in SUPPORTED_VERSIONS] == [50] * 4
    assert NodeLifecycleConfig(grace_period_s=40).for_release(release("1.36")).grace_period_s == 40


def test_a_node_lifecycle_config_is_an_immutable_checked_value() -> None:
    """Shared by the cluster config and the controller; the pytest plugin's cluster pool
    tells configs apart by repr, and copies (dataclasses.asdict deep-copies it)."""
    config = NodeLifecycleConfig(grace_period_s=40)
    assert config == NodeLifecycleConfig(grace_period_s=40) != NodeLifecycleConfig()
    assert hash(config) == hash(NodeLifecycleConfig(grace_period_s=40))
    assert copy.deepcopy(config) == config == pickle.loads(pickle.dumps(config))
    assert repr(config).startswith("NodeLifecycleConfig(monitor_period_s=5.0, grace_period_s=40, ")
    with pytest.raises(AttributeError, match="NodeLifecycleConfig is immutable: cannot set 'grace_period_s'"):
        config.grace_period_s = 1
    with pytest.raises(ValueError, match="^unhealthy_zone_threshold must be in \\(0, 1\\], got 1.5$"):
        NodeLifecycleConfig(unhealthy_zone_threshold=1.5)


def test_lease_renewals_keep_node_healthy() -> None:
    # Status heartbeat never moves after t=0, but the lease is renewed every 10 s.
    checks = run_passes(ready_node(), lambda t: at(t - t % 10), until_s=300)
    assert all(c.new_conditions is None for _, c in checks)


def test_stale_strictly_after_grace_period() -> None:
    # Lease renewed at t=0 and then never: probe at t=0, grace 50 s → stale at the pass after t=50.
    checks = run_passes(ready_node(), lambda t: at(0), until_s=60)
    written = [(t, c) for t, c in checks if c.new_conditions is not None]
    assert [t for t, _ in written] == [55.0]
    t, check = written[0]
    ready = find_condition(check.new_conditions, "Ready")
    assert ready == {
        "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status.",
        "lastHeartbeatTime": ts(0), "lastTransitionTime": ts(55),
    }
    assert check.became_not_ready
    assert check.observed_ready["status"] == "True"
    memory = find_condition(check.new_conditions, "MemoryPressure")
    assert (memory["status"], memory["reason"], memory["lastHeartbeatTime"]) == ("Unknown", "NodeStatusUnknown", ts(0))
    for missing in ("DiskPressure", "PIDPressure"):
        condition = find_condition(check.new_conditions, missing)
        assert condition == {
            "type": missing, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
            "message": "Kubelet never posted node status.",
            "lastHeartbeatTime": ts(0), "lastTransitionTime": ts(55),
        }
    assert check.health.ready_transition_timestamp == at(55)


def test_network_unavailable_is_left_alone() -> None:
    network = {"type": "NetworkUnavailable", "status": "False", "lastHeartbeatTime": ts(0), "lastTransitionTime": ts(0)}
    check = check_node_health(ready_node(extra=[network]), None, None, at(0), CONFIG)
    later = check_node_health(ready_node(extra=[network]), None, check.health, at(51), CONFIG)
    assert find_condition(later.new_conditions, "NetworkUnavailable") == network


def test_already_unknown_is_not_rewritten() -> None:
    checks = run_passes(ready_node(), lambda t: None, until_s=100)
    assert [t for t, c in checks if c.new_conditions is not None] == [55.0]
    assert not checks[-1][1].became_not_ready


def test_status_heartbeat_counts_as_probe() -> None:
    first = check_node_health(ready_node(0), None, None, at(0), CONFIG)
    beat = check_node_health(ready_node(30), None, first.health, at(30), CONFIG)
    assert beat.health.probe_timestamp == at(30)
    assert check_node_health(ready_node(30), None, beat.health, at(80), CONFIG).new_conditions is None
    assert check_node_health(ready_node(30), None, beat.health, at(81), CONFIG).new_conditions is not None


def test_node_that_never_posted_status_gets_startup_grace() -> None:
    node = {"metadata": {"name": "n1", "creationTimestamp": ts(0)}, "status": {}}
    quiet = check_node_health(node, None, None, at(60), CONFIG)
    assert quiet.grace_period_s == 60 and quiet.new_conditions is None and quiet.current_ready is None
    stale = check_node_health(node, None, quiet.health, at(65), CONFIG)
    ready = find_condition(stale.new_conditions, "Ready")
    assert (ready["reason"], ready["lastHeartbeatTime"], ready["lastTransitionTime"]) == ("NodeStatusNeverUpdated", ts(0), ts(65))


def test_pod_marked_not_ready_once() -> None:
    pod = {"status": {"conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": ts(1)},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(0)},
    ]}}
    conditions = pod_conditions_not_ready(pod, at(45))
    assert conditions[0] == {"type": "Ready", "status": "False", "lastTransitionTime": ts(45)}
    assert conditions[1] == pod["status"]["conditions"][1]
    assert pod_conditions_not_ready({"status": {"conditions": conditions}}, at(50)) is None
    assert pod_conditions_not_ready({"status": {}}, at(50)) is None
