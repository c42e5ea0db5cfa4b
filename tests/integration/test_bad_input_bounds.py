"""Bad input and resource bombs: answered with upstream's 4xx Status, never a 500, and bounded.

Each test sends one raw HTTP request and checks the answer and that a refused write left
the store as it was. The bounds and their upstream counterparts:

- JSON nested past ``MAX_NESTING_DEPTH`` (100; upstream's encoding/json stops at 10,000)
  is a syntax error worded as Go's: ``invalid character '[' exceeded max depth``; YAML
  past it is go-yaml's ``yaml: exceeded max depth of N``; a patch whose result nests
  too deep is upstream's 422 on ``patch``.
- A lone UTF-16 surrogate escape decodes to U+FFFD, as Go's decoder does.
- A binary-suffixed quantity past int64 is capped at 2^63-1 as ``ParseQuantity`` does;
  a huge decimal exponent costs nothing.
- YAML alias expansion: go-yaml's "excessive aliasing" rule (400), and an expansion
  past the body limit is 413.
- A JSON patch's copies may add at most 3 MiB (upstream's JSONPatchMaxCopyBytes): 422.
- Values echoed in field errors are cut after ``MAX_SHOWN_VALUE_BYTES``, and containers
  print as Go's ``%#v``, never as a Python repr.
"""

from __future__ import annotations

import http.client
import json
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster

CM = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
JSON = "application/json"
YAML = "application/yaml"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"

#: 336 bytes: the CVE-2019-11253 body (each line nine aliases of the one before).
LAUGHS = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: lol
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
"""


def request(cluster: Cluster, method: str, path: str, body: bytes | None = None,
            content_type: str = JSON, accept: str = JSON) -> tuple[int, bytes]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": content_type, "Accept": accept})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def status_of(code: int, raw: bytes) -> dict[str, Any]:
    """The Status answer, checked to be one with a matching code."""
    answer = json.loads(raw)
    assert (answer.get("kind"), answer.get("status"), answer.get("code")) == ("Status", "Failure", code), answer
    return answer


def snapshot(cluster: Cluster) -> tuple[int, str]:
    store = cluster.store
    with store.lock:
        objects = {f"{g}/{r}": store.list((g, r))[0] for g, r in store.resources()}
        return store.resource_version, json.dumps(objects, sort_keys=True)


def configmap(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- nesting depth -------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [101, 1_000, 100_000])
def test_json_nested_too_deep_is_a_400_syntax_error(fakekube: Cluster, depth: int) -> None:
    before = snapshot(fakekube)
    body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":%s}' % nested(depth)
    code, raw = request(fakekube, "POST", CM, body.encode())
    answer = status_of(400, raw)
    assert answer["reason"] == "BadRequest"
    assert ("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; "
            "json parse error: invalid character '[' exceeded max depth (") in answer["message"]
    assert snapshot(fakekube) == before


def test_json_at_the_depth_limit_is_served_everywhere(fakekube: Cluster) -> None:
    """An object as deep as allowed survives every path that walks it recursively."""
    body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":%s}' % nested(98)
    assert request(fakekube, "POST", CM, body.encode())[0] == 201
    for accept in (JSON, YAML, "application/json;as=Table;v=v1;g=meta.k8s.io"):
        assert request(fakekube, "GET", f"{CM}/deep", accept=accept)[0] == 200
        assert request(fakekube, "GET", CM, accept=accept)[0] == 200
    assert request(fakekube, "PATCH", f"{CM}/deep", b'{"data":{"a":"b"}}', MERGE)[0] == 200
    assert request(fakekube, "PATCH", f"{CM}/deep", b'{"data":{"a":"c"}}', STRATEGIC)[0] == 200
    assert request(fakekube, "PATCH", f"{CM}/deep", b'[{"op":"add","path":"/data/b","value":"x"}]', JSON_PATCH)[0] == 200
    assert request(fakekube, "PUT", f"{CM}/deep", body.encode())[0] == 200
    assert request(fakekube, "DELETE", f"{CM}/deep")[0] == 200
    assert fakekube.internal_errors == []


@pytest.mark.parametrize("patch_type", [MERGE, STRATEGIC, JSON_PATCH])
@pytest.mark.parametrize("validation", ["Strict", "Ignore"])
def test_a_patch_body_nested_too_deep_is_a_400(fakekube: Cluster, patch_type: str, validation: str) -> None:
    fakekube.create(configmap("cm", data={"k": "v"}))
    before = snapshot(fakekube)
    body = ('[{"op":"add","path":"/x","value":%s}]' if patch_type == JSON_PATCH else '{"x":%s}') % nested(1_000)
    code, raw = request(fakekube, "PATCH", f"{CM}/cm?fieldValidation={validation}", body.encode(), patch_type)
    assert status_of(400, raw)["reason"] == "BadRequest"
    assert snapshot(fakekube) == before


def test_a_json_patch_that_nests_the_object_too_deep_is_a_422_on_patch(fakekube: Cluster) -> None:
    """Each value is shallow enough, but added under one another they nest past the limit;
    upstream decodes the patched JSON and answers 422 ``patch: Invalid value``."""
    fakekube.create(configmap("cm", data={"k": "v"}))
    before = snapshot(fakekube)
    ops = [{"op": "add", "path": "/x", "value": json.loads(nested(60))}]
    ops.append({"op": "add", "path": "/x/" + "/".join(["0"] * 59) + "/-", "value": json.loads(nested(60))})
    code, raw = request(fakekube, "PATCH", f"{CM}/cm", json.dumps(ops).encode(), JSON_PATCH)
    answer = status_of(422, raw)
    assert answer["reason"] == "Invalid"
    assert "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth" in answer["message"]
    assert answer["details"]["causes"][0]["field"] == "patch"
    assert snapshot(fakekube) == before


def test_a_json_patch_nesting_past_the_encoders_recursion_is_a_422_too(fakekube: Cluster) -> None:
    """Twenty values added each under the last nest about 2,000 levels: past what Python's
    own JSON encoder can walk, still upstream's 422 (it was a 500 RecursionError)."""
    fakekube.create(configmap("cm", data={"k": "v"}))
    before = snapshot(fakekube)
    ops, path = [{"op": "add", "path": "/x", "value": json.loads(nested(98))}], "/x"
    for _ in range(20):
        path += "/0" * 97
        ops.append({"op": "add", "path": path + "/-", "value": json.loads(nested(98))})
        path += "/0"
    code, raw = request(fakekube, "PATCH", f"{CM}/cm", json.dumps(ops).encode(), JSON_PATCH)
    answer = status_of(422, raw)
    assert "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth" in answer["message"]
    assert snapshot(fakekube) == before


