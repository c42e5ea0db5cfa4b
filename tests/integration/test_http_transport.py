"""The HTTP transport under hostile framing and slow clients (issue 12: 1, 3, 8, 11).

Raw sockets against a started cluster (or a bare BackgroundServer with short deadlines):
a body is read whole before anything is dispatched, chunked framing is strict and bounded,
heads Go refuses get Go's plain-text answers, slow clients are cut off on the wall clock,
and the connection cap refuses with a Status. Wall-clock waits are transport time here;
each is a bounded safety net, and the deadlines under test are a fraction of a second.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Callable, Iterable, Iterator

import pytest

from fakekube import Cluster
from fakekube.api.http import BackgroundServer

CM = "/api/v1/namespaces/default/configmaps"
LIMIT = 3 * 1024 * 1024
WAIT_S = 5.0
GO_431 = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
          b"Connection: close\r\n\r\n431 Request Header Fields Too Large")
GO_400 = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def connect(url: str) -> socket.socket:
    return socket.create_connection(address(url), timeout=WAIT_S)


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (bounded by the socket's timeout)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    return data


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One response with a Content-Length (all our error answers have one)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed mid-head: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        body += chunk
    return int(lines[0].split()[1]), headers, body[:length]


def status_of(body: bytes) -> dict[str, Any]:
    status = json.loads(body)
    assert status["kind"] == "Status" and status["status"] == "Failure"
    return status


def post_head(length: int | None = None, chunked: bool = False, path: str = CM) -> bytes:
    framing = "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {length}\r\n"
    return (f"POST {path} HTTP/1.1\r\nHost: fakekube\r\nContent-Type: application/json\r\n{framing}\r\n").encode()


def configmap_json(name: str, padding: int = 0) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).encode() + b" " * padding


def store_state(cluster: Cluster) -> tuple[int, str]:
    store = cluster.store
    with store.lock:
        objects = {f"{g}/{r}": store.list((g, r))[0] for g, r in store.resources()}
        return store.resource_version, json.dumps(objects, sort_keys=True, default=str)


def alive(cluster: Cluster) -> None:
    with connect(cluster.url) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: fakekube\r\n\r\n")
        code, _, _ = read_response(sock)
        assert code == 200


# --- 1. chunked request bodies ---------------------------------------------------------------

def test_a_huge_chunk_size_after_big_bodies_is_refused_and_the_server_lives(fakekube: Cluster) -> None:
    for name in ("big-1", "big-2"):
        with connect(fakekube.url) as sock:
            body = configmap_json(name, padding=LIMIT - 200)
            sock.sendall(post_head(len(body)) + body)
            code, _, _ = read_response(sock)
            assert code < 500
    before = store_state(fakekube)
    with connect(fakekube.url) as sock:
        sock.sendall(post_head(chunked=True) + b"FFFFFFFFFFFF\r\n" + configmap_json("bomb"))
        code, headers, body = read_response(sock)
        assert (code, status_of(body)["reason"]) == (413, "RequestEntityTooLarge")
        assert status_of(body)["message"] == f"Request entity too large: limit is {LIMIT}"
        assert headers.get("connection") == "close"
    with connect(fakekube.url) as sock:  # the same, and the client goes away at once
        sock.sendall(post_head(chunked=True) + b"FFFFFFFFFFFF\r\n" + configmap_json("bomb"))
    alive(fakekube)
    assert store_state(fakekube) == before


@pytest.mark.parametrize(("chunks", "message"), [
    (b"zz\r\n", "invalid byte in chunk length"),
    (b"-1\r\n", "invalid byte in chunk length"),
    (b"0x5\r\n", "invalid byte in chunk length"),
    (b"\r\n", "empty hex number for chunk length"),
    (b"1" * 17 + b"\r\n", "http chunk length too large"),
    (b"2\r\n{}XX0\r\n\r\n", "malformed chunked encoding"),  # no CRLF after the data
    (b"2\n{}\r\n0\r\n\r\n", "chunked line ends with bare LF"),
    (b"2\r\n{}\r\n0\r\nbad trailer\r\n\r\n", "malformed MIME header line"),
    (b"A" * 5000 + b"\r\n", "header line too long"),
])
def test_malformed_chunked_framing_is_a_400_status(fakekube: Cluster, chunks: bytes, message: str) -> None:
    before = store_state(fakekube)
    with connect(fakekube.url) as sock:
        sock.sendall(post_head(chunked=True) + chunks)
        code, headers, body = read_response(sock)
        assert (code, status_of(body)["reason"], status_of(body)["message"]) == (400, "BadRequest", message)
        assert headers.get("connection") == "close"
    assert store_state(fakekube) == before


def test_a_chunked_body_past_the_limit_in_small_chunks_is_a_413(fakekube: Cluster) -> None:
    before = store_state(fakekube)
    chunk = b"%x\r\n%s\r\n" % (64 * 1024, b" " * 64 * 1024)
    with connect(fakekube.url) as sock:
        sock.sendall(post_head(chunked=True) + chunk * (LIMIT // (64 * 1024) + 1) + b"0\r\n\r\n")
        code, _, body = read_response(sock)
        assert (code, status_of(body)["reason"]) == (413, "RequestEntityTooLarge")
    assert store_state(fakekube) == before


def test_a_valid_chunked_body_with_extensions_and_trailers_is_served(fakekube: Cluster) -> None:
    body = configmap_json("chunky")
    chunks = b"5;ext=1\r\n" + body[:5] + b"\r\n" + b"%X\r\n" % len(body[5:]) + body[5:] + b"\r\n0\r\nX-Trailer: 1\r\n\r\n"
    with connect(fakekube.url) as sock:
        sock.sendall(post_head(chunked=True) + chunks)
        code, _, answer = read_response(sock)
        assert code == 201, answer
        sock.sendall(b"GET " + CM.encode() + b"/chunky HTTP/1.1\r\nHost: fakekube\r\n\r\n")  # kept alive
        assert read_response(sock)[0] == 200


# --- 3. a body that never fully arrives ----------------------------------------------------

def test_a_truncated_body_dispatches_nothing(fakekube: Cluster) -> None:
    before = store_state(fakekube)
    body = configmap_json("truncated")
    assert len(body) < 100
    with connect(fakekube.url) as sock:
        sock.sendall(post_head(100) + body)  # Content-Length 100, fewer bytes, then gone
    time.sleep(0.3)  # the server sees EOF at once; give a wrong dispatch the time to show
    alive(fakekube)
    assert store_state(fakekube) == before


def test_bad_content_lengths_are_answered_as_go_does(fakekube: Cluster) -> None:
    for value in ("abc", "-1", "1, 2"):
        with connect(fakekube.url) as sock:
            sock.sendall(f"POST {CM} HTTP/1.1\r\nHost: x\r\nContent-Length: {value}\r\n\r\n{{}}".encode())
            assert read_all(sock) == GO_400


def test_expect_100_continue_gets_a_continue_then_the_answer(fakekube: Cluster) -> None:
    body = configmap_json("expected")
    with connect(fakekube.url) as sock:
        sock.sendall(post_head(len(body)).replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n"))
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        assert read_response(sock)[0] == 201


# --- 11. heads Go refuses before the handler ---------------------------------------------

def send_while_reading(url: str, data: bytes) -> bytes:
    """Send a large request while the server may answer early; return what it answered."""
    with connect(url) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return read_all(sock)


def test_oversized_headers_and_uris_are_a_plain_431(fakekube: Cluster) -> None:
    big = "x" * ((1 << 20) + 4096)
    assert send_while_reading(fakekube.url, f"GET /api?{big} HTTP/1.1\r\nHost: x\r\n\r\n".encode()) == GO_431
    assert send_while_reading(fakekube.url, f"GET /api HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n".encode()) == GO_431
    many = "".join(f"X-H{i}: {'y' * 1000}\r\n" for i in range(1100))
    assert send_while_reading(fakekube.url, f"GET /api HTTP/1.1\r\nHost: x\r\n{many}\r\n".encode()) == GO_431
    alive(fakekube)


@pytest.mark.parametrize(("request_bytes", "answer"), [
    (b"GARBAGE\r\n\r\n", GO_400),
    (b"GET /api\r\n\r\n", GO_400),
    (b"GET /api HTTP/x\r\nHost: x\r\n\r\n", GO_400),
    (b"G(T /api HTTP/1.1\r\nHost: x\r\n\r\n", GO_400),
    (b"GET api HTTP/1.1\r\nHost: x\r\n\r\n", GO_400),
    (b"GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", GO_400),
    (b"GET /api HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", GO_400),
    (b"GET /api HTTP/1.1\r\n\r\n", b"HTTP/1.1 400 Bad Request: missing required Host header\r\nContent-Type: text/plain; "
     b"charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request: missing required Host header"),
    (b"GET /api HTTP/2.0\r\nHost: x\r\n\r\n", b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\n"
     b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n505 HTTP Version Not Supported: "
     b"unsupported protocol version"),
    (b"POST /api HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", b"HTTP/1.1 501 Not Implemented\r\n"
     b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nUnsupported transfer encoding"),
])
def test_malformed_heads_are_answered_as_go_does(fakekube: Cluster, request_bytes: bytes, answer: bytes) -> None:
    with connect(fakekube.url) as sock:
        sock.sendall(request_bytes)
        assert read_all(sock) == answer


def test_an_http10_request_without_host_is_served_and_closed(fakekube: Cluster) -> None:
    with connect(fakekube.url) as sock:
        sock.sendall(b"GET /version HTTP/1.0\r\n\r\n")
        assert read_all(sock).startswith(b"HTTP/1.1 200 OK\r\n")


# --- 8. slow clients, and the connection cap ----------------------------------------------

class Recorder:
    """A tiny WSGI app that notes every call; ``/stream`` waits until the client has gone."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.disconnected: list[Callable[[], bool]] = []

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        body = environ["wsgi.input"].read()
        self.calls.append((environ["PATH_INFO"], body))
        if environ["PATH_INFO"] == "/stream":
            self.disconnected.append(environ["fakekube.disconnected"])
            start_response("200 OK", [("Content-Type", "text/plain")])
            return self._until_gone(environ["fakekube.disconnected"])
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    @staticmethod
    def _until_gone(disconnected: Callable[[], bool]) -> Iterator[bytes]:
        yield b"hello"
        deadline = time.monotonic() + WAIT_S
        while not disconnected() and time.monotonic() < deadline:
            time.sleep(0.01)
            yield b""


