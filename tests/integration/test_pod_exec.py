"""pods/exec through the official Python client's stream() (WebSocket; it offers v5 then v4
of channel.k8s.io, and a 1.33 apiserver picks v5) and raw WebSocket clients of the other
channel protocols; the answers without an upgrade."""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
import websocket as wsclient  # websocket-client, the Python client's own transport
from kubernetes import client
from kubernetes.stream import stream

from fakekube import Cluster
from tests.integration.support import pod
from tests.integration.test_request_semantics import request

pytestmark = pytest.mark.fakekube(nodes=1)
PODS = "/api/v1/namespaces/default/pods"
BEHAVIOUR = {"exec_commands": [{"command": "migrate *", "stdout": "applied\n", "stderr": "slow\n", "exit_code": 3}]}


def _web(fakekube: Cluster, behaviour: dict[str, Any] | None = None, **fields: Any) -> client.CoreV1Api:
    fakekube.create(pod("web", behaviour, **fields))
    fakekube.advance(5)
    return client.CoreV1Api(fakekube.client())


def _exec(core: client.CoreV1Api, command: list[str], **options: Any) -> Any:
    return stream(core.connect_get_namespaced_pod_exec, "web", "default", command=command, stderr=True, stdin=False,
                  stdout=True, tty=False, **options)


def test_stream_returns_a_commands_output(fakekube: Cluster) -> None:
    core = _web(fakekube, BEHAVIOUR)
    assert _exec(core, ["echo", "hello", "world"]) == "hello world\n"
    session = _exec(core, ["migrate", "--all"], _preload_content=False)
    session.run_forever(timeout=10)
    assert (session.read_stdout(), session.read_stderr(), session.returncode) == ("applied\n", "slow\n", 3)


def _status(core: client.CoreV1Api, command: list[str]) -> Any:
    session = _exec(core, command, _preload_content=False)
    session.run_forever(timeout=10)
    return json.loads(session.read_channel(3))


