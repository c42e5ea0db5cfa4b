"""``pods/portforward`` over the wire: the kubelet's port-forward protocols, answered by the
pod's HTTP behaviour (kubelet/httpmodel.py through ``api.pod_streams``).

Three ways clients ask, all served:

* **SPDY/3.1** (``Upgrade: SPDY/3.1``, ``X-Stream-Protocol-Version: portforward.k8s.io``;
  kubectl before 1.31, or when the WebSocket upgrade fails): for every local connection the
  client opens a pair of streams — ``streamType: error`` and ``streamType: data``, both with
  the ``port`` and a ``requestID`` — and each gets a SYN_REPLY. Once a pair is complete the
  kubelet dials the port: when nothing listens the error stream carries the kubelet's error
  and both streams are reset (kubectl prints ``an error occurred forwarding …``); else the
  bytes of the data stream are the client's connection: each HTTP request in them is answered
  on the same stream as the pod answers it. When the client closes its side of the data
  stream (its local connection ended), both streams are closed; an answer to a request that
  asked to close ends them too.
* **SPDY/3.1 in a WebSocket** (``Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io``;
  kubectl 1.31+, which the apiserver's tunneling handler unwraps upstream): the same
  frames, carried in binary WebSocket messages.
* **WebSocket channels** (``v4.channel.k8s.io``, ``v4.base64.channel.k8s.io``, or none;
  the official Python client's ``portforward``), with the ports in the ``ports`` query: two
  channels per port (data ``2i``, error ``2i+1``), each opened with the port as two
  little-endian bytes; data frames carry the connection's bytes. The session closes when
  every port's connection has ended (or the client closes it).

Bounds (transport time, the wall clock): a session ends after :data:`IDLE_TIMEOUT_S`
without a byte either way (the kubelet's streaming-connection-idle-timeout), when the
cluster stops, or when the client goes; at most :data:`MAX_PAIRS` stream pairs per session;
the number of open sessions per cluster is ``api.pod_streams``' bound (a 429 past it).
Answers come at once in cluster time (a route's ``delay_s`` is not waited out here).
"""

from __future__ import annotations

import base64
import struct
import time
from typing import Callable

from werkzeug.wrappers import Request, Response

from fakekube.api.http import httpwire, spdy, websocket
from fakekube.api.http.server import UPGRADE, Upgraded
from fakekube.api.registry import ResourceType
from fakekube.api.auth.identity import UserInfo
from fakekube.api.verbs import connect
from fakekube.api.verbs.apiserver import APIServer

#: The port-forward protocol, and its WebSocket-tunneled name.
PORT_FORWARD_V1 = "portforward.k8s.io"
TUNNELED = "SPDY/3.1+" + PORT_FORWARD_V1
#: The channel protocols of the kubelet's WebSocket port-forward.
V4_BINARY, V4_BASE64 = "v4.channel.k8s.io", "v4.base64.channel.k8s.io"
#: A session with no traffic this long (wall seconds) is closed (the kubelet's default 4 h).
IDLE_TIMEOUT_S = 4 * 3600.0
#: How often a waiting session looks up (wall seconds): for a stopped cluster, a gone client.
POLL_S = 0.5
#: Stream pairs (forwarded connections) one session may open.
MAX_PAIRS = 1024
#: SPDY RST_STREAM status: the stream was cancelled.
CANCEL = 5