@pytest.fixture
def server() -> Iterator[tuple[BackgroundServer, Recorder]]:
    app = Recorder()
    server = BackgroundServer(app, header_timeout_s=0.4, body_timeout_s=0.4, idle_timeout_s=0.6, max_connections=4)
    server.start()
    yield server, app
    server.stop()


def trickle(sock: socket.socket, data: bytes, every_s: float) -> float:
    """Send a byte at a time until the server closes; the seconds it took."""
    start = time.monotonic()
    try:
        for byte in data:
            sock.sendall(bytes([byte]))
            time.sleep(every_s)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return time.monotonic() - start


def test_a_client_trickling_its_head_is_cut_off_at_the_header_deadline(server: tuple[BackgroundServer, Recorder]) -> None:
    background, app = server
    with connect(background.url) as sock:
        taken = trickle(sock, b"GET /slow HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: 1\r\n" * 100 + b"\r\n", every_s=0.05)
        assert read_all(sock) == b""  # Go answers nothing on a read timeout: it closes
    assert taken < 2.0 and app.calls == []


def test_a_client_trickling_its_body_gets_a_504_and_nothing_is_dispatched(server: tuple[BackgroundServer, Recorder]) -> None:
    background, app = server
    with connect(background.url) as sock:
        sock.sendall(b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        trickle(sock, b"x" * 12, every_s=0.05)
        code, headers, body = read_response(sock)
        assert (code, status_of(body)["reason"]) == (504, "Timeout")
        assert status_of(body)["message"] == "Timeout: request did not complete within the allotted timeout"
        assert headers.get("connection") == "close"
    assert app.calls == []


def test_an_idle_keep_alive_connection_is_closed(server: tuple[BackgroundServer, Recorder]) -> None:
    background, app = server
    with connect(background.url) as sock:
        sock.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(sock)[0] == 200
        start = time.monotonic()
        assert read_all(sock) == b""
        assert time.monotonic() - start < 2.0


def test_connections_past_the_cap_get_a_429_status_and_threads_stay_bounded(
        server: tuple[BackgroundServer, Recorder]) -> None:
    background, app = server
    threads_before = threading.active_count()
    held = [connect(background.url) for _ in range(4)]
    try:
        time.sleep(0.1)
        for _ in range(20):
            with connect(background.url) as sock:
                sock.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
                code, headers, body = read_response(sock)
                assert (code, status_of(body)["reason"]) == (429, "TooManyRequests")
                assert headers.get("retry-after") == "1" and headers.get("connection") == "close"
        assert threading.active_count() <= threads_before + 4 + 1  # 4 connections and one lingerer
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:  # the held ones end; a new client is served again
        with connect(background.url) as sock:
            sock.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
            if read_response(sock)[0] == 200:
                return
        time.sleep(0.02)
    pytest.fail("the server never took a connection again")


def test_slow_clients_do_not_hold_the_server(server: tuple[BackgroundServer, Recorder]) -> None:
    background, app = server
    slow = [connect(background.url) for _ in range(4)]
    try:
        for sock in slow:
            sock.sendall(b"GET /slow HTTP/1.1\r\n")  # and nothing more
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:  # the header deadline frees their slots
            with connect(background.url) as sock:
                sock.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
                if read_response(sock)[0] == 200:
                    break
            time.sleep(0.05)
        else:
            pytest.fail("slow clients kept every slot")
    finally:
        for sock in slow:
            sock.close()


# --- environ["fakekube.disconnected"] -----------------------------------------------------

def test_disconnected_turns_true_once_the_client_closes(server: tuple[BackgroundServer, Recorder]) -> None:
    background, app = server
    sock = connect(background.url)
    sock.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200 OK")
    (disconnected,) = app.disconnected
    assert disconnected() is False
    sock.close()
    deadline = time.monotonic() + WAIT_S
    while not disconnected() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert disconnected() is True
