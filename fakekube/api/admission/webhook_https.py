"""A webhook call's transport: HTTPS with upstream's trust rules and Go's error wording.

Kept apart from :mod:`fakekube.api.admission.webhook_call` so that ``http.client`` and ``ssl``
(a fifth of a cold import) load when a cluster first calls a webhook, not at import.
"""

from __future__ import annotations

import base64
import errno
import http.client
import json
import socket
import ssl
import time
from typing import Any

from fakekube.api.admission.webhook_call import MAX_RESPONSE_BYTES, CONTENT_TYPE, CallFailed, Endpoint, join_host
from fakekube.api.wire import decoding

Obj = dict[str, Any]
_CALL = "failed to call webhook: "
#: client-go's words for a response whose body could not be read to the end.
_BODY_FAILED = "unexpected error when reading response body. Please retry. Original error: "
_DEADLINE_EXCEEDED = "context deadline exceeded"


def post(endpoint: Endpoint, ca_bundle: str | None, body: Obj, timeout_s: int) -> Obj:
    """POST an AdmissionReview and return the decoded answer (or raise :class:`CallFailed`).

    ``timeout_s`` bounds the whole call — connect, TLS handshake, send, read — as upstream's
    request context does: each socket operation waits at most what is left of it, so a
    webhook that drips its answer a byte at a time is cut off at the deadline.
    """
    shown = endpoint.shown_url(timeout_s)
    deadline = Deadline(timeout_s)
    payload = json.dumps(body, separators=(",", ":")).encode()
    connection = _Connection(endpoint, _tls_context(ca_bundle), deadline)
    try:
        try:
            connection.request("POST", f"{endpoint.path}?timeout={timeout_s}s", payload,
                               {"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE})
            response = connection.getresponse()
        except Exception as exc:  # no answer yet: worded as Go's net/http (a *url.Error)
            why = _DEADLINE_EXCEEDED if deadline.passed(exc) else go_transport_error(exc, endpoint)
            raise CallFailed(f'{_CALL}Post "{shown}": {why}') from None
        try:
            raw = response.read(MAX_RESPONSE_BYTES + 1)
            if response.length and len(raw) <= MAX_RESPONSE_BYTES:  # closed before Content-Length
                raise http.client.IncompleteRead(raw, response.length)
        except Exception as exc:  # the head came, the body did not: client-go's words
            why = _DEADLINE_EXCEEDED if deadline.passed(exc) else _body_error(exc, endpoint)
            raise CallFailed(f"{_CALL}{_BODY_FAILED}{why}") from None
    finally:
        connection.close()
    if len(raw) > MAX_RESPONSE_BYTES:
        raise CallFailed(f"{_CALL}response body larger than {MAX_RESPONSE_BYTES} bytes")
    if not 200 <= response.status < 300:
        raise CallFailed(f"{_CALL}{_http_error(response.status, raw, response.getheader('Content-Type'))}")
    return _decoded(raw, response.status, response.getheader("Content-Type") or CONTENT_TYPE)


def _decoded(raw: bytes, status: int, content_type: str) -> Obj:
    """The answer as client-go's ``Into`` decodes it: empty, malformed (nested past the body
    bound included) or not an object, it is a failed call in the serializer's words."""
    if not raw:
        raise CallFailed(f"{_CALL}0-length response with status code: {status} and content type: {content_type}")
    try:
        answer = decoding.parse_json(raw)
    except decoding.SyntaxFailure as exc:
        raise CallFailed(f"{_CALL}couldn't get version/kind; json parse error: {exc}") from None
    if answer is None:  # Go decodes null into an empty review
        return {}
    problem = decoding.interpret_problem(answer)
    if problem is not None:
        raise CallFailed(f"{_CALL}couldn't get version/kind; json parse error: {problem}")
    assert isinstance(answer, dict)
    return answer


class Deadline:
    """The wall-clock instant a call must be over by: transport time (DESIGN.md, "Two
    kinds of time"), the one place fakekube reads the wall clock for a webhook."""

    __slots__ = ("at_s",)

    def __init__(self, timeout_s: float) -> None:
        self.at_s = time.monotonic() + timeout_s

    def left_s(self) -> float:
        """What is left; a TimeoutError once nothing is (a socket timeout of 0 would not wait)."""
        left_s = self.at_s - time.monotonic()
        if left_s <= 0:
            raise TimeoutError(_DEADLINE_EXCEEDED)
        return left_s

    def passed(self, exc: BaseException | None = None) -> bool:
        """Is the deadline why ``exc`` happened?"""
        return isinstance(exc, TimeoutError) or time.monotonic() >= self.at_s


class _DeadlineSocket(ssl.SSLSocket):
    """A TLS socket whose every read and write waits at most until the call's deadline.

    A socket timeout alone starts again with each read, so an answer dripped a byte a
    second would never time out; http.client reads through ``recv_into`` and writes
    through ``sendall`` (which sends with ``send``)."""

    deadline: Deadline | None = None

    def recv_into(self, *args: Any, **kwargs: Any) -> int:
        self._left()
        return super().recv_into(*args, **kwargs)

    def recv(self, *args: Any, **kwargs: Any) -> bytes:
        self._left()
        return super().recv(*args, **kwargs)

    def send(self, *args: Any, **kwargs: Any) -> int:
        self._left()
        return super().send(*args, **kwargs)

    def _left(self) -> None:
        if self.deadline is not None:
            self.settimeout(self.deadline.left_s())


class _Connection(http.client.HTTPSConnection):
    """HTTPS to ``connect_host:connect_port`` while verifying (and sending SNI and Host for)
    the name the apiserver would dial, every step within ``deadline``."""

    def __init__(self, endpoint: Endpoint, context: ssl.SSLContext, deadline: Deadline) -> None:
        super().__init__(endpoint.server_name, endpoint.port, context=context)
        self._address = (endpoint.connect_host, endpoint.connect_port)
        self._tls = context
        self._deadline = deadline

    def connect(self) -> None:
        # The handshake is one call: CPython bounds all of it by the timeout it starts with.
        sock = socket.create_connection(self._address, self._deadline.left_s())
        try:
            sock.settimeout(self._deadline.left_s())
            self._tls.sslsocket_class = _DeadlineSocket
            tls = self._tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise
        assert isinstance(tls, _DeadlineSocket)
        tls.deadline = self._deadline
        self.sock = tls


def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The caBundle (base64 of PEM in the API object) as the only trust root, or the system's."""
    if not ca_bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(ca_bundle).decode("ascii")
        return ssl.create_default_context(cadata=pem)
    except (ValueError, ssl.SSLError, UnicodeDecodeError):
        raise CallFailed("failed to call webhook: x509: malformed certificate in caBundle") from None


def go_transport_error(exc: BaseException, endpoint: Endpoint) -> str:
    """Go's wording of a dial or TLS failure (what users grep for)."""
    address = join_host(endpoint.connect_host, endpoint.connect_port)
    if isinstance(exc, ssl.SSLCertVerificationError):
        if exc.verify_code == 62 or "match" in str(exc.verify_message or ""):  # hostname mismatch
            return f"tls: failed to verify certificate: x509: certificate is not valid for {endpoint.server_name}"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(exc, ConnectionRefusedError) or getattr(exc, "errno", None) == errno.ECONNREFUSED:
        return f"dial tcp {address}: connect: connection refused"
    if isinstance(exc, socket.gaierror):
        return f"dial tcp: lookup {endpoint.connect_host}: no such host"
    if isinstance(exc, (ConnectionResetError, http.client.RemoteDisconnected)):
        return "EOF"
    return str(exc) or type(exc).__name__


def _body_error(exc: BaseException, endpoint: Endpoint) -> str:
    """Go's error for a body cut short: the connection ended before ``Content-Length``."""
    if isinstance(exc, http.client.IncompleteRead):
        return "unexpected EOF"
    return go_transport_error(exc, endpoint)


def _http_error(code: int, raw: bytes, content_type: str | None) -> str:
    """client-go's error for a non-2xx answer that is not a Status (``newUnstructuredResponseError``):
    the body is shown only when it is text (no Content-Type, or ``text/*``), else "unknown"."""
    if code == 404:
        return "the server could not find the requested resource"
    text = raw[:MAX_UNSTRUCTURED_TEXT_BYTES].decode("utf-8", "replace").strip() if _is_text(content_type) else "unknown"
    return f'an error on the server ("{text}") has prevented the request from succeeding'


#: client-go's ``maxUnstructuredResponseTextBytes``: how much of such a body an error shows.
MAX_UNSTRUCTURED_TEXT_BYTES = 2048


def _is_text(content_type: str | None) -> bool:
    """client-go's ``isTextResponse``."""
    if not content_type:
        return True
    media = content_type.split(";")[0].strip().lower()
    return media.startswith("text/")