def portforward_response(api: APIServer, rt: ResourceType, namespace: str, name: str, request: Request,
                         user: UserInfo | None = None) -> Response:
    """The answer to a ``pods/portforward`` request: a 101 whose handler runs the session, or an error."""
    query = {key: request.args.get(key, "") for key in request.args}
    connect.check_stream(api, rt, namespace, name, request.method, query, container=False, user=user)
    streams: connect.PodStreams | None = api.pod_streams
    if streams is None or not streams.runs(namespace, name):
        return _plain(404, "pod does not exist")
    headers = request.headers
    upgrade = request.environ.get(UPGRADE)
    if (headers.get("Upgrade") or "").strip().lower() == "spdy/3.1":
        offered = [n.strip() for value in headers.getlist("X-Stream-Protocol-Version") for n in value.split(",")
                   if n.strip()]
        if PORT_FORWARD_V1 not in offered or upgrade is None:
            return _plain(403, f"unable to upgrade: unable to negotiate protocol: client supports {offered}, "
                               f"server accepts {[PORT_FORWARD_V1]}")
        return _upgraded(streams, upgrade, lambda conn: _SpdySession(_Raw(conn), streams, namespace, name).run(),
                         spdy_response())
    if not websocket.is_upgrade(headers.get("Upgrade"), headers.get("Connection")):
        return _plain(400, "unable to upgrade: missing upgrade headers in request")
    problem = websocket.handshake_problem(request.method, headers.get("Sec-WebSocket-Version"),
                                          headers.get("Sec-WebSocket-Key"))
    offered = [n.strip() for value in headers.getlist("Sec-WebSocket-Protocol") for n in value.split(",") if n.strip()]
    protocol = next((n for n in offered if n in (TUNNELED, V4_BINARY, V4_BASE64)), None if offered else "")
    if problem is None and protocol is None:
        problem = (f"requested protocol(s) are not supported: {offered}; supports "
                   f"{[TUNNELED, V4_BINARY, V4_BASE64]}")
    if problem is not None or upgrade is None:
        return _plain(400, problem or "websocket: this server cannot upgrade connections")
    assert protocol is not None
    response = Response(status=101)
    response.headers["Upgrade"] = "websocket"
    response.headers["Connection"] = "Upgrade"
    response.headers["Sec-WebSocket-Accept"] = websocket.accept_key(headers.get("Sec-WebSocket-Key", ""))
    if protocol:
        response.headers["Sec-WebSocket-Protocol"] = protocol
    if protocol == TUNNELED:
        return _upgraded(streams, upgrade, lambda conn: _SpdySession(_Tunnel(conn), streams, namespace, name).run(),
                         response)
    ports = _ports(request.args.getlist("ports"))
    if isinstance(ports, str):
        return _plain(400, ports)
    base64_frames = protocol == V4_BASE64
    return _upgraded(streams, upgrade,
                     lambda conn: _ChannelSession(conn, streams, namespace, name, ports, base64_frames).run(), response)


def _plain(code: int, message: str) -> Response:
    """A plain-text refusal, as the kubelet gives it before any upgrade."""
    return Response(message + "\n", status=code, content_type="text/plain; charset=utf-8")


def spdy_response() -> Response:
    response = Response(status=101)
    response.headers["Connection"] = "Upgrade"
    response.headers["Upgrade"] = "SPDY/3.1"
    response.headers["X-Stream-Protocol-Version"] = PORT_FORWARD_V1
    return response


def _upgraded(streams: connect.PodStreams, upgrade: Callable[[Callable[[Upgraded], None]], None],
              session: Callable[[Upgraded], None], response: Response) -> Response:
    """Hand the connection to ``session`` after the 101, counting it against the bound."""
    if not streams.begin_session():
        return _plain(429, "too many port-forward and attach sessions are open")

    def run(connection: Upgraded) -> None:
        try:
            session(connection)
        finally:
            streams.end_session()

    upgrade(run)
    return response


def _ports(values: list[str]) -> list[int] | str:
    """The ``ports`` query of a channel session (``NewV4Options``), or the kubelet's 400 text."""
    if not values:
        return 'query parameter "port" is required'
    ports = []
    for value in values:
        if not value:
            return 'query parameter "port" cannot be empty'
        for part in value.split(","):
            if not part.isdigit() or int(part) > 65535:
                return f'unable to parse "{value}" as a port: strconv.ParseUint: parsing "{part}": invalid syntax'
            if int(part) < 1:
                return f'port "{value}" must be > 0'
            ports.append(int(part))
    return ports


class _Connection:
    """One forwarded connection: the client's bytes in, the pod's answers out."""

    def __init__(self, streams: connect.PodStreams, namespace: str, pod: str, port: int) -> None:
        self.streams, self.namespace, self.pod, self.port = streams, namespace, pod, port
        self.feed = httpwire.RequestFeed()

    def receive(self, data: bytes) -> tuple[bytes, bool]:
        """(what the pod sends back, whether it closed the connection after it)."""
        out = bytearray()
        for item in self.feed.feed(data):
            if isinstance(item, httpwire.WireError):
                if item.status is not None:
                    out += httpwire.error_answer(item.status)
                break
            request = connect.ProxiedRequest(item.method, item.target, item.headers, item.body)
            answer = self.streams.answer(self.namespace, self.pod, self.port, request)
            if answer is None:  # it stopped listening meanwhile: the connection is reset
                return bytes(out), True
            out += httpwire.render(answer.status, answer.headers, answer.body, item.method, item.close)
        return bytes(out), self.feed.done


