"""``pods/log?follow=true`` streams lines as cluster time reaches them, over a real HTTP connection.

A reader thread consumes the chunked response while the test moves the cluster clock;
wall-clock timeouts only guard against a hang (a line arrives within milliseconds).
"""

from __future__ import annotations

import http.client
import json
import queue
import socket
import threading
import time
from typing import Any, Iterator

import pytest
from kubernetes import client

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION, BehaviourCatalog, ContainerBehaviour, LogLine
from fakekube.kubelet.logstream import LogStreams

#: Safety net only: how long a test waits for something the stream should send at once.
WAIT_S = 10.0
LINES = [[0, "starting"], [5, "listening on :8080"], [30, "request 1"], [90, "request 2"]]
END = object()


def logging_pod(name: str = "talker", **behaviour: Any) -> dict:
    behaviour = {"log_lines": LINES, **behaviour}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "example/app:1"}]}}


class Follower:
    """One follow request; a thread reads its lines into a queue (END when the server ends it)."""

    def __init__(self, cluster: Cluster, pod: str, query: str = "") -> None:
        host, port = cluster.url.removeprefix("http://").rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=WAIT_S * 3)
        self.conn.request("GET", f"/api/v1/namespaces/default/pods/{pod}/log?follow=true{query}")
        self.response = self.conn.getresponse()
        self.lines: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while line := self.response.readline():
                self.lines.put(line.decode())
        except (OSError, http.client.HTTPException):
            pass
        self.lines.put(END)

    def take(self, count: int) -> list[str]:
        """The next ``count`` lines (fails if they do not come)."""
        return [self._next() for _ in range(count)]

    def _next(self) -> Any:
        item = self.lines.get(timeout=WAIT_S)
        assert item is not END, "the stream ended early"
        return item

    def rest(self) -> list[str]:
        """Every line until the server ends the stream (fails if it does not end)."""
        found = []
        while (item := self.lines.get(timeout=WAIT_S)) is not END:
            found.append(item)
        return found

    def nothing_yet(self) -> bool:
        return self.lines.empty()

    def close(self) -> None:
        """Hang up (a shutdown first wakes the reader thread blocked on the socket)."""
        if self.conn.sock is not None:
            try:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(WAIT_S)
        self.conn.close()


@pytest.fixture
def follower(fakekube: Cluster) -> Iterator[Any]:
    opened: list[Follower] = []

    def open_follower(pod: str = "talker", query: str = "") -> Follower:
        opened.append(Follower(fakekube, pod, query))
        return opened[-1]
    yield open_follower
    for one in opened:
        one.close()