@pytest.mark.parametrize("style", ["flow", "block"])
def test_yaml_nested_too_deep_is_a_400(fakekube: Cluster, style: str) -> None:
    before = snapshot(fakekube)
    if style == "flow":
        deep = b"x: " + nested(1_000).encode() + b"\n"
    else:
        deep = b"x:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 300))
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n" + deep
    code, raw = request(fakekube, "POST", CM, body, YAML)
    answer = status_of(400, raw)
    assert "exceeded max depth of 100" in answer["message"], answer
    assert answer["message"].startswith("the object provided is unrecognized (must be of type ConfigMap): yaml: ")
    assert snapshot(fakekube) == before


# --- strings and quantities ----------------------------------------------------------------------


def test_a_lone_surrogate_escape_decodes_to_the_replacement_character(fakekube: Cluster) -> None:
    """Go's decoder turns an invalid UTF-16 escape into U+FFFD; so the object is stored
    and served, not a 500 when it is encoded."""
    body = (b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},'
            b'"data":{"a":"\\ud800x","b":"\\udfff\\ud800","c":"\\ud83d\\ude00"}}')
    code, raw = request(fakekube, "POST", CM, body)
    assert code == 201, raw
    assert json.loads(raw)["data"] == {"a": "\ufffdx", "b": "\ufffd\ufffd", "c": "\U0001F600"}
    code, raw = request(fakekube, "GET", f"{CM}/s", accept=YAML)
    assert code == 200
    patch = b'{"data":{"b":"\\udc00"}}'
    code, raw = request(fakekube, "PATCH", f"{CM}/s", patch, MERGE)
    assert (code, json.loads(raw)["data"]["b"]) == (200, "\ufffd")
    assert fakekube.internal_errors == []


def test_a_quantity_past_int64_is_capped_not_a_500(fakekube: Cluster) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"},
           "spec": {"containers": [{"name": "c", "image": "nginx",
                                    "resources": {"limits": {"cpu": "9223372036854775807Ei", "memory": "1e999999999"},
                                                  "requests": {"cpu": "1Ei", "memory": "1e999999999"}}}]}}
    started = time.monotonic()
    code, raw = request(fakekube, "POST", PODS, json.dumps(pod).encode())
    assert code == 201, raw
    assert time.monotonic() - started < 5
    assert fakekube.internal_errors == []


