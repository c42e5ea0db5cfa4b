"""``/openapi/v3`` over HTTP as kube-apiserver answers it: the index (plain text, as the
aggregator writes it without a Content-Type), a group-version nobody serves (a bare 404)
and a stale hash (a bare 301 to the current one)."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

from fakekube import Cluster


def get(cluster: Cluster, path: str) -> tuple[int, bytes, dict[str, str]]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def test_the_index_is_plain_text(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, "/openapi/v3")
    assert (code, headers["Content-Type"]) == (200, "text/plain; charset=utf-8")
    assert b'"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=' in data.replace(b" ", b"")


def test_an_unknown_group_version_is_a_bare_404(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, "/openapi/v3/apis/nope.example.com/v1")
    assert (code, data, "Content-Type" in headers) == (404, b"", False)


def test_a_stale_hash_redirects_with_no_body(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, "/openapi/v3/apis/apps/v1?hash=0000")
    assert (code, data, headers["Content-Type"]) == (301, b"", "application/json")
    assert headers["Location"].startswith("/openapi/v3/apis/apps/v1?hash=")
    assert headers["ETag"] == '"' + headers["Location"].rsplit("=", 1)[1] + '"'
