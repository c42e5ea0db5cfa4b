"""Every read path serves a stored version's one encoding: a LIST is the GETs of its items,
joined; a write changes what every path serves next; a dry run never serves the stored bytes.

The server keeps each stored version's JSON and each listed collection's joined items
(fakekube/api/verbs/encoding.py); these tests hold the bytes clients see to that.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster

pytestmark = pytest.mark.fakekube(nodes=1)

NS = "enc"
PODS = f"/api/v1/namespaces/{NS}/pods"
CMS = f"/api/v1/namespaces/{NS}/configmaps"
POD_TYPE_META = b'{"apiVersion":"v1","kind":"Pod",'
CM_TYPE_META = b'{"apiVersion":"v1","kind":"ConfigMap",'


def call(cluster: Cluster, method: str, path: str, body: Any = None,
         content_type: str = "application/json") -> tuple[int, bytes]:
    url = urlsplit(cluster.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def pod(index: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{index:03d}", "namespace": NS,
                         "labels": {"app": "web", "parity": "even" if index % 2 == 0 else "odd"}},
            "spec": {"schedulerName": "manual", "containers": [{"name": "c", "image": "nginx:1.27"}]}}


@pytest.fixture
def pods(fakekube: Cluster) -> Cluster:
    fakekube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for index in range(20):
        fakekube.create(pod(index))
    return fakekube


def item_bytes(cluster: Cluster, name: str) -> bytes:
    """A pod's GET bytes as a list item shows them: without apiVersion and kind."""
    status, body = call(cluster, "GET", f"{PODS}/{name}")
    assert status == 200 and body.startswith(POD_TYPE_META) and body.endswith(b"\n")
    return b"{" + body[len(POD_TYPE_META):-1]


def assert_list_is_joined_gets(cluster: Cluster, query: str = "") -> dict[str, Any]:
    """The LIST's bytes are its head, then its items' GET bytes joined by commas, then ``]}``."""
    status, body = call(cluster, "GET", f"{PODS}{query}")
    assert status == 200
    listing = json.loads(body)
    head = json.dumps({k: v for k, v in listing.items() if k != "items"}, separators=(",", ":")).encode()
    items = [item_bytes(cluster, item["metadata"]["name"]) for item in listing["items"]]
    assert body == head[:-1] + b',"items":[' + b",".join(items) + b"]}\n"
    return listing


def test_a_list_is_the_gets_of_its_items_joined(pods: Cluster) -> None:
    first = assert_list_is_joined_gets(pods)
    again = assert_list_is_joined_gets(pods)  # the second LIST is served from the joined bytes
    assert [i["metadata"]["name"] for i in again["items"]] == [f"p{i:03d}" for i in range(20)]
    assert again == first


@pytest.mark.parametrize("query", ["?labelSelector=parity%3Deven", "?fieldSelector=metadata.name%3Dp003",
                                   "?limit=7", "?labelSelector=app%3Dweb&limit=12"])
def test_selected_and_paged_lists_are_the_gets_of_their_items(pods: Cluster, query: str) -> None:
    listing = assert_list_is_joined_gets(pods, query)
    assert listing["items"]
    token = listing["metadata"].get("continue")
    if token:  # the next page too
        rest = assert_list_is_joined_gets(pods, f"{query}&continue={token}")
        names = [i["metadata"]["name"] for i in listing["items"] + rest["items"]]
        assert names == sorted(set(names))


def test_a_write_after_a_read_changes_what_every_read_serves(pods: Cluster) -> None:
    before_list = assert_list_is_joined_gets(pods)
    before_get = item_bytes(pods, "p005")
    status, _ = call(pods, "PATCH", f"{PODS}/p005", {"metadata": {"labels": {"touched": "yes"}}},
                     "application/merge-patch+json")
    assert status == 200
    after_get = item_bytes(pods, "p005")
    assert after_get != before_get and b'"touched":"yes"' in after_get
    after_list = assert_list_is_joined_gets(pods)
    assert after_list["items"][5]["metadata"]["labels"]["touched"] == "yes"
    assert after_list["items"][4] == before_list["items"][4]
    status, _ = call(pods, "DELETE", f"{PODS}/p006")
    assert status == 200
    names = [i["metadata"]["name"] for i in assert_list_is_joined_gets(pods)["items"]]
    assert "p006" not in names and len(names) == 19