def test_the_error_channel_carries_the_translators_status(fakekube: Cluster) -> None:
    core = _web(fakekube, BEHAVIOUR)
    assert _status(core, ["migrate", "x"]) == {
        "metadata": {}, "status": "Failure",
        "message": "command terminated with non-zero exit code: command terminated with exit code 3",
        "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}}
    missing = _status(core, ["psql"])
    assert (missing["reason"], missing["code"]) == ("InternalError", 500)
    assert missing["message"].startswith("Internal error occurred: Internal error occurred: error executing command in "
                                         'container: failed to exec in container: failed to start exec "')
    assert missing["details"]["causes"][0]["message"].endswith(
        'exec: "psql": executable file not found in $PATH: unknown')
    assert _status(core, ["true"]) == {"metadata": {}, "status": "Success"}


def test_a_container_not_running(fakekube: Cluster) -> None:
    core = _web(fakekube, {"start_delay_s": 60})
    assert _status(core, ["true"]) == {
        "metadata": {}, "status": "Failure",
        "message": 'Internal error occurred: unable to upgrade connection: container not found ("c")',
        "reason": "InternalError", "details": {"causes": [{"message": 'unable to upgrade connection: container not found ("c")'}]},
        "code": 500}
    # Without v5 the request is proxied to the kubelet, which refuses before any upgrade.
    url = urlsplit(fakekube.url)
    with pytest.raises(wsclient.WebSocketBadStatusException) as refused:
        wsclient.create_connection(f"ws://{url.hostname}:{url.port}{PODS}/web/exec?command=true&stdout=true",
                                   subprotocols=["v4.channel.k8s.io"], timeout=10)
    assert (refused.value.status_code, refused.value.resp_body) == (500, b'container not found ("c")\n')


def _raw(fakekube: Cluster, protocol: str, query: str) -> list[tuple[int, bytes]]:
    """(opcode, data) of every message a raw WebSocket client receives, until the close."""
    url = urlsplit(fakekube.url)
    connection = wsclient.create_connection(f"ws://{url.hostname}:{url.port}{PODS}/web/exec?{query}",
                                            subprotocols=[protocol] if protocol else None, timeout=10)
    messages = []
    try:
        while True:
            opcode, data = connection.recv_data(control_frame=True)
            messages.append((opcode, data))
            if opcode == wsclient.ABNF.OPCODE_CLOSE:
                return messages
    finally:
        connection.close()


def test_the_older_channel_protocols(fakekube: Cluster) -> None:
    _web(fakekube, BEHAVIOUR)
    query = "command=migrate&command=now&stdout=true&stderr=true"
    close = (wsclient.ABNF.OPCODE_CLOSE, b"\x03\xe8")
    # v4.channel.k8s.io: proxied to the kubelet, whose Status names the command.
    v4 = _raw(fakekube, "v4.channel.k8s.io", query)
    assert v4[:3] == [(2, b"\x01"), (2, b"\x01applied\n"), (2, b"\x02slow\n")] and v4[4] == close
    assert json.loads(v4[3][1][1:])["message"] == (
        "command terminated with non-zero exit code: error executing command [migrate now], exit code 3")
    # channel.k8s.io: binary, channel byte first; a failure's text on channel 3.
    text = b"command terminated with non-zero exit code: error executing command [migrate now], exit code 3"
    assert _raw(fakekube, "channel.k8s.io", query) == [
        (2, b"\x01"), (2, b"\x01applied\n"), (2, b"\x02slow\n"), (2, b"\x03" + text), close]
    # base64.channel.k8s.io: text messages, the channel digit then base64.
    assert _raw(fakekube, "base64.channel.k8s.io", query) == [
        (1, b"1"), (1, b"1" + base64.b64encode(b"applied\n")), (1, b"2" + base64.b64encode(b"slow\n")),
        (1, b"3" + base64.b64encode(text)), close]
    # Only stdout asked for: stderr is not sent; success writes nothing on the v1 error channel.
    assert _raw(fakekube, "", "command=echo&command=x&stdout=true") == [(2, b"\x01"), (2, b"\x01x\n"), close]


def test_answers_without_a_websocket(fakekube: Cluster) -> None:
    _web(fakekube)
    code, answer, _ = request(fakekube, "POST", f"{PODS}/web/exec?command=ls&stdout=true")
    assert (code, answer) == (400, "unable to upgrade: missing upgrade headers in request\n")
    url = urlsplit(fakekube.url)
    with pytest.raises(wsclient.WebSocketBadStatusException) as refused:
        wsclient.create_connection(f"ws://{url.hostname}:{url.port}{PODS}/web/exec?command=ls&stdout=true",
                                   subprotocols=["v9.channel.k8s.io"], timeout=10)
    assert refused.value.status_code == 400
    assert b"requested protocol(s) are not supported" in refused.value.resp_body


def _spdy_upgrade(fakekube: Cluster, path: str, protocols: list[str]) -> tuple[int, dict[str, str], bytes]:
    """A SPDY/3.1 upgrade request as kubectl 1.29 sends it: (status, headers, body)."""
    url = urlsplit(fakekube.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        connection.putrequest("POST", path)
        for name, value in [("Connection", "Upgrade"), ("Upgrade", "SPDY/3.1"), ("Content-Length", "0")] + [
                ("X-Stream-Protocol-Version", protocol) for protocol in protocols]:
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), b"" if response.status == 101 else response.read()
    finally:
        connection.close()


def test_spdy_negotiation_and_refusals(fakekube: Cluster) -> None:
    _web(fakekube)
    path = f"{PODS}/web/exec?command=true&stdout=true"
    code, headers, _ = _spdy_upgrade(fakekube, path, ["v5.channel.k8s.io", "v4.channel.k8s.io", "channel.k8s.io"])
    assert (code, headers["Upgrade"], headers["X-Stream-Protocol-Version"]) == (101, "SPDY/3.1", "v4.channel.k8s.io")
    assert _spdy_upgrade(fakekube, path, ["v9.channel.k8s.io"])[::2] == (
        403, b"unable to upgrade: unable to negotiate protocol: client supports ['v9.channel.k8s.io'], server accepts "
             b"['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io']\n")
    fakekube.create(pod("later", {"start_delay_s": 60}))
    assert _spdy_upgrade(fakekube, f"{PODS}/later/exec?command=true&stdout=true", ["v4.channel.k8s.io"])[::2] == (
        500, b'container not found ("c")\n')


def test_exec_checks_come_first(fakekube: Cluster) -> None:
    fakekube.create(pod("unbound", node="", schedulerName="none"))
    assert request(fakekube, "GET", f"{PODS}/missing/exec?command=ls")[:2] == (404, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": 'pods "missing" not found',
        "reason": "NotFound", "details": {"name": "missing", "kind": "pods"}, "code": 404})
    code, answer, _ = request(fakekube, "GET", f"{PODS}/unbound/exec?command=ls")
    assert (code, answer["message"]) == (400, "pod unbound does not have a host assigned")
