"""The apiserver's lean request view reads a WSGI environ exactly as werkzeug's Request does.

The view replaced werkzeug's ``Request`` on every REST request for speed; these cases are
the parts of a request where a hand-written reader could drift: percent-encoded and UTF-8
paths, repeated, blank and undecodable query parameters, header spelling, and
``Content-Length`` with chunked or malformed values.
"""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from fakekube.api.http.request import RequestView


def _environ(path: str = "/api/v1/namespaces", query: str = "", **headers: str) -> dict:
    env = EnvironBuilder(path=path, method="post", headers=list(headers.items())).get_environ()
    env["QUERY_STRING"] = query
    return env


CASES = [
    _environ(),
    _environ("/api/v1/namespaces/caf%C3%A9/configmaps"),
    _environ("//api//v1/"),
    _environ("/api/v1/pods", "labelSelector=a%3Db&labelSelector=c&watch=&limit"),
    _environ("/api/v1/pods", "name=%ZZ&x=%FF%FE&plus=a+b"),
    _environ("/api/v1/pods", "fieldManager=caf\u00c3\u00a9"),  # UTF-8 bytes as the server's latin-1
    _environ(**{"Content-Type": "application/json; charset=utf-8", "Content-Length": "12",
                "User-Agent": "kubectl/v1.33.0", "Impersonate-Extra-Scopes": "view"}),
    _environ(**{"Content-Length": "12", "Transfer-Encoding": "gzip, chunked"}),
    _environ(**{"Content-Length": "-3"}),
    _environ(**{"Content-Length": "+3"}),
    _environ(**{"Content-Length": " 7 "}),
]


@pytest.mark.parametrize("environ", CASES)
def test_the_view_reads_what_werkzeug_reads(environ: dict) -> None:
    ours, theirs = RequestView(dict(environ)), Request(dict(environ))
    assert ours.method == theirs.method
    assert ours.path == theirs.path
    assert ours.full_path == theirs.full_path
    assert list(ours.args.lists()) == list(theirs.args.lists())
    assert ours.content_length == theirs.content_length
    assert list(ours.headers.items()) == list(theirs.headers.items())
    for name in ("Content-Type", "content-length", "User-Agent", "Accept", "Impersonate-Extra-Scopes"):
        assert ours.headers.get(name) == theirs.headers.get(name)
        assert ours.headers.get(name, "") == theirs.headers.get(name, "")