# --- expansion bombs ------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "?dryRun=All"])
def test_a_yaml_billion_laughs_is_refused_as_excessive_aliasing(fakekube: Cluster, query: str) -> None:
    before = snapshot(fakekube)
    started = time.monotonic()
    code, raw = request(fakekube, "POST", CM + query, LAUGHS, YAML)
    answer = status_of(400, raw)
    assert answer["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): yaml: document contains excessive aliasing (")
    assert time.monotonic() - started < 5 and len(raw) < 1_000
    assert snapshot(fakekube) == before


def test_yaml_aliases_that_expand_past_the_body_limit_are_a_413(fakekube: Cluster) -> None:
    """Few aliases (go-yaml's ratio rule lets them through) of a big string: the JSON
    they expand to would be 100 MiB."""
    before = snapshot(fakekube)
    body = (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: &a " + b"x" * (1024 * 1024)
            + b"\nx: [" + b",".join([b"*a"] * 100) + b"]\n")
    code, raw = request(fakekube, "POST", CM, body, YAML)
    answer = status_of(413, raw)
    assert answer == {**answer, "reason": "RequestEntityTooLarge", "message": "Request entity too large: limit is 3145728"}
    assert snapshot(fakekube) == before


def test_a_recursive_yaml_anchor_is_refused(fakekube: Cluster) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\nx: &a [1, *a]\n"
    code, raw = request(fakekube, "POST", CM, body, YAML)
    assert "yaml: anchor 'a' value contains itself" in status_of(400, raw)["message"]


def test_json_patch_copies_are_bounded_like_upstream(fakekube: Cluster) -> None:
    """A 1 KiB patch of self-copies would double a value 15 times (to 6 MiB); upstream's
    json-patch stops at 3 MiB of copied bytes with a bare 422, and so do we."""
    fakekube.create(configmap("cm", data={"k": "v"}))
    before = snapshot(fakekube)
    ops = [{"op": "add", "path": "/x", "value": ["y" * 200]}]
    ops += [{"op": "copy", "from": "/x", "path": "/x/-"} for _ in range(15)]
    body = json.dumps(ops, separators=(",", ":")).encode()
    assert len(body) < 1_200
    started = time.monotonic()
    code, raw = request(fakekube, "PATCH", f"{CM}/cm", body, JSON_PATCH)
    answer = status_of(422, raw)
    assert (answer["reason"], answer["message"]) == ("Invalid", "the server rejected our request due to an error in our request")
    assert time.monotonic() - started < 5
    assert snapshot(fakekube) == before


# --- what error messages echo ---------------------------------------------------------------------


def test_an_echoed_patched_object_is_cut_short(fakekube: Cluster) -> None:
    """``patch: Invalid value: "<patched object>"`` for a 900 KiB object stays small."""
    fakekube.create(configmap("cm", data={"big": "z" * (900 * 1024)}))
    code, raw = request(fakekube, "PATCH", f"{CM}/cm", b'[{"op":"add","path":"/data/n","value":[1]}]', JSON_PATCH)
    answer = status_of(422, raw)
    assert len(raw) < 64 * 1024
    cause = answer["details"]["causes"][0]
    assert cause["field"] == "patch"
    assert "json: cannot unmarshal array into Go struct field ConfigMap.data of type string" in cause["message"]
    assert "bytes in all, truncated" in cause["message"]


@pytest.mark.parametrize("version,shown", [
    # the reference (1.36) answers exactly this: json.Marshal of the decoded value
    ("1.36", '{"a":2,"b":[true,null,"s",{"c":1.5}]}'),
    # ControllerRevision.data is a RawExtension, shown as the JSON it holds in 1.33 too (as the
    # emulated 1.33 reference answers; docs/api.md notes the unverified real-1.33 rendering)
    ("1.33", '{"a":2,"b":[true,null,"s",{"c":1.5}]}'),
])
def test_field_errors_print_containers_as_the_release_does(version: str, shown: str) -> None:
    """A structured value in a field error is the release's rendering of the decoded JSON, never a Python repr."""
    with Cluster(kubernetes_version=version) as cluster:
        cluster.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"},
                        "revision": 1, "data": {"a": 1}})
        patch = b'{"data":{"a":2,"b":[true,null,"s",{"c":1.5}]}}'
        code, raw = request(cluster, "PATCH", "/apis/apps/v1/namespaces/default/controllerrevisions/r", patch, MERGE)
    message = status_of(422, raw)["message"]
    assert message.endswith(f"data: Invalid value: {shown}: field is immutable"), message