def test_a_watch_event_carries_the_get_bytes_of_its_version(pods: Cluster) -> None:
    _, listed = call(pods, "GET", f"{PODS}?limit=1")
    rv = json.loads(listed)["metadata"]["resourceVersion"]
    call(pods, "PATCH", f"{PODS}/p001", {"metadata": {"labels": {"seen": "1"}}}, "application/merge-patch+json")
    url = urlsplit(pods.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("GET", f"{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=5")
        line = conn.getresponse().readline()
    finally:
        conn.close()
    _, got = call(pods, "GET", f"{PODS}/p001")
    assert line == b'{"type":"MODIFIED","object":' + got[:-1] + b"}\n"


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_a_dry_run_write_answers_its_own_result_not_the_stored_bytes(fakekube: Cluster, method: str) -> None:
    fakekube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": NS},
                     "data": {"k": "stored"}})
    status, stored = call(fakekube, "GET", f"{CMS}/cm")  # the stored version's bytes are now cached
    assert status == 200 and b'"stored"' in stored
    body: dict[str, Any] = {"data": {"k": "dry"}}
    content_type = "application/merge-patch+json"
    if method == "PUT":
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": NS},
                "data": {"k": "dry"}}
        content_type = "application/json"
    status, answer = call(fakekube, method, f"{CMS}/cm?dryRun=All", body, content_type)
    assert status == 200
    assert json.loads(answer)["data"] == {"k": "dry"}
    assert answer.startswith(CM_TYPE_META)
    _, after = call(fakekube, "GET", f"{CMS}/cm")
    assert after == stored


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def table_call(cluster: Cluster, path: str) -> bytes:
    url = urlsplit(cluster.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Accept": TABLE})
        response = conn.getresponse()
        assert response.status == 200
        return response.read()
    finally:
        conn.close()


def fresh_table(cluster: Cluster, query: str = "", include_object: str = "Metadata") -> bytes:
    """The Table as encoded afresh from the stored pods (no cache)."""
    from fakekube.api import table
    from fakekube.api.verbs.listing import ListOptions
    rt = cluster.api.registry.lookup("", "v1", "pods")
    assert rt is not None
    listing = cluster.api.list(rt, NS, ListOptions.from_query(dict(p.split("=", 1) for p in query.split("&") if p)))
    body = table.to_table(rt, listing["items"], cluster.now, include_object, listing["metadata"])
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def test_a_listed_table_is_its_rows_as_encoded_afresh_and_follows_time_and_writes(pods: Cluster) -> None:
    first = table_call(pods, PODS)
    assert first == table_call(pods, PODS) == fresh_table(pods)
    assert table_call(pods, f"{PODS}?labelSelector=parity%3Dodd") == fresh_table(pods, "labelSelector=parity=odd")
    pods.advance(3600)  # the AGE cells move with cluster time
    later = table_call(pods, PODS)
    assert later != first and later == fresh_table(pods) and b'"60m"' in later
    status, _ = call(pods, "PATCH", f"{PODS}/p002", {"metadata": {"labels": {"touched": "yes"}}},
                     "application/merge-patch+json")
    assert status == 200
    written = table_call(pods, PODS)
    assert written != later and written == fresh_table(pods) and b'"touched":"yes"' in written
    whole = json.loads(table_call(pods, f"{PODS}?includeObject=Object"))
    assert whole["rows"][0]["object"]["kind"] == "Pod" and whole["rows"][0]["object"]["spec"]
