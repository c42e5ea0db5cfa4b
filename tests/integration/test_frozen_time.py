"""freezegun, opt-in: code under test sees cluster time; the server and pytest do not."""

from __future__ import annotations

import json
import time
import urllib.request
from datetime import datetime, timezone

import pytest

from fakekube.cluster.frozen import virtual_time
from tests.integration.watchclient import WatchStream


def test_code_under_test_reads_cluster_time(fakekube) -> None:
    with virtual_time(fakekube):
        assert datetime.now(timezone.utc) == fakekube.now
        assert time.time() == fakekube.now.timestamp()
        fakekube.advance(90)
        assert datetime.now(timezone.utc) == fakekube.now
        assert datetime.now(timezone.utc).isoformat() == "2025-01-01T00:01:30+00:00"
    assert datetime.now(timezone.utc).year >= 2026  # the real clock is back


def test_the_server_and_watches_keep_working_while_frozen(fakekube) -> None:
    with virtual_time(fakekube):
        request = urllib.request.Request(fakekube.url + "/api/v1/namespaces/default/configmaps", method="POST",
                                         data=json.dumps({"metadata": {"name": "frozen"}}).encode(),
                                         headers={"Content-Type": "application/json"})
        created = json.load(urllib.request.urlopen(request, timeout=5))
        assert created["metadata"]["creationTimestamp"] == "2025-01-01T00:00:00Z"
        path = "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=1"
        with WatchStream(fakekube.url, path) as stream:
            added = [stream.next_event(), stream.next_event()]  # "frozen" and the namespace's kube-root-ca.crt
            assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in added) == [
                ("ADDED", "frozen"), ("ADDED", "kube-root-ca.crt")]
            assert stream.next_event() is None  # timeoutSeconds ran out on the real clock


def test_the_fixture_follows_resets(fakekube) -> None:
    with virtual_time(fakekube):
        fakekube.advance(30)
        fakekube.reset()
        fakekube.advance(5)
        assert datetime.now(timezone.utc) == fakekube.now == fakekube.config.start_time.replace(second=5)


@pytest.fixture
def frozen(fakekube):
    with virtual_time(fakekube) as factory:
        yield factory


def test_as_a_fixture(fakekube, frozen) -> None:
    fakekube.advance(3600)
    assert datetime.now(timezone.utc).hour == 1