# -- SPDY (plain or tunneled) ---------------------------------------------------------------

class _Raw:
    """SPDY bytes straight on the connection."""

    def __init__(self, connection: Upgraded) -> None:
        self.connection = connection

    def receive(self, timeout_s: float) -> bytes | None:
        return self.connection.receive(timeout_s)

    def send(self, data: bytes) -> None:
        if data:
            self.connection.write(data)


class _Tunnel:
    """SPDY bytes in binary WebSocket messages (client-go's TunnelingConnection)."""

    def __init__(self, connection: Upgraded) -> None:
        self.connection = connection
        self.parser = websocket.FrameParser()

    def receive(self, timeout_s: float) -> bytes | None:
        data = self.connection.receive(timeout_s)
        if not data:
            return data
        out = bytearray()
        try:
            for opcode, payload in self.parser.feed(data):
                if opcode == websocket.CLOSE:
                    self.connection.write(websocket.close_frame())
                    return bytes(out) or b""
                if opcode == websocket.PING:
                    self.connection.write(websocket.encode_frame(websocket.PONG, payload))
                elif opcode == websocket.BINARY:
                    out += payload
        except websocket.ProtocolError as error:
            self.connection.write(websocket.close_frame(error.code))
            return b""
        return bytes(out) or None  # control frames or empty messages only: still open

    def send(self, data: bytes) -> None:
        if data:
            self.connection.write(websocket.encode_frame(websocket.BINARY, data))


class _Pair:
    """A forwarded connection's two SPDY streams."""

    def __init__(self, request_id: str, port: int) -> None:
        self.request_id, self.port = request_id, port
        self.data: int | None = None
        self.error: int | None = None
        self.connection: _Connection | None = None
        self.done = False


class _SpdySession:
    """One SPDY port-forward session (the module docstring)."""

    def __init__(self, transport: _Raw | _Tunnel, streams: connect.PodStreams, namespace: str, pod: str) -> None:
        self.transport, self.streams, self.namespace, self.pod = transport, streams, namespace, pod
        self.codec, self.parser = spdy.HeaderCodec(), spdy.FrameParser()
        self.pairs: dict[str, _Pair] = {}
        self.by_stream: dict[int, tuple[_Pair, str]] = {}

    def run(self) -> None:
        last = time.monotonic()
        while not self.streams.stopped() and time.monotonic() - last < IDLE_TIMEOUT_S:
            data = self.transport.receive(POLL_S)
            if data is None:
                continue
            if not data:
                return
            last = time.monotonic()
            try:
                out = b"".join(self._frame(frame) for frame in self.parser.feed(data))
            except (spdy.ProtocolError, _Goodbye):
                return
            self.transport.send(out)

    def _frame(self, frame: spdy.Frame) -> bytes:
        if not frame.control:
            return self._data(frame)
        if frame.kind == spdy.GOAWAY:
            raise _Goodbye()
        if frame.kind == spdy.PING:
            return spdy.encode_control(spdy.PING, frame.data)
        if frame.kind == spdy.SYN_STREAM:
            return self._open(frame)
        if frame.kind == spdy.RST_STREAM:
            entry = self.by_stream.get(frame.stream_id)
            if entry is not None:
                entry[0].done = True
        return b""

    def _open(self, frame: spdy.Frame) -> bytes:
        headers = {name.lower(): value for name, value in spdy.syn_stream_headers(frame, self.codec).items()}
        kind, port_text = headers.get("streamtype", ""), headers.get("port", "")
        if kind not in ("data", "error") or not port_text.isdigit() or not 0 < int(port_text) < 65536 \
                or len(self.pairs) >= MAX_PAIRS:
            return _reset(frame.stream_id)
        request_id = headers.get("requestid") or str(frame.stream_id if kind == "error" else frame.stream_id - 2)
        pair = self.pairs.setdefault(request_id, _Pair(request_id, int(port_text)))
        if getattr(pair, kind) is not None:
            return _reset(frame.stream_id)
        setattr(pair, kind, frame.stream_id)
        self.by_stream[frame.stream_id] = (pair, kind)
        out = spdy.syn_reply(frame.stream_id, self.codec)
        if pair.data is not None and pair.error is not None:
            out += self._dial(pair)
        return out

    def _dial(self, pair: _Pair) -> bytes:
        """Both streams are open: the kubelet connects to the port, or says why it cannot."""
        assert pair.data is not None and pair.error is not None
        if not self.streams.listens(self.namespace, self.pod, pair.port):
            pair.done = True
            message = self.streams.forward_error(self.namespace, self.pod, pair.port).encode()
            return spdy.encode_data(pair.error, message) + _reset(pair.data) + _reset(pair.error)
        pair.connection = _Connection(self.streams, self.namespace, self.pod, pair.port)
        return b""

    def _data(self, frame: spdy.Frame) -> bytes:
        entry = self.by_stream.get(frame.stream_id)
        if entry is None:
            return b""
        pair, kind = entry
        if kind != "data" or pair.done or pair.connection is None or pair.data is None:
            return b""
        answer, closed = pair.connection.receive(frame.data) if frame.data else (b"", False)
        out = b"".join(spdy.encode_data(pair.data, answer[at:at + spdy.DATA_CHUNK_BYTES])
                       for at in range(0, len(answer), spdy.DATA_CHUNK_BYTES))
        if closed or frame.flags & spdy.FLAG_FIN:
            pair.done = True
            out += spdy.encode_data(pair.data, b"", spdy.FLAG_FIN)
            if pair.error is not None:
                out += spdy.encode_data(pair.error, b"", spdy.FLAG_FIN)
        return out


