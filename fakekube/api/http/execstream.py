"""``pods/exec`` over the wire: the remote-command stream protocols on a WebSocket.

kubectl 1.30+ asks for ``v5.channel.k8s.io`` (and falls back to SPDY when the upgrade is
refused); the official Python client's ``stream()`` asks for ``v4.channel.k8s.io``; the
older ``channel.k8s.io`` and ``base64.channel.k8s.io`` are served too. Each WebSocket
message is one channel byte (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; base64: the
digit, then base64 text) and its data. A session here is short, because an exec's outcome
is known before the upgrade (output is instantaneous in cluster time):

1. an empty message on the lowest output channel the client asked for (upstream's "the
   connection is established" signal), the command's stdout and stderr in messages of at
   most :data:`CHUNK_BYTES`, then the Status on the error channel (JSON from v4 on; before
   it, the error's text and nothing on success);
2. a close frame (1000), then what the client still sends (stdin, pings, its close) is
   read and dropped — at most :data:`DRAIN_BYTES`, for at most :data:`DRAIN_S` wall
   seconds — until it closes; pings are answered.

Failures keep upstream's two paths: a v5 request is upgraded first (the apiserver's stream
translator), so a stopped container is a Status on the error channel; an older protocol is
proxied to the kubelet, whose refusal is a plain-text 500 before any upgrade.

SPDY/3.1 (kubectl 1.27-1.29, and 1.30+ when the WebSocket upgrade fails) is proxied to the
kubelet upstream, and served here as the kubelet does (:mod:`fakekube.api.http.spdy`): the
client opens one stream per channel, each gets a SYN_REPLY; once every stream the query
asks for is open (within :data:`STREAMS_WAIT_S`), stdout, stderr and the Status are written
and each stream ends with FIN; then the client is drained as above until it goes away.
A request without any upgrade gets the kubelet's plain-text 400.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Callable

from werkzeug.wrappers import Request, Response

from fakekube.api.auth.identity import UserInfo
from fakekube.api.http import spdy, websocket
from fakekube.api.http.server import UPGRADE, Upgraded
from fakekube.api.registry import ResourceType
from fakekube.api.verbs import connect
from fakekube.api.verbs.apiserver import APIServer

#: The subprotocols served, in the server's order of preference ("" = none asked: v1).
V5 = "v5.channel.k8s.io"
V4 = "v4.channel.k8s.io"
V1 = "channel.k8s.io"
BASE64 = "base64.channel.k8s.io"
PROTOCOLS = (V5, V4, V1, BASE64)
STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3

#: Output is sent in messages of at most this many bytes.
CHUNK_BYTES = 32 * 1024
#: After the close frame: how much of what the client still sends is read, and for how long.
DRAIN_BYTES = 4 * 1024 * 1024
DRAIN_S = 5.0

#: How long a v5 session waits (wall clock) between the 101 and its first message. kubectl
#: 1.30-1.33 (client-go before 1.34) start reading the connection before they create their
#: streams and drop a message for a stream not yet created; upstream's output comes after a
#: CRI exec round trip, fakekube's is ready at once, so without this pause kubectl would
#: sometimes print nothing under load.
V5_STREAMS_PAUSE_S = 0.05

#: The protocols served over SPDY (``X-Stream-Protocol-Version``), the kubelet's.
SPDY_PROTOCOLS = (V4, "v3.channel.k8s.io", "v2.channel.k8s.io", V1)
#: How long a SPDY client has to open the streams it asked for (the kubelet's
#: streamCreationTimeout is 30 s).
STREAMS_WAIT_S = 30.0


def exec_response(api: APIServer, rt: ResourceType, namespace: str, name: str, request: Request,
                  user: UserInfo | None = None) -> Response:
    """The answer to a ``pods/exec`` request: a 101 whose handler runs the session, or an error."""
    query = {key: request.args.get(key, "") for key in request.args}
    pod, options = connect.check_exec(api, rt, namespace, name, request.method, query,
                                      request.args.getlist("command"), user)
    headers = request.headers
    if (headers.get("Upgrade") or "").strip().lower() == "spdy/3.1":
        return _spdy_response(api, pod, options, request)
    if not websocket.is_upgrade(headers.get("Upgrade"), headers.get("Connection")):
        return _plain(400, "unable to upgrade: missing upgrade headers in request")
    problem = websocket.handshake_problem(request.method, headers.get("Sec-WebSocket-Version"),
                                          headers.get("Sec-WebSocket-Key"))
    protocol = _negotiate(headers.getlist("Sec-WebSocket-Protocol"))
    if problem is None and protocol is None:
        problem = f"requested protocol(s) are not supported: {headers.get('Sec-WebSocket-Protocol')}; supports {list(PROTOCOLS)}"
    upgrade = request.environ.get(UPGRADE)
    if problem is not None or upgrade is None:
        return _plain(400, problem or "websocket: this server cannot upgrade connections")
    assert protocol is not None
    pause_s = V5_STREAMS_PAUSE_S if protocol == V5 else 0.0
    try:
        if options.stdin:
            stream = connect.open_exec(api, pod, options)
            upgrade(lambda connection: _stdin_session(connection, protocol, options, stream, pause_s))
            return _switching(protocol, headers.get("Sec-WebSocket-Key", ""))
        outcome = connect.run_exec(api, pod, options)
        messages = _messages(protocol, options, outcome.stdout, outcome.stderr,
                             connect.exec_status(outcome, options.command, protocol == V5))
    except LookupError as exc:  # the container is not running: the kubelet refuses the stream
        if protocol != V5:
            return _plain(500, str(exc))
        status = connect.internal_error_status(f"unable to upgrade connection: {exc}")
        messages = _messages(protocol, options, b"", b"", status)
    upgrade(lambda connection: _session(connection, messages, pause_s))
    return _switching(protocol, headers.get("Sec-WebSocket-Key", ""))


def _switching(protocol: str, key: str) -> Response:
    """The WebSocket 101 that hands the connection to the session."""
    response = Response(status=101)
    response.headers["Upgrade"] = "websocket"
    response.headers["Connection"] = "Upgrade"
    response.headers["Sec-WebSocket-Accept"] = websocket.accept_key(key)
    if protocol:
        response.headers["Sec-WebSocket-Protocol"] = protocol
    return response


def _spdy_response(api: APIServer, pod: dict[str, Any], options: connect.ExecRequest, request: Request) -> Response:
    """A SPDY/3.1 upgrade, answered as the kubelet does."""
    offered = [name.strip() for value in request.headers.getlist("X-Stream-Protocol-Version")
               for name in value.split(",") if name.strip()]
    protocol = next((name for name in offered if name in SPDY_PROTOCOLS), None)
    upgrade = request.environ.get(UPGRADE)
    if protocol is None or upgrade is None:
        return _plain(403, f"unable to upgrade: unable to negotiate protocol: client supports {offered}, "
                           f"server accepts {list(SPDY_PROTOCOLS)}")
    wanted = {"error"} | {name for name in ("stdin", "stdout", "stderr") if getattr(options, name)}
    if options.tty and protocol != V1 and protocol != "v2.channel.k8s.io":
        wanted.add("resize")
    try:
        if options.stdin:
            stream = connect.open_exec(api, pod, options)
            chosen = protocol
            upgrade(lambda connection: _spdy_stdin_session(connection, wanted, options, stream, chosen))
            return _spdy_switching(protocol)
        outcome = connect.run_exec(api, pod, options)
    except LookupError as exc:
        return _plain(500, str(exc))
    status = _status_bytes(protocol, connect.exec_status(outcome, options.command, translated=False))
    outputs = {"stdout": outcome.stdout if options.stdout else b"", "stderr": outcome.stderr if options.stderr else b"",
               "error": status}
    upgrade(lambda connection: _spdy_session(connection, wanted, outputs))
    return _spdy_switching(protocol)


def _spdy_switching(protocol: str) -> Response:
    response = Response(status=101)
    response.headers["Connection"] = "Upgrade"
    response.headers["Upgrade"] = "SPDY/3.1"
    response.headers["X-Stream-Protocol-Version"] = protocol
    return response


def _spdy_session(connection: Upgraded, wanted: set[str], outputs: dict[str, bytes]) -> None:
    """Reply to each stream the client opens; once all are open, write and end them; drain."""
    codec, parser = spdy.HeaderCodec(), spdy.FrameParser()
    streams: dict[str, int] = {}
    deadline = time.monotonic() + STREAMS_WAIT_S
    while not wanted <= set(streams):
        data = connection.read(deadline - time.monotonic()) if time.monotonic() < deadline else b""
        if not data or not _spdy_frames(connection, codec, parser, data, streams):
            return
    frames = []
    for name, stream_id in sorted(streams.items(), key=lambda item: item[1]):
        output = outputs.get(name, b"")
        frames += [spdy.encode_data(stream_id, output[at:at + spdy.DATA_CHUNK_BYTES])
                   for at in range(0, len(output), spdy.DATA_CHUNK_BYTES)]
        frames.append(spdy.encode_data(stream_id, b"", spdy.FLAG_FIN))
    connection.write(b"".join(frames))
    _drain(connection, lambda data: _spdy_frames(connection, codec, parser, data, streams))


def _spdy_frames(connection: Upgraded, codec: spdy.HeaderCodec, parser: spdy.FrameParser, data: bytes,
                 streams: dict[str, int], stdin: list[tuple[bytes, bool]] | None = None) -> bool:
    """Handle the frames in ``data``: record and reply to new streams, answer pings; False
    when the client says goodbye or breaks the protocol. Stdin's data (and its FIN) is
    collected in ``stdin``, or dropped without it."""
    try:
        for frame in parser.feed(data):
            if not frame.control:
                if stdin is not None and frame.stream_id == streams.get("stdin"):
                    stdin.append((frame.data, bool(frame.flags & spdy.FLAG_FIN)))
                continue
            if frame.kind == spdy.GOAWAY:
                return False
            if frame.kind == spdy.PING:
                connection.write(spdy.encode_control(spdy.PING, frame.data))
            elif frame.kind == spdy.SYN_STREAM:
                kind = spdy.syn_stream_headers(frame, codec).get("streamtype", "")
                streams.setdefault(kind, frame.stream_id)
                connection.write(spdy.syn_reply(frame.stream_id, codec))
                if stdin is not None and kind == "stdin" and frame.flags & spdy.FLAG_FIN:
                    stdin.append((b"", True))
    except spdy.ProtocolError:
        return False
    return True


def _negotiate(offered: list[str]) -> str | None:
    """The first protocol the client offers that is served (upstream's handshake), "" if it
    offers none; None when it offers only unknown ones."""
    names = [name.strip() for value in offered for name in value.split(",") if name.strip()]
    if not names:
        return ""
    return next((name for name in names if name in PROTOCOLS), None)


def _messages(protocol: str, options: connect.ExecRequest, stdout: bytes, stderr: bytes,
              status: dict[str, Any]) -> list[bytes]:
    """The session's frames, in order (module docstring, step 1)."""
    first = STDOUT if options.stdout else STDERR if options.stderr else ERROR
    frames = [_frame(protocol, first, b"")]
    for channel, data, wanted in ((STDOUT, stdout, options.stdout), (STDERR, stderr, options.stderr)):
        if wanted:
            frames += [_frame(protocol, channel, data[at:at + CHUNK_BYTES]) for at in range(0, len(data), CHUNK_BYTES)]
    error = _status_bytes(protocol, status)
    if error:
        frames.append(_frame(protocol, ERROR, error))
    return frames


def _status_bytes(protocol: str, status: dict[str, Any]) -> bytes:
    """The error channel's content: the Status as JSON from v4 on; before it, a failure's
    message as text and nothing on success."""
    if protocol in (V5, V4):
        return json.dumps(status, separators=(",", ":")).encode()
    return b"" if status.get("status") == "Success" else str(status.get("message", "")).encode()


def _frame(protocol: str, channel: int, data: bytes) -> bytes:
    if protocol == BASE64:
        return websocket.encode_frame(websocket.TEXT, str(channel).encode() + base64.b64encode(data))
    return websocket.encode_frame(websocket.BINARY, bytes([channel]) + data)


def _session(connection: Upgraded, frames: list[bytes], pause_s: float) -> None:
    """After ``pause_s`` (transport time: :data:`V5_STREAMS_PAUSE_S`), send the frames and
    the close, then drain the client until it closes (bounded)."""
    if pause_s > 0:
        time.sleep(pause_s)
    connection.write(b"".join(frames) + websocket.close_frame())
    _drain_frames(connection, websocket.FrameParser())


def _drain_frames(connection: Upgraded, parser: websocket.FrameParser) -> None:
    """Drain the client's WebSocket frames (:func:`_drain`): pings answered, until its close."""

    def handle(data: bytes) -> bool:
        try:
            for opcode, payload in parser.feed(data):
                if opcode == websocket.CLOSE:
                    return False
                if opcode == websocket.PING:
                    connection.write(websocket.encode_frame(websocket.PONG, payload))
        except websocket.ProtocolError:
            return False
        return True

    _drain(connection, handle)


def _drain(connection: Upgraded, handle: Callable[[bytes], bool]) -> None:
    """Hand what the client still sends to ``handle`` (False: stop) until it goes away, for
    at most :data:`DRAIN_S` wall seconds and :data:`DRAIN_BYTES` (transport time)."""
    read_bytes, deadline = 0, time.monotonic() + DRAIN_S
    while read_bytes < DRAIN_BYTES and time.monotonic() < deadline:
        data = connection.read(deadline - time.monotonic())
        read_bytes += len(data)
        if not data or not handle(data):
            return


def _plain(code: int, message: str) -> Response:
    """A plain-text answer, as the kubelet and Go's websocket server give."""
    return Response(message + "\n", status=code, content_type="text/plain; charset=utf-8")


# -- exec with stdin ----------------------------------------------------------------------------

#: How long a session with stdin waits for its client's next message (the kubelet's
#: ``streamingConnectionIdleTimeout``, 4 hours); then it ends as if the client had gone.
STDIN_IDLE_S = 4 * 3600.0
#: The largest stdin message taken (clients send up to 1 MiB at a time).
STDIN_MESSAGE_BYTES = 16 * 1024 * 1024
#: v5.channel.k8s.io's channel for closing a stream (its data: the stream's channel, 0 = stdin).
CLOSE_CHANNEL = 255


def _stdin_session(connection: Upgraded, protocol: str, options: connect.ExecRequest, stream: connect.ExecStream,
                   pause_s: float) -> None:
    """A WebSocket exec whose stdin is fed to the command as it arrives (kubelet/execsession.py):
    what the command writes goes out at once, the Status once it is done. A client that goes
    away (or stays silent for :data:`STDIN_IDLE_S`) ends stdin."""
    if pause_s > 0:
        time.sleep(pause_s)
    first = STDOUT if options.stdout else STDERR if options.stderr else ERROR
    connection.write(_frame(protocol, first, b""))
    if _send_chunk(connection, protocol, options, stream.start()):
        return _end(connection)
    parser = websocket.FrameParser(STDIN_MESSAGE_BYTES)
    while True:
        data = connection.read(STDIN_IDLE_S)
        try:
            messages = list(parser.feed(data)) if data else [(websocket.CLOSE, b"")]
        except websocket.ProtocolError:
            messages = [(websocket.CLOSE, b"")]
        for opcode, payload in messages:
            if opcode == websocket.CLOSE:
                stream.close()  # the client went away: stdin ends, nobody reads the rest
                connection.write(websocket.close_frame())
                return
            if opcode == websocket.PING:
                connection.write(websocket.encode_frame(websocket.PONG, payload))
                continue
            chunk = _stdin_message(protocol, payload, stream) if opcode in (websocket.BINARY, websocket.TEXT) else None
            if chunk is not None and _send_chunk(connection, protocol, options, chunk):
                return _end(connection)


def _stdin_message(protocol: str, payload: bytes, stream: connect.ExecStream) -> connect.ExecChunk | None:
    """Feed one client message: stdin data, or v5's close of stdin; anything else is ignored."""
    if not payload:
        return None
    if protocol == BASE64:
        digit = chr(payload[0])
        channel, body = (int(digit) if digit.isdigit() else -1), base64.b64decode(payload[1:])
    else:
        channel, body = payload[0], payload[1:]
    if channel == STDIN:
        return stream.feed(body) if body else None
    if channel == CLOSE_CHANNEL and protocol == V5 and body[:1] == bytes([STDIN]):
        return stream.close()
    return None


def _send_chunk(connection: Upgraded, protocol: str, options: connect.ExecRequest, chunk: connect.ExecChunk) -> bool:
    """Write what a step produced; True when the command is done (its Status went out too)."""
    frames: list[bytes] = []
    for channel, data, wanted in ((STDOUT, chunk.stdout, options.stdout), (STDERR, chunk.stderr, options.stderr)):
        if wanted:
            frames += [_frame(protocol, channel, data[at:at + CHUNK_BYTES]) for at in range(0, len(data), CHUNK_BYTES)]
    if chunk.result is not None:
        error = _status_bytes(protocol, connect.exec_status(chunk.result, options.command, protocol == V5))
        if error:
            frames.append(_frame(protocol, ERROR, error))
    for at in range(0, len(frames), 64):
        connection.write(b"".join(frames[at:at + 64]))
    return chunk.result is not None


def _end(connection: Upgraded) -> None:
    """The close frame, then what the client still sends is drained (bounded, as after any exec)."""
    connection.write(websocket.close_frame())
    _drain_frames(connection, websocket.FrameParser(STDIN_MESSAGE_BYTES))


def _spdy_stdin_session(connection: Upgraded, wanted: set[str], options: connect.ExecRequest,
                        stream: connect.ExecStream, protocol: str) -> None:
    """SPDY with stdin: once the streams are open, stdin's data frames are fed as they come and
    its FIN ends stdin; output goes out on its streams at once, the Status and FINs at the end."""
    codec, parser = spdy.HeaderCodec(), spdy.FrameParser(STDIN_MESSAGE_BYTES)
    streams: dict[str, int] = {}
    pending: list[tuple[bytes, bool]] = []
    deadline = time.monotonic() + STREAMS_WAIT_S
    while not wanted <= set(streams):
        data = connection.read(deadline - time.monotonic()) if time.monotonic() < deadline else b""
        if not data or not _spdy_frames(connection, codec, parser, data, streams, pending):
            stream.close()
            return
    done = _spdy_send(connection, streams, options, stream.start(), protocol)
    while not done:
        for body, fin in pending:
            if body and not done:
                done = _spdy_send(connection, streams, options, stream.feed(body), protocol)
            if fin and not done:
                done = _spdy_send(connection, streams, options, stream.close(), protocol)
        pending = []
        if done:
            break
        data = connection.read(STDIN_IDLE_S)
        if not data or not _spdy_frames(connection, codec, parser, data, streams, pending):
            stream.close()
            return
    _drain(connection, lambda data: _spdy_frames(connection, codec, parser, data, streams))


def _spdy_send(connection: Upgraded, streams: dict[str, int], options: connect.ExecRequest,
               chunk: connect.ExecChunk, protocol: str) -> bool:
    """Write a step's output on its streams; at the end the Status and every stream's FIN."""
    frames: list[bytes] = []
    for name, data in (("stdout", chunk.stdout), ("stderr", chunk.stderr)):
        stream_id = streams.get(name)
        if stream_id is not None and getattr(options, name):
            frames += [spdy.encode_data(stream_id, data[at:at + spdy.DATA_CHUNK_BYTES])
                       for at in range(0, len(data), spdy.DATA_CHUNK_BYTES)]
    if chunk.result is not None:
        status = _status_bytes(protocol, connect.exec_status(chunk.result, options.command, translated=False))
        if status and "error" in streams:
            frames.append(spdy.encode_data(streams["error"], status))
        for name, stream_id in sorted(streams.items(), key=lambda item: item[1]):
            if name != "stdin":
                frames.append(spdy.encode_data(stream_id, b"", spdy.FLAG_FIN))
    for at in range(0, len(frames), 64):
        connection.write(b"".join(frames[at:at + 64]))
    return chunk.result is not None
