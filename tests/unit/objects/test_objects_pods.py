"""podutil: ready, available at exact times, active/terminal, disruption targets, requests."""

from datetime import datetime, timedelta, timezone
from fractions import Fraction

import pytest

from fakekube.objects import (
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    is_pod_terminal,
    pod_condition,
    pod_requests,
    sum_requests,
    with_disruption_target,
)

T0 = datetime(2025, 1, 1, 0, 0, 0, tzinfo=timezone.utc)


def _pod(ready="True", since="2025-01-01T00:00:00Z", phase="Running", **meta):
    conditions = [{"type": "PodScheduled", "status": "True"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready, "lastTransitionTime": since})
    return {"metadata": {"name": "p", **meta}, "status": {"phase": phase, "conditions": conditions}}


def test_pod_condition_and_ready():
    assert pod_condition(_pod(), "Ready")["status"] == "True"
    assert pod_condition(_pod(), "Initialized") is None
    assert pod_condition({}, "Ready") is None
    assert is_pod_ready(_pod())
    assert not is_pod_ready(_pod(ready="False"))
    assert not is_pod_ready(_pod(ready="Unknown"))
    assert not is_pod_ready(_pod(ready=None))


def test_available_with_zero_min_ready_seconds_is_ready():
    assert is_pod_available(_pod(), 0, T0)
    assert is_pod_available(_pod(since=None), 0, T0)
    assert not is_pod_available(_pod(ready="False"), 0, T0)


def test_available_needs_strictly_more_than_min_ready_seconds():
    pod = _pod()  # ready since T0
    assert not is_pod_available(pod, 5, T0 + timedelta(seconds=4))
    assert not is_pod_available(pod, 5, T0 + timedelta(seconds=5))  # 1.33: Before(now), not <=
    assert is_pod_available(pod, 5, T0 + timedelta(seconds=5, microseconds=1))
    assert is_pod_available(pod, 5, T0 + timedelta(seconds=6))


def test_available_without_transition_time_never_qualifies():
    assert not is_pod_available(_pod(since=None), 5, T0 + timedelta(days=1))


def test_available_accepts_a_naive_now_as_utc():
    assert is_pod_available(_pod(), 5, datetime(2025, 1, 1, 0, 0, 6))


@pytest.mark.parametrize("phase,deleting,terminal,active", [
    ("Pending", False, False, True),
    ("Running", False, False, True),
    ("Unknown", False, False, True),
    ("Succeeded", False, True, False),
    ("Failed", False, True, False),
    ("Running", True, False, False),
])
def test_terminal_and_active(phase, deleting, terminal, active):
    meta = {"deletionTimestamp": "2025-01-01T00:00:00Z"} if deleting else {}
    pod = _pod(phase=phase, **meta)
    assert is_pod_terminal(pod) is terminal
    assert is_pod_active(pod) is active


def test_with_disruption_target_replaces_and_copies():
    pod = _pod()
    pod["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True", "reason": "Old"})
    marked = with_disruption_target(pod, T0 + timedelta(seconds=3), "DeletionByTaintManager", "Taint manager: deleting")
    targets = [c for c in marked["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert targets == [{"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": "2025-01-01T00:00:03Z", "reason": "DeletionByTaintManager",
                        "message": "Taint manager: deleting"}]
    assert marked["status"]["phase"] == "Running"
    assert pod["status"]["conditions"][-1]["reason"] == "Old"  # input untouched
    assert with_disruption_target(pod, T0, "PodGC", "gone", fail=True)["status"]["phase"] == "Failed"
    done = _pod(phase="Succeeded")
    assert with_disruption_target(done, T0, "PodGC", "gone", fail=True)["status"]["phase"] == "Succeeded"


def _c(name, cpu=None, memory=None, restart=None):
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    container = {"name": name, "image": "i", "resources": {"requests": requests}}
    if restart:
        container["restartPolicy"] = restart
    return container


def test_requests_sum_containers():
    pod = {"spec": {"containers": [_c("a", "100m", "64Mi"), _c("b", "250m"), {"name": "c", "image": "i"}]}}
    assert pod_requests(pod) == {"cpu": Fraction(35, 100), "memory": Fraction(64 * 2**20)}


def test_requests_init_containers_take_the_max():
    pod = {"spec": {"containers": [_c("a", "100m", "1Gi")],
                    "initContainers": [_c("i1", "2", "100Mi"), _c("i2", "500m", "2Gi")]}}
    assert pod_requests(pod) == {"cpu": Fraction(2), "memory": Fraction(2 * 2**30)}


def test_requests_sidecars_add_up_and_count_during_later_inits():
    # upstream's KEP-753 example shape: sidecar 1 cpu, then an init 2 cpu, app 1 cpu.
    pod = {"spec": {"containers": [_c("app", "1")],
                    "initContainers": [_c("side", "1", restart="Always"), _c("init", "2")]}}
    # app phase: app + sidecar = 2; init phase: init + earlier sidecar = 3.
    assert pod_requests(pod) == {"cpu": Fraction(3)}
    later = {"spec": {"containers": [_c("app", "1")],
                      "initContainers": [_c("init", "2"), _c("side", "1", restart="Always")]}}
    # init runs before the sidecar starts: max(2, app 1 + sidecar 1) = 2.
    assert pod_requests(later) == {"cpu": Fraction(2)}


def test_requests_add_overhead():
    pod = {"spec": {"containers": [_c("a", "100m")], "overhead": {"cpu": "10m", "memory": "5Mi"}}}
    assert pod_requests(pod) == {"cpu": Fraction(11, 100), "memory": Fraction(5 * 2**20)}
    assert pod_requests(pod, include_overhead=False) == {"cpu": Fraction(1, 10)}


def test_requests_of_nothing_and_sums():
    assert pod_requests({}) == {}
    pods = [{"spec": {"containers": [_c("a", "100m")]}}, {"spec": {"containers": [_c("a", "1", "1G")]}}]
    assert sum_requests(pods) == {"cpu": Fraction(11, 10), "memory": Fraction(10**9)}


def test_requests_do_not_change_the_pod():
    pod = {"spec": {"containers": [_c("a", "100m")], "initContainers": [_c("s", "1", restart="Always")]}}
    before = repr(pod)
    pod_requests(pod)
    assert repr(pod) == before
