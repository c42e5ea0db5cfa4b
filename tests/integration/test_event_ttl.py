"""Events expire ``--event-ttl`` after their last write (kube-apiserver's etcd leases, 1 h by default).

Times are seconds since the cluster's epoch. Upstream gives every Event create and update a
lease of the TTL, so an Event written at t lives until t + TTL; an update renews it; etcd
deletes the key when the lease runs out, whatever finalizers the Event carries, and every
watcher sees DELETED.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest
from kubernetes import client

from fakekube import Cluster
from fakekube.cluster.configfile import ConfigError, parse_config
from tests.integration.timeline import at
from tests.integration.watchclient import WatchStream, summary

Obj = dict[str, Any]
HOUR_S = 3600


def event(name: str, **fields: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default", **fields},
            "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": "default"},
            "reason": "Tested", "message": "a test event", "type": "Normal", "count": 1}


def stored_events(cluster: Cluster) -> list[str]:
    return [e["metadata"]["name"] for e in cluster.list("v1", "Event")]


@pytest.fixture
def served() -> Iterator[tuple[Cluster, client.CoreV1Api]]:
    with Cluster() as cluster:
        yield cluster, client.CoreV1Api(cluster.client())


def cron_job() -> Obj:
    template = {"spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "main", "image": "busybox", "command": ["sh", "-c", "echo hi"]}]}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick", "namespace": "default"},
            "spec": {"schedule": "* * * * *", "jobTemplate": template}}


def test_a_per_minute_cron_job_keeps_about_an_hour_of_events() -> None:
    """Each minute's Job, pod and their ~7 Events come and go; the count levels off at an hour's worth."""
    cluster = Cluster(nodes=1)
    cluster.create(cron_job())
    counts = {}
    for hour in range(1, 5):
        at(cluster, hour * HOUR_S + 30)
        counts[hour] = len(cluster.events())
    assert counts[2] == counts[3] == counts[4]  # the same minute of each hour: the same Events
    assert counts[1] - 60 <= counts[4] <= counts[1] + 60  # about one hour's worth (some repeat, some are new)
    oldest = min(e["lastTimestamp"] or e["eventTime"] for e in cluster.events())
    assert oldest >= "2025-01-01T03:00:30"  # nothing older than the TTL


def test_an_event_lives_an_hour_from_its_last_write_and_an_update_renews_it(
        served: tuple[Cluster, client.CoreV1Api]) -> None:
    cluster, core = served
    core.create_namespaced_event("default", event("kept"))
    core.create_namespaced_event("default", event("once"))
    at(cluster, 1800)
    core.patch_namespaced_event("kept", "default", {"count": 2})  # as a recorder counts a repeat
    at(cluster, HOUR_S - 0.001)
    assert stored_events(cluster) == ["kept", "once"]
    at(cluster, HOUR_S)
    assert stored_events(cluster) == ["kept"]
    core.replace_namespaced_event("kept", "default", dict(event("kept"), count=3))  # a PUT renews too, at 3600
    at(cluster, 2 * HOUR_S - 0.001)
    assert stored_events(cluster) == ["kept"]
    at(cluster, 2 * HOUR_S)
    assert stored_events(cluster) == []
    assert cluster.engine.errors == []


def test_a_watcher_sees_an_expired_event_deleted(served: tuple[Cluster, client.CoreV1Api]) -> None:
    cluster, core = served
    rv = core.list_namespaced_event("default").metadata.resource_version
    core.create_namespaced_event("default", event("short-lived"))
    with WatchStream(cluster.url, f"/api/v1/namespaces/default/events?watch=true&resourceVersion={rv}") as watch:
        assert summary(watch.events(1)) == [("ADDED", "short-lived")]
        at(cluster, HOUR_S)
        (deleted,) = watch.events(1)
    assert summary([deleted]) == [("DELETED", "short-lived")]
    assert int(deleted["object"]["metadata"]["resourceVersion"]) == cluster.store.resource_version


def test_events_k8s_io_events_and_events_with_finalizers_expire_too(
        served: tuple[Cluster, client.CoreV1Api]) -> None:
    """Both APIs share one storage; a lease ends the key whatever its finalizers say."""
    cluster, _ = served
    events_v1 = client.EventsV1Api(cluster.client())
    events_v1.create_namespaced_event("default", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "new-api"},
        "eventTime": "2025-01-01T00:00:00.000000Z", "reportingController": "example.com/tester",
        "reportingInstance": "tester-1", "action": "Testing", "reason": "Tested", "type": "Normal",
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": "default"}})
    cluster.create(event("held", finalizers=["example.com/hold"]))
    at(cluster, HOUR_S)
    assert stored_events(cluster) == []
    assert events_v1.list_namespaced_event("default").items == []


def test_the_recorders_events_expire_and_a_repeat_after_expiry_is_recreated() -> None:
    """A kubelet's repeat of an expired Event makes it again, carrying its count on (client-go's
    recorder creates the Event when its update finds none)."""
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "crash"}, "spec": {
        "restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox", "command": ["false"]}]}})
    at(cluster, 2 * HOUR_S)
    back_offs = cluster.events(involved_name="crash", reason="BackOff")
    assert len(back_offs) == 1 and back_offs[0]["count"] > 1
    assert back_offs[0]["firstTimestamp"] < "2025-01-01T01:00:00Z"  # counted on from before the TTL
    assert all(e["lastTimestamp"] >= "2025-01-01T01:00:00Z" for e in cluster.events(involved_name="crash"))


def test_the_ttl_is_configurable_and_0_keeps_events() -> None:
    short = Cluster(event_ttl_s=600)
    short.create(event("e"))
    at(short, 599)
    assert stored_events(short) == ["e"]
    at(short, 600)
    assert stored_events(short) == []
    forever = Cluster(event_ttl_s=0)
    forever.create(event("e"))
    at(forever, 3 * HOUR_S)
    assert stored_events(forever) == ["e"]
    with pytest.raises(ValueError, match="event_ttl_s must be between 0 and 9223372037 seconds"):
        Cluster(event_ttl_s=-1)


def test_the_config_file_takes_event_ttl_as_a_duration() -> None:
    assert parse_config({}).event_ttl_s == HOUR_S
    assert parse_config({"eventTTL": "1h30m"}).event_ttl_s == 5400
    assert parse_config({"eventTTL": 90}).event_ttl_s == 90
    assert parse_config({"eventTTL": 0}).event_ttl_s == 0
    with pytest.raises(ConfigError, match="eventTTL: must be a duration"):
        parse_config({"eventTTL": "soon"})


def test_serve_takes_the_event_ttl_flag_as_kube_apiserver_does(tmp_path: Any) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--no-system-pods", "--time-scale", "0",
                             "--event-ttl", "10m0s", "--kubeconfig", str(tmp_path / "kc")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert " at " in line, proc.stderr.read()
        url = line.split(" at ")[1].strip()
        core = client.CoreV1Api(client.ApiClient(client.Configuration(host=url)))
        core.create_namespaced_event("default", event("e"))
        post(url + "/fakekube/v1/clock/advance", b'{"seconds": 599}')
        assert [e.metadata.name for e in core.list_namespaced_event("default").items] == ["e"]
        post(url + "/fakekube/v1/clock/advance", b'{"seconds": 1}')
        assert core.list_namespaced_event("default").items == []
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    bad = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--event-ttl", "3600"],
                         capture_output=True, text=True, timeout=30)
    assert (bad.returncode, bad.stderr) == (
        2, "fakekube: bad --event-ttl: must be a duration such as 40s, 1m30s or 500ms, got '3600'\n")


def post(url: str, body: bytes) -> None:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
    except urllib.error.HTTPError as error:  # pragma: no cover - shows the Status
        raise AssertionError(error.read()) from None


def test_live_events_cost_no_timer_each_and_a_deleted_one_is_forgotten() -> None:
    """The leases are one queue in deadline order behind one timer: a thousand Events, some
    updated, some deleted by a client, arm no timer of their own."""
    cluster = Cluster()
    pending = cluster.clock.pending()
    for index in range(1000):
        cluster.create(event(f"e{index:04d}"))
    for index in range(0, 1000, 10):
        cluster.api.patch(cluster.resource("v1", "Event"), "default", f"e{index:04d}",
                          "application/merge-patch+json", b'{"count": 2}')
    for index in range(5, 1000, 10):
        cluster.delete("v1", "Event", f"e{index:04d}")
    assert cluster.clock.pending() <= pending + 1
    rv = cluster.store.resource_version
    at(cluster, HOUR_S)
    assert stored_events(cluster) == []
    assert cluster.store.resource_version == rv + 900  # one removal per Event left, none for the deleted
    assert cluster.engine.errors == []
