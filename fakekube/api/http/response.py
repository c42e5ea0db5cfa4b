"""A lean finished response for the JSON answers on the hot paths.

werkzeug's ``Response`` builds a ``Headers`` object, re-derives the status line and
walks its own machinery on every call — about a fifth of a whole create request. The
apiserver's JSON answers are finished bytes with a few headers, so they need none of
that. Everything else (streams, text, redirects) still uses werkzeug's ``Response``.
"""

from __future__ import annotations

from typing import Callable, Iterable

from werkzeug.http import HTTP_STATUS_CODES


def status_line(code: int) -> str:
    """``404 Not Found``: Go's phrases are title case, as clients show them."""
    return f"{code} {HTTP_STATUS_CODES.get(code, f'status code {code}')}"


class ResponseHeaders:
    """The few header operations the app uses, over a plain list (order kept, repeats allowed)."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self.items = items

    def add(self, name: str, value: str) -> None:
        self.items.append((name, value))

    def __setitem__(self, name: str, value: str) -> None:
        lowered = name.lower()
        self.items = [(k, v) for k, v in self.items if k.lower() != lowered] + [(name, value)]

    def setdefault(self, name: str, value: str) -> None:
        lowered = name.lower()
        if not any(k.lower() == lowered for k, _ in self.items):
            self.items.append((name, value))

    def get(self, name: str, default: str | None = None) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.items if k.lower() == lowered), default)


class JsonResponse:
    """Finished bytes, a status code and headers, served as one WSGI response.

    The body may be given as parts (a list's head, its joined items, its tail): they are
    handed to the server as they are, which writes them without joining them first.
    """

    def __init__(self, body: bytes | list[bytes], status: int = 200, content_type: str = "application/json",
                 headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.parts = [body] if isinstance(body, bytes) else body
        self.headers = ResponseHeaders([("Content-Type", content_type), *(headers or {}).items()])

    @property
    def body(self) -> bytes:
        return b"".join(self.parts)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        length = sum(len(part) for part in self.parts)
        start_response(status_line(self.status_code), self.headers.items + [("Content-Length", str(length))])
        return self.parts
