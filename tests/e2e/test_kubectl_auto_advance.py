"""A CI script against ``fakekube serve --auto-advance`` (issue 23): time waits for it.

The script of the issue, step by step: fail a node with curl, pause, ``kubectl get
nodes`` (nothing moved during the pause: nobody was waiting), then ``kubectl wait`` (its
watch is a client waiting, so the clock jumps timer to timer until the node is Unknown,
55 virtual seconds later) — and ``kubectl describe`` after a one-hour jump shows ages, not
``<invalid>``, since a clock that jumps starts a day before the wall clock. Every kubectl
call is bounded by its own ``--timeout`` or the helper's.
"""

from __future__ import annotations

import json
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest

from tests.e2e.conftest import Kubectl, served

VERSION = "1.33"
NODE = "node-1"
#: The script's ``sleep 2``, shortened: the rule this checks used to skip dozens of timers in it.
PAUSE_S = 1.0


@pytest.fixture
def script(tmp_path: Path) -> Iterator[tuple[Kubectl, str]]:
    """kubectl 1.33 and the control API's base URL of one ``fakekube serve --auto-advance``."""
    with served(tmp_path, "--nodes", "2", "--auto-advance", "--no-system-pods", "--no-metrics-server") as server:
        yield server.kubectl, server.url


def control(url: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + "/fakekube/v1" + path, method="GET" if body is None else "POST",
                                     data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def node_ready(kubectl: Kubectl) -> str:
    return kubectl.ok("get", "node", NODE, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")


def test_a_pause_between_commands_moves_nothing_and_kubectl_wait_returns(script: tuple[Kubectl, str]) -> None:
    kubectl, url = script
    control(url, f"/nodes/{NODE}/fail", {})
    before = control(url, "/clock")["now"]
    time.sleep(PAUSE_S)  # the script's pause: nobody waits, so nothing may happen in it
    assert node_ready(kubectl) == "True"
    assert control(url, "/clock")["now"] == before
    waited = kubectl("wait", "--for=condition=Ready=Unknown", f"node/{NODE}", "--timeout=60s", timeout_s=70)
    assert (waited.rc, waited.stdout) == (0, f"node/{NODE} condition met\n"), waited.stderr
    unknown_at = control(url, "/clock")["now"]
    assert unknown_at > before
    time.sleep(PAUSE_S)
    assert control(url, "/clock")["now"] == unknown_at  # kubectl hung up: time stands still again


def test_describe_after_an_hour_s_jump_shows_ages_not_invalid(script: tuple[Kubectl, str]) -> None:
    kubectl, url = script
    start = datetime.fromisoformat(control(url, "/clock")["now"].replace("Z", "+00:00"))
    assert datetime.now(timezone.utc) - start >= timedelta(hours=23)  # a day back, to the second
    control(url, "/clock/advance", {"seconds": 3600})
    kubectl.ok("run", "web", "--image=nginx")
    control(url, "/clock/advance", {"seconds": 600})  # events within the hour events live (--event-ttl)
    described = kubectl.ok("describe", "pod", "web")
    events = described[described.index("Events:"):]
    assert "Scheduled" in events and "<invalid>" not in events, events
    wide = kubectl.ok("get", "events", "-o", "wide")
    assert "<invalid>" not in wide, wide
