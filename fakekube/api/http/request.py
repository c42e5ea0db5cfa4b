"""A lean view of a WSGI request: the handful of things the apiserver reads from one.

werkzeug's ``Request`` sets up a dozen attributes and descriptors per request and looks
every header up through its generic ``Headers`` machinery — about a tenth of a whole
create. The REST handlers read only the method, the path, a few headers, the query and
the body's length, so this view reads them straight from the environ, with werkzeug's
exact rules (path decoding, header names, query parsing, ``Content-Length``), and only
when asked. The control API and the benchmarks' reference apps keep werkzeug's.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator, overload
from urllib.parse import parse_qsl

import werkzeug.urls  # noqa: F401  (registers the "werkzeug.url_quote" codec error handler)
from werkzeug.datastructures import EnvironHeaders, ImmutableMultiDict
from werkzeug.sansio.utils import get_content_length

#: The two headers CGI keeps without the ``HTTP_`` prefix.
_UNPREFIXED = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})
_NO_ARGS: ImmutableMultiDict[str, str] = ImmutableMultiDict()
#: ``content_length`` not read yet (a read length is never negative).
_UNREAD = -1


@lru_cache(maxsize=128)  # header names are the code's own literals: a handful
def environ_key(header: str) -> str:
    """Where a header lives in a WSGI environ: ``User-Agent`` → ``HTTP_USER_AGENT``."""
    key = header.upper().replace("-", "_")
    return key if key in _UNPREFIXED else "HTTP_" + key


class RequestHeaders:
    """Header lookups against the environ (case-insensitive names, as werkzeug's)."""

    __slots__ = ("environ",)

    def __init__(self, environ: dict) -> None:
        self.environ = environ

    @overload
    def get(self, name: str) -> str | None: ...

    @overload
    def get(self, name: str, default: str) -> str: ...

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.environ.get(environ_key(name), default)

    def items(self) -> Iterator[tuple[str, str]]:
        """Every header as ``(Title-Case-Name, value)``, in werkzeug's order and spelling."""
        return iter(EnvironHeaders(self.environ).items())


class RequestView:
    """The request as the REST handlers see it; each part is computed from the environ."""

    __slots__ = ("environ", "method", "path", "headers", "_args", "_query", "_content_length")

    def __init__(self, environ: dict) -> None:
        self.environ = environ
        self.method: str = environ.get("REQUEST_METHOD", "GET").upper()
        # As werkzeug: PATH_INFO arrives latin-1 decoded; re-read as UTF-8, one leading slash.
        self.path = "/" + (environ.get("PATH_INFO") or "").encode("latin1").decode(errors="replace").lstrip("/")
        self.headers = RequestHeaders(environ)
        self._args: ImmutableMultiDict[str, str] | None = None
        self._query: dict[str, str] | None = None
        self._content_length: int | None = _UNREAD

    @property
    def query_string(self) -> str:
        return environ_query(self.environ)

    @property
    def full_path(self) -> str:
        return f"{self.path}?{self.query_string}"

    @property
    def args(self) -> ImmutableMultiDict[str, str]:
        """The query's parameters, repeated keys kept (werkzeug's parse: blank values kept,
        undecodable bytes left percent-encoded)."""
        if self._args is None:
            query = self.query_string
            self._args = (ImmutableMultiDict(parse_qsl(query, keep_blank_values=True, errors="werkzeug.url_quote"))
                          if query else _NO_ARGS)
        return self._args

    @property
    def query(self) -> dict[str, str]:
        """Each parameter's first value (as upstream's parameter codec reads a single-valued
        option), parsed once: the authorizer and the handlers read this same dict, so they
        can never disagree about what the request asks for. Not to be edited."""
        if self._query is None:
            self._query = dict(self.args.items())
        return self._query

    @property
    def content_length(self) -> int | None:
        """``Content-Length`` as werkzeug reads it: None when absent or chunked, 0 when invalid."""
        if self._content_length == _UNREAD:
            self._content_length = get_content_length(self.environ.get("CONTENT_LENGTH"),
                                                      self.environ.get("HTTP_TRANSFER_ENCODING"))
        return self._content_length


def environ_query(environ: dict) -> str:
    """The raw query string, as werkzeug decodes it (latin-1 bytes read as UTF-8)."""
    return environ.get("QUERY_STRING", "").encode("latin1").decode()
