"""The recorders' trusted Event create must be invisible: a run with it and a run where
every Event takes the apiserver's full create path observe the same.

The kubelets' Events (core/v1) and the scheduler's (events.k8s.io/v1) are created through
``APIServer.create_recorded_event`` while admission is quiet for them, else through
``create``. One seeded scenario runs both ways — pods scheduled and started in a plain
namespace and in one with a ResourceQuota (the full path: it charges), a
ValidatingAdmissionPolicy that refuses some Events while its binding exists, a namespace
deleted with running pods (Events refused while it terminates), a snapshot restored in the
middle — and the whole change log (what every watch replays: each object, resourceVersion
and event type, in order) and the final Events are compared.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.admission import EVENT_QUIET_PLUGINS, FACTORIES
from fakekube.api.admission.attributes import CREATE, Attributes
from fakekube.api.verbs.apiserver import APIServer
from fakekube.api.verbs.listing import ListOptions

Obj = dict[str, Any]
ADMISSION = "admissionregistration.k8s.io/v1"
#: Refuses every Event whose reason is Started (core/v1) while its binding exists.
POLICY = {"apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "no-started"},
          "spec": {"matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                                                           "apiVersions": ["v1"], "resources": ["events"]}]},
                   "validations": [{"expression": "object.reason != 'Started'"}]}}
BINDING = {"apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "no-started"},
           "spec": {"policyName": "no-started", "validationActions": ["Deny"]}}


def pod(name: str, namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                     "resources": {"requests": {"cpu": "10m", "memory": "8Mi"},
                                                   "limits": {"cpu": "10m", "memory": "8Mi"}}}]}}


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def scenario(trusted: bool, seed: int) -> tuple[list[Any], list[Any]]:
    """(the change log, the final Events)."""
    cluster = Cluster(nodes=3, seed=seed, history_limit=1_000_000, history_max_bytes=2**40)
    cluster.api.trusted_events = trusted
    start = cluster.store.resource_version
    for name in ("plain", "quota", "doomed"):
        cluster.create(namespace(name))
    cluster.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "quota"},
                    "spec": {"hard": {"pods": "20", "count/events": "500"}}})
    for index in range(4):
        for space in ("default", "plain", "quota", "doomed"):
            cluster.create(pod(f"p{index}", space))
    cluster.advance(3)
    snap = cluster.snapshot()
    cluster.create(pod("before-restore", "default"))
    cluster.advance(5)
    log = _changes(cluster, start)
    cluster.restore(snap)  # on from the copy
    start = cluster.store.resource_version
    cluster.create(pod("after-restore", "default"))
    cluster.advance(3)
    cluster.create(POLICY)
    cluster.create(BINDING)
    cluster.create(pod("during-policy", "plain"))
    cluster.advance(3)
    cluster.delete(ADMISSION, "ValidatingAdmissionPolicyBinding", "no-started", "")
    cluster.create(pod("after-policy", "plain"))
    cluster.delete("v1", "Namespace", "doomed", "")  # its pods are killed while it terminates
    cluster.advance(40)
    log += _changes(cluster, start)
    events = [cluster.api.list(cluster.resource(version, "Event"), "", ListOptions())["items"]
              for version in ("v1", "events.k8s.io/v1")]
    return log, events


def _changes(cluster: Cluster, since: int) -> list[Any]:
    return [(c.rv, c.type, c.group, c.resource, c.namespace, c.name, c.obj) for c in cluster.store.changes_since(since)]


@pytest.fixture
def trusted_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many Events were stored through the trusted create (the class patched: a
    closure on the apiserver would be state a snapshot refuses)."""
    counted = [0]
    original = APIServer.create_recorded_event

    def counting(api: APIServer, rt: Any, body: Obj) -> Obj | None:
        written = original(api, rt, body)
        counted[0] += written is not None
        return written
    monkeypatch.setattr(APIServer, "create_recorded_event", counting)
    return counted