class _Goodbye(Exception):
    """The client sent GOAWAY."""


def _reset(stream_id: int) -> bytes:
    return spdy.encode_control(spdy.RST_STREAM, struct.pack("!II", stream_id & 0x7FFFFFFF, CANCEL))


# -- WebSocket channels ---------------------------------------------------------------------

class _ChannelSession:
    """A channel-protocol port-forward session (the module docstring)."""

    def __init__(self, connection: Upgraded, streams: connect.PodStreams, namespace: str, pod: str,
                 ports: list[int], base64_frames: bool) -> None:
        self.connection, self.streams = connection, streams
        self.base64 = base64_frames
        self.parser = websocket.FrameParser()
        self.forwards: list[_Connection | None] = []
        for port in ports:
            listening = streams.listens(namespace, pod, port)
            self.forwards.append(_Connection(streams, namespace, pod, port) if listening else None)
        self.errors = [None if listening else streams.forward_error(namespace, pod, port)
                       for listening, port in zip((f is not None for f in self.forwards), ports)]
        self.ports = ports

    def run(self) -> None:
        opening = b""
        for index, port in enumerate(self.ports):
            prefix = struct.pack("<H", port)
            opening += self._frame(2 * index, prefix) + self._frame(2 * index + 1, prefix)
            error = self.errors[index]
            if error is not None:
                opening += self._frame(2 * index + 1, error.encode())
        self.connection.write(opening)
        if all(forward is None for forward in self.forwards):
            self.connection.write(websocket.close_frame())
            return
        last = time.monotonic()
        while not self.streams.stopped() and time.monotonic() - last < IDLE_TIMEOUT_S:
            data = self.connection.receive(POLL_S)
            if data is None:
                continue
            if not data or not self._messages(data):
                return
            last = time.monotonic()
            if all(forward is None for forward in self.forwards):
                self.connection.write(websocket.close_frame())
                return

    def _messages(self, data: bytes) -> bool:
        """Handle the client's frames; False when the session is over."""
        try:
            for opcode, payload in self.parser.feed(data):
                if opcode == websocket.CLOSE:
                    self.connection.write(websocket.close_frame())
                    return False
                if opcode == websocket.PING:
                    self.connection.write(websocket.encode_frame(websocket.PONG, payload))
                elif opcode in (websocket.BINARY, websocket.TEXT) and payload:
                    self._channel_data(payload)
        except websocket.ProtocolError as error:
            self.connection.write(websocket.close_frame(error.code))
            return False
        return True

    def _channel_data(self, payload: bytes) -> None:
        if self.base64:
            channel, data = int(chr(payload[0])) if chr(payload[0]).isdigit() else -1, base64.b64decode(payload[1:])
        else:
            channel, data = payload[0], payload[1:]
        index = channel // 2
        if channel % 2 or not 0 <= index < len(self.forwards):
            return
        forward = self.forwards[index]
        if forward is None:
            return
        answer, closed = forward.receive(data)
        if answer:
            self.connection.write(self._frame(channel, answer))
        if closed:
            self.forwards[index] = None

    def _frame(self, channel: int, data: bytes) -> bytes:
        if self.base64:
            return websocket.encode_frame(websocket.TEXT, str(channel).encode() + base64.b64encode(data))
        return websocket.encode_frame(websocket.BINARY, bytes([channel]) + data)

