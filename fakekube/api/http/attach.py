"""``pods/attach`` over the wire: a running container's output, as it is written.

``kubectl attach`` (and ``kubectl run -i``/``debug -it``, which attach after creating) speaks
the remote-command protocols ``pods/exec`` speaks (fakekube.api.http.execstream: WebSocket
``v5``/``v4``/``channel.k8s.io``/``base64.channel.k8s.io``, SPDY/3.1). The container runs
no process to attach to, so its output is its log (kubelet/logstream.py, followed from the
instant of the attach: containerd replays nothing written before): each line reaches the
stdout channel when cluster time reaches it (the clock moving wakes the session, as a
followed log's). When the container instance ends (it exits, is killed, its pod deleted) the
error channel says Success (from v4 on) and the session closes, as the kubelet's attach ends
when the process does. What the client sends (stdin, resizes) is read and dropped.

Refusals follow exec's paths: a container that is not running is the kubelet's ``container
not found`` (plain-text 500 before the upgrade; over v5, an error Status after it).

Bounds (transport time): at most :data:`IDLE_TIMEOUT_S` without output; the cluster's
session bound (``api.pod_streams``, 429 past it); one output message carries at most
:data:`~fakekube.api.http.execstream.CHUNK_BYTES`.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from werkzeug.wrappers import Request, Response

from fakekube.api.http import execstream, spdy, websocket
from fakekube.api.http.server import UPGRADE, Upgraded
from fakekube.api.registry import ResourceType
from fakekube.api.auth.identity import UserInfo
from fakekube.api.verbs import connect
from fakekube.api.verbs.apiserver import APIServer

#: A session that wrote nothing this long (wall seconds) is closed (the kubelet's idle timeout).
IDLE_TIMEOUT_S = 4 * 3600.0
#: How often a session looks for new output (wall seconds).
POLL_S = 0.1
SUCCESS: dict[str, Any] = {"metadata": {}, "status": "Success"}


def attach_response(api: APIServer, rt: ResourceType, namespace: str, name: str, request: Request,
                    user: UserInfo | None = None) -> Response:
    """The answer to a ``pods/attach`` request: a 101 whose handler streams the output, or an error."""
    query = {key: request.args.get(key, "") for key in request.args}
    pod = connect.check_stream(api, rt, namespace, name, request.method, query, container=True, user=user)
    container = query.get("container") or ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
    flags = {key: query.get(key, "").lower() in ("true", "1") for key in ("stdin", "stdout", "stderr", "tty")}
    options = connect.ExecRequest(container, (), **flags)
    streams: connect.PodStreams | None = api.pod_streams
    headers = request.headers
    upgrade = request.environ.get(UPGRADE)
    try:
        if streams is None:
            raise LookupError(f'container not found ("{container}")')
        follow = streams.attach(namespace, name, container)
    except LookupError as exc:
        follow, refusal = None, str(exc)
    if (headers.get("Upgrade") or "").strip().lower() == "spdy/3.1":
        return _spdy(streams, follow, refusal if follow is None else "", options, request, upgrade)
    if not websocket.is_upgrade(headers.get("Upgrade"), headers.get("Connection")):
        return _plain(400, "unable to upgrade: missing upgrade headers in request")
    problem = websocket.handshake_problem(request.method, headers.get("Sec-WebSocket-Version"),
                                          headers.get("Sec-WebSocket-Key"))
    protocol = execstream._negotiate(headers.getlist("Sec-WebSocket-Protocol"))
    if problem is None and protocol is None:
        problem = (f"requested protocol(s) are not supported: {headers.get('Sec-WebSocket-Protocol')}; "
                   f"supports {list(execstream.PROTOCOLS)}")
    if problem is not None or upgrade is None or streams is None:
        return _plain(400, problem or "websocket: this server cannot upgrade connections")
    assert protocol is not None
    if follow is None:
        if protocol != execstream.V5:
            return _plain(500, refusal)
        status = connect.internal_error_status(f"unable to upgrade connection: {refusal}")
        frames = execstream._messages(protocol, options, b"", b"", status)
        upgrade(lambda connection: execstream._session(connection, frames, execstream.V5_STREAMS_PAUSE_S))
    else:
        if not streams.begin_session():
            return _plain(429, "too many port-forward and attach sessions are open")
        upgrade(_counted(streams, lambda connection: _WebSocketAttach(connection, streams, follow, protocol,
                                                                      options).run()))
    response = Response(status=101)
    response.headers["Upgrade"] = "websocket"
    response.headers["Connection"] = "Upgrade"
    response.headers["Sec-WebSocket-Accept"] = websocket.accept_key(headers.get("Sec-WebSocket-Key", ""))
    if protocol:
        response.headers["Sec-WebSocket-Protocol"] = protocol
    return response


def _plain(code: int, message: str) -> Response:
    return Response(message + "\n", status=code, content_type="text/plain; charset=utf-8")


def _counted(streams: connect.PodStreams, session: Callable[[Upgraded], None]) -> Callable[[Upgraded], None]:
    def run(connection: Upgraded) -> None:
        try:
            session(connection)
        finally:
            streams.end_session()
    return run


def _output(follow: Any, streams: connect.PodStreams, emit: Callable[[bytes], None],
            client_gone: Callable[[], bool]) -> bool:
    """Copy the followed output to ``emit`` until the instance ends (True), or the client
    goes, the cluster stops or the session idles out (False)."""
    last = time.monotonic()
    while not streams.stopped() and time.monotonic() - last < IDLE_TIMEOUT_S:
        poll = follow.poll(streams.now())
        if poll.data:
            last = time.monotonic()
            for at in range(0, len(poll.data), execstream.CHUNK_BYTES):
                emit(poll.data[at:at + execstream.CHUNK_BYTES])
        if poll.over:
            return True
        if not poll.pending and client_gone():
            return False
    return False


class _WebSocketAttach:
    """One WebSocket attach session."""

    def __init__(self, connection: Upgraded, streams: connect.PodStreams, follow: Any, protocol: str,
                 options: connect.ExecRequest) -> None:
        self.connection, self.streams, self.follow = connection, streams, follow
        self.protocol, self.options = protocol, options
        self.parser = websocket.FrameParser()
        self.closed = False

    def run(self) -> None:
        if self.protocol == execstream.V5:
            time.sleep(execstream.V5_STREAMS_PAUSE_S)  # transport time: see execstream's note
        first = execstream.STDOUT if self.options.stdout else execstream.STDERR if self.options.stderr \
            else execstream.ERROR
        self.connection.write(execstream._frame(self.protocol, first, b""))
        channel = execstream.STDOUT if self.options.stdout or not self.options.stderr else execstream.STDERR
        ended = _output(self.follow, self.streams,
                        lambda data: self.connection.write(execstream._frame(self.protocol, channel, data)),
                        self._client_gone)
        if ended and not self.closed:
            status = execstream._status_bytes(self.protocol, SUCCESS)
            closing = execstream._frame(self.protocol, execstream.ERROR, status) if status else b""
            self.connection.write(closing + websocket.close_frame())

    def _client_gone(self) -> bool:
        """Read what the client sent meanwhile (dropped); True once it closed."""
        data = self.connection.receive(POLL_S)
        if data is None:
            return False
        if not data:
            return True
        try:
            for opcode, payload in self.parser.feed(data):
                if opcode == websocket.CLOSE:
                    self.connection.write(websocket.close_frame())
                    self.closed = True
                    return True
                if opcode == websocket.PING:
                    self.connection.write(websocket.encode_frame(websocket.PONG, payload))
        except websocket.ProtocolError:
            return True
        return False


def _spdy(streams: connect.PodStreams | None, follow: Any, refusal: str, options: connect.ExecRequest,
          request: Request, upgrade: Any) -> Response:
    """A SPDY/3.1 attach, as the kubelet serves it."""
    offered = [name.strip() for value in request.headers.getlist("X-Stream-Protocol-Version")
               for name in value.split(",") if name.strip()]
    protocol = next((name for name in offered if name in execstream.SPDY_PROTOCOLS), None)
    if protocol is None or upgrade is None or streams is None:
        return _plain(403, f"unable to upgrade: unable to negotiate protocol: client supports {offered}, "
                           f"server accepts {list(execstream.SPDY_PROTOCOLS)}")
    if follow is None:
        return _plain(500, refusal)
    if not streams.begin_session():
        return _plain(429, "too many port-forward and attach sessions are open")
    wanted = {"error"} | {name for name in ("stdin", "stdout", "stderr") if getattr(options, name)}
    if options.tty and protocol not in (execstream.V1, "v2.channel.k8s.io"):
        wanted.add("resize")
    upgrade(_counted(streams, lambda connection: _SpdyAttach(connection, streams, follow, wanted, protocol).run()))
    response = Response(status=101)
    response.headers["Connection"] = "Upgrade"
    response.headers["Upgrade"] = "SPDY/3.1"
    response.headers["X-Stream-Protocol-Version"] = protocol
    return response


class _SpdyAttach:
    """One SPDY attach session: the client's streams answered, then the output streamed."""

    def __init__(self, connection: Upgraded, streams: connect.PodStreams, follow: Any, wanted: set[str],
                 protocol: str) -> None:
        self.connection, self.streams, self.follow = connection, streams, follow
        self.wanted, self.protocol = wanted, protocol
        self.codec, self.parser = spdy.HeaderCodec(), spdy.FrameParser()
        self.ids: dict[str, int] = {}
        self.gone = False

    def run(self) -> None:
        deadline = time.monotonic() + execstream.STREAMS_WAIT_S
        while not self.wanted <= set(self.ids):
            data = self.connection.receive(deadline - time.monotonic()) if time.monotonic() < deadline else b""
            if not data or not execstream._spdy_frames(self.connection, self.codec, self.parser, data, self.ids):
                return
        stream = self.ids.get("stdout") or self.ids.get("stderr")
        ended = _output(self.follow, self.streams,
                        lambda data: self.connection.write(spdy.encode_data(stream, data)) if stream else None,
                        self._client_gone)
        if ended:
            status = execstream._status_bytes(self.protocol, SUCCESS)
            frames = [spdy.encode_data(self.ids["error"], status)] if status else []
            frames += [spdy.encode_data(stream_id, b"", spdy.FLAG_FIN) for _, stream_id in sorted(self.ids.items())]
            self.connection.write(b"".join(frames))

    def _client_gone(self) -> bool:
        data = self.connection.receive(POLL_S)
        if data is None:
            return False
        return not data or not execstream._spdy_frames(self.connection, self.codec, self.parser, data, self.ids)