@pytest.mark.parametrize("seed", [0, 7])
def test_trusted_event_creates_are_invisible(seed: int, trusted_count: list[int]) -> None:
    full_log, full_events = scenario(trusted=False, seed=seed)
    booted = trusted_count[0]  # (the nodes' boot Events, before the switch)
    log, events = scenario(trusted=True, seed=seed)
    assert trusted_count[0] - 2 * booted > 50  # most Events took the trusted create
    assert any(c[3] == "events" for c in log)  # (events.k8s.io/v1 Events are stored as core/v1's)
    assert len(log) == len(full_log)
    for mine, theirs in zip(log, full_log):
        assert mine == theirs
    assert events == full_events
    reasons = [e["reason"] for e in events[0]]
    assert "Started" in reasons and "Scheduled" in [e["reason"] for e in events[1]]


def test_events_refused_in_a_terminating_namespace_and_by_a_policy_either_way() -> None:
    """What the full path refuses, the trusted one does not let through (a doomed namespace's
    Killing events, a policy's Started)."""
    log, _ = scenario(trusted=True, seed=3)
    started = [c for c in log if c[3] == "events" and c[0] and c[6].get("reason") == "Started"]
    during = [c for c in started if (c[6].get("involvedObject") or {}).get("name") == "during-policy"]
    assert not during  # refused by the policy while its binding existed
    assert any((c[6].get("involvedObject") or {}).get("name") == "after-policy" for c in started)


def test_the_quiet_plugins_never_act_on_an_event_create() -> None:
    """Every plugin ``create_recorded_event`` may skip leaves an Event create alone in an
    active namespace without quotas, webhooks or policies: no change, no refusal."""
    cluster = Cluster(nodes=1)
    api = cluster.api
    api.configure_admission(sorted(EVENT_QUIET_PLUGINS & set(FACTORIES)))
    assert set(api.admission.names) == EVENT_QUIET_PLUGINS
    for version, body in (("v1", {"metadata": {"name": "x.1", "namespace": "default"}, "reason": "Pulled",
                                  "involvedObject": {"kind": "Pod", "name": "x", "namespace": "default"},
                                  "message": "m", "type": "Normal", "source": {"component": "kubelet"}}),
                          ("events.k8s.io/v1", {"metadata": {"name": "x.2", "namespace": "default"},
                                                "eventTime": "2025-01-01T00:00:00.000000Z", "reason": "Scheduled",
                                                "action": "Binding", "reportingController": "default-scheduler",
                                                "reportingInstance": "i", "type": "Normal",
                                                "regarding": {"kind": "Pod", "name": "x", "namespace": "default"}})):
        rt = cluster.resource(version, "Event")
        for plugin in api.admission.plugins:
            name = plugin.name
            if not plugin.handles(CREATE):
                continue
            obj = rt.storable(dict(body, metadata=dict(body["metadata"])))
            before = repr(obj)
            attrs = Attributes(CREATE, rt, "default", obj["metadata"]["name"], "", obj, None, None, False, {},
                               internal=True)
            plugin.admit(attrs)
            plugin.validate(attrs)
            assert attrs.obj is obj and repr(obj) == before and not attrs.warnings, name


def test_the_trusted_create_steps_aside_when_admission_could_act() -> None:
    cluster = Cluster(nodes=1)
    api = cluster.api
    rt = cluster.resource("v1", "Event")
    body = {"metadata": {"name": "x.1", "namespace": "default"}, "reason": "Pulled", "message": "m", "type": "Normal",
            "involvedObject": {"kind": "Pod", "name": "x", "namespace": "default"}, "source": {"component": "kubelet"}}
    with api.store.lock:
        missing = api.create_recorded_event(rt, dict(body, metadata={"name": "x.0", "namespace": "nowhere"}))
    assert missing is None and cluster.store.get(("", "events"), ("nowhere", "x.0")) is None
    cluster.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
                    "spec": {"hard": {"pods": "5"}}})
    with api.store.lock:
        assert api.create_recorded_event(rt, body) is None
    cluster.delete("v1", "ResourceQuota", "q", "default")
    cluster.settle()
    with api.store.lock:
        written = api.create_recorded_event(rt, body)
    assert written is not None and written["metadata"]["uid"] and written["kind"] == "Event"