def wait_until(condition: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@pytest.mark.fakekube(nodes=1)
def test_follow_streams_new_lines_as_cluster_time_passes(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(logging_pod())
    fakekube.advance(2)  # started at 1: "starting" is written
    stream = follower(query="&timestamps=true")
    assert stream.response.status == 200 and stream.response.getheader("Transfer-Encoding") == "chunked"
    assert stream.take(1) == ["2025-01-01T00:00:01.000000000Z starting\n"]
    fakekube.advance(10)
    assert stream.take(1) == ["2025-01-01T00:00:06.000000000Z listening on :8080\n"]
    fakekube.advance(30)
    assert stream.take(1) == ["2025-01-01T00:00:31.000000000Z request 1\n"]
    assert stream.nothing_yet()  # the container runs on: the stream stays open


@pytest.mark.fakekube(nodes=1)
def test_follow_ends_when_the_container_exits(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(logging_pod(run_for_s=60))
    fakekube.advance(2)
    stream = follower()
    assert stream.take(1) == ["starting\n"]
    fakekube.advance(200)  # exits at 61: "request 2" (at 91) is never written
    assert stream.rest() == ["listening on :8080\n", "request 1\n"]
    wait_until(lambda: fakekube.log_streams.open_streams == 0)


@pytest.mark.fakekube(nodes=1)
def test_follow_does_not_follow_a_restart(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(logging_pod(run_for_s=10, exit_code=1))
    fakekube.advance(2)
    stream = follower()
    fakekube.advance(30)  # exits at 11, restarts at once and writes "starting" again at 11
    assert stream.rest() == ["starting\n", "listening on :8080\n"]
    again = follower()
    assert again.take(1) == ["starting\n"]  # the new instance, from its own start


@pytest.mark.fakekube(nodes=1)
def test_following_a_finished_container_returns_its_log_and_ends(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(dict(logging_pod(run_for_s=40), spec={
        "nodeName": "node-1", "restartPolicy": "Never", "containers": [{"name": "app", "image": "example/app:1"}]}))
    fakekube.advance(100)
    assert follower().rest() == ["starting\n", "listening on :8080\n", "request 1\n"]


@pytest.mark.fakekube(nodes=1)
def test_following_the_previous_instance_ends_with_it(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(logging_pod(run_for_s=10, exit_code=1))
    fakekube.advance(15)  # exited at 11, restarted at once
    assert follower(query="&previous=true").rest() == ["starting\n", "listening on :8080\n"]


@pytest.mark.fakekube(nodes=1)
def test_follow_ends_when_the_pod_is_deleted(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(logging_pod())
    fakekube.advance(10)
    stream = follower()
    assert stream.take(2) == ["starting\n", "listening on :8080\n"]
    fakekube.delete("v1", "Pod", "talker")
    assert stream.rest() == []


@pytest.mark.fakekube(nodes=1)
def test_follow_honours_tail_and_limit_bytes(fakekube: Cluster, follower: Any) -> None:
    fakekube.create(logging_pod())
    fakekube.advance(10)
    stream = follower(query="&tailLines=1&limitBytes=30")
    assert stream.take(1) == ["listening on :8080\n"]  # 19 bytes; 11 left
    fakekube.advance(100)
    assert stream.rest() == ["request 1\n", "r"]  # the limit cuts mid-line and ends the stream


@pytest.mark.fakekube(nodes=1)
def test_a_client_that_goes_away_frees_its_stream(fakekube: Cluster) -> None:
    fakekube.create(logging_pod())
    fakekube.advance(2)
    host, port = fakekube.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=WAIT_S) as raw:
        raw.sendall(b"GET /api/v1/namespaces/default/pods/talker/log?follow=true HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw.recv(4096).startswith(b"HTTP/1.1 200")
        wait_until(lambda: fakekube.log_streams.open_streams == 1)
    wait_until(lambda: fakekube.log_streams.open_streams == 0)  # noticed while idle: no clock move needed


def test_stopping_the_cluster_ends_open_streams() -> None:
    cluster = Cluster(nodes=1).start()
    try:
        cluster.create(logging_pod())
        cluster.advance(2)
        stream = Follower(cluster, "talker")
        assert stream.take(1) == ["starting\n"]
    finally:
        cluster.stop()
    assert stream.rest() == []
    stream.close()


@pytest.mark.fakekube(nodes=1)
def test_a_slow_reader_never_holds_up_the_clock(fakekube: Cluster) -> None:
    lines = tuple(LogLine(i * 0.01, f"line {i:05d} " + "x" * 100) for i in range(20_000))  # ~2.3 MB over 200 s
    fakekube.kubelets.pods.catalog = BehaviourCatalog().with_image("example/*", ContainerBehaviour(log_lines=lines,
                                                                                          run_for_s=250))
    fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
                     "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "example/big:1"}]}})
    fakekube.advance(1)
    host, port = fakekube.url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=WAIT_S)
    conn.request("GET", "/api/v1/namespaces/default/pods/big/log?follow=true")
    response = conn.getresponse()  # headers only: nobody reads the body yet, the socket fills up
    started = time.monotonic()
    fakekube.advance(300)
    assert time.monotonic() - started < WAIT_S
    got = response.read().decode().splitlines()  # the container exited at 251: the stream ends
    conn.close()
    assert [int(line.split()[1]) for line in got] == list(range(20_000))


@pytest.mark.fakekube(nodes=1)
def test_too_many_follow_streams_are_refused(fakekube: Cluster, follower: Any,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fakekube, "log_streams", LogStreams(max_streams=1))
    fakekube.create(logging_pod())
    fakekube.advance(2)
    first = follower()
    assert first.take(1) == ["starting\n"]
    refused = follower()
    assert refused.response.status == 429
    assert json.loads("".join(refused.rest()))["reason"] == "TooManyRequests"


@pytest.mark.fakekube(nodes=1)
def test_the_python_client_follows(fakekube: Cluster) -> None:
    fakekube.create(logging_pod(run_for_s=40))
    fakekube.advance(2)
    core = client.CoreV1Api(fakekube.client())
    response = core.read_namespaced_pod_log("talker", "default", follow=True, _preload_content=False)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.extend(response.stream(64)), daemon=True)
    reader.start()
    fakekube.advance(60)
    reader.join(WAIT_S)
    assert not reader.is_alive()
    assert b"".join(received) == b"starting\nlistening on :8080\nrequest 1\n"


def test_scaled_time_streams_without_anyone_moving_the_clock() -> None:
    with Cluster(nodes=1, time_scale=600) as cluster:  # 10 virtual minutes per wall second
        cluster.create(logging_pod(run_for_s=100))
        wait_until(lambda: cluster.get("v1", "Pod", "talker")["status"]["phase"] == "Running")
        stream = Follower(cluster, "talker")
        assert stream.rest()[-1] == "request 2\n"
        stream.close()
