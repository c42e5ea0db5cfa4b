"""Protobuf request bodies decode to the dict the same object's JSON body would be.

The bodies are built with a tiny encoder written here (varints and length-delimited
fields, as gogo-protobuf writes them), so the tests do not depend on the decoder's own
reading of the wire format.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.api.wire import protobuf
from fakekube.api.wire.protobuf import decoder
from fakekube.clock import format_go_duration

# --- a minimal encoder -----------------------------------------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative ints go out as 10-byte two's complement, as Go writes them
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def vint(number: int, value: int) -> bytes:
    """A varint field (int32, int64, bool)."""
    return varint(number << 3) + varint(value)


def ld(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field (string, bytes, message, map entry, packed)."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number: int, key: str, value: bytes | str) -> bytes:
    """One ``map<string, V>`` entry."""
    return ld(number, ld(1, key) + ld(2, value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """``k8s\\x00`` + runtime.Unknown{typeMeta, raw, contentEncoding, contentType}."""
    return b"k8s\x00" + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, "") + ld(4, "")


def object_meta(name: str, **labels: str) -> bytes:
    """ObjectMeta as gogo writes it: every non-pointer string, even empty, and a zero Time."""
    fields = ld(1, name) + ld(2, "") + ld(3, "") + ld(4, "") + ld(5, "") + ld(6, "") + vint(7, 0) + ld(8, b"")
    return fields + b"".join(entry(11, k, v) for k, v in labels.items())


# --- decoding ---------------------------------------------------------------------------------


def test_configmap_with_data_and_binary_data() -> None:
    raw = ld(1, object_meta("settings", app="web")) + entry(2, "mode", "fast") + entry(2, "level", "3") \
        + entry(3, "blob", b"\x00\x01") + vint(4, 0)
    assert protobuf.decode_body(envelope("v1", "ConfigMap", raw)) == {
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "settings", "creationTimestamp": None, "labels": {"app": "web"}},
        "immutable": False,  # a pointer: kept although false
        "data": {"mode": "fast", "level": "3"},
        "binaryData": {"blob": "AAE="},
    }


def pod_template() -> bytes:
    port = ld(1, "") + vint(2, 0) + vint(3, 80) + ld(4, "TCP") + ld(5, "")
    container = ld(1, "nginx") + ld(2, "nginx:1.27") + ld(6, port) + ld(8, b"")
    return ld(1, object_meta("", app="web")) + ld(2, ld(2, container))


def test_deployment_keeps_an_explicit_zero_pointer_and_drops_empty_strings() -> None:
    spec = vint(1, 0) + ld(2, entry(1, "app", "web")) + ld(3, pod_template()) + ld(4, ld(1, "")) + vint(5, 0) \
        + vint(7, 0)
    body = protobuf.decode_body(envelope("apps/v1", "Deployment", ld(1, object_meta("web")) + ld(2, spec)))
    assert body["spec"]["replicas"] == 0
    assert body["metadata"] == {"name": "web", "creationTimestamp": None}
    assert "minReadySeconds" not in body["spec"] and "paused" not in body["spec"]
    assert body["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert body["spec"]["strategy"] == {}
    container = body["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                         "resources": {}}
    assert body["status"] == {}  # a struct, never omitted by Go's encoder


def test_time_micro_time_duration_and_negative_ints() -> None:
    meta = object_meta("ev")[:-2] + ld(8, vint(1, 1735689600)) + ld(9, vint(1, 1735693200) + vint(2, 5)) \
        + vint(10, -30)
    raw = ld(1, meta) + ld(2, vint(1, 1735689600) + vint(2, 123_456_789)) + ld(7, "Scheduled")
    body = protobuf.decode_body(envelope("events.k8s.io/v1", "Event", raw))
    assert body["metadata"]["creationTimestamp"] == "2025-01-01T00:00:00Z"
    assert body["metadata"]["deletionTimestamp"] == "2025-01-01T01:00:00Z"
    assert body["metadata"]["deletionGracePeriodSeconds"] == -30
    assert body["eventTime"] == "2025-01-01T00:00:00.123456Z"
    assert body["reason"] == "Scheduled" and body["deprecatedFirstTimestamp"] is None


@pytest.mark.parametrize("ns, text", [(0, "0s"), (3_600_000_000_000, "1h0m0s"), (90_000_000_000, "1m30s"),
                                      (1_500_000_000, "1.5s"), (300_000_000, "300ms"), (1_500, "1.5µs"),
                                      (-2_000_000_000, "-2s")])
def test_durations_print_as_go_does(ns: int, text: str) -> None:
    assert format_go_duration(ns) == text


def test_quantity_and_int_or_string() -> None:
    resources = entry(2, "cpu", ld(1, "250m")) + entry(2, "memory", ld(1, "64Mi"))  # requests: Quantity values
    container = ld(1, "c") + ld(2, "busybox") + ld(8, resources)
    probe_port = vint(1, 1) + ld(3, "http")  # IntOrString{type: String, strVal: "http"}
    container += ld(11, ld(1, ld(2, ld(1, "/healthz") + ld(2, probe_port))))  # Probe{ProbeHandler{httpGet}}
    body = protobuf.decode_body(envelope("v1", "Pod", ld(1, object_meta("p")) + ld(2, ld(2, container))))
    got = body["spec"]["containers"][0]
    assert got["resources"] == {"requests": {"cpu": "250m", "memory": "64Mi"}}
    assert got["readinessProbe"] == {"httpGet": {"path": "/healthz", "port": "http"}}  # inline ProbeHandler

    port = ld(1, "web") + vint(3, 80) + ld(4, vint(1, 0) + vint(2, 8080))
    service = protobuf.decode_body(envelope("v1", "Service", ld(1, object_meta("s")) + ld(2, ld(1, port))))
    assert service["spec"]["ports"] == [{"name": "web", "port": 80, "targetPort": 8080}]


def test_raw_extension_packed_ints_and_list_wrappers() -> None:
    revision = ld(1, object_meta("rev")) + ld(2, ld(1, b'{"spec":{"x":1}}')) + vint(3, 7)
    body = protobuf.decode_body(envelope("apps/v1", "ControllerRevision", revision))
    assert body["data"] == {"spec": {"x": 1}} and body["revision"] == 7

    # map<string, ExtraValue>: ExtraValue is a Go []string, so its JSON is the bare array.
    spec = ld(3, "alice") + entry(5, "scopes", ld(1, "a") + ld(1, "b"))
    review = protobuf.decode_body(envelope("authorization.k8s.io/v1", "SubjectAccessReview",
                                           ld(1, object_meta("")) + ld(2, spec)))
    assert review["spec"]["user"] == "alice" and review["spec"]["extra"] == {"scopes": ["a", "b"]}

    token = protobuf.decode_body(envelope("authentication.k8s.io/v1", "TokenRequest",
                                          ld(1, object_meta("")) + ld(2, ld(1, "vault") + vint(4, 7200))))
    assert token["spec"] == {"audiences": ["vault"], "expirationSeconds": 7200}  # nil boundObjectRef: absent
    assert token["status"] == {"token": "", "expirationTimestamp": None}  # non-omitempty zeros, as Go writes


def test_packed_repeated_scalars() -> None:
    # PodSecurityContext.supplementalGroups (field 4, repeated int64) sent packed.
    security = ld(4, varint(1000) + varint(2000))
    body = protobuf.decode_body(envelope("v1", "Pod", ld(1, object_meta("p")) + ld(2, ld(14, security))))
    assert body["spec"]["securityContext"] == {"supplementalGroups": [1000, 2000]}


def test_missing_typemeta_takes_the_resource_defaults() -> None:
    body = protobuf.decode_body(b"k8s\x00" + ld(2, ld(1, object_meta("x"))), "v1", "ConfigMap")
    assert (body["apiVersion"], body["kind"]) == ("v1", "ConfigMap")


@pytest.mark.parametrize("raw, message", [
    (b"", "empty data"),
    (b"k8s\x00", "empty body"),
    (b"{}", "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"),
    (b"k8s\x00\n\x0f\n\x02v1", "unexpected EOF"),
    (b"k8s\x00\x0b", "proto: illegal wireType 3"),
    (b"k8s\x00" + b"\xff" * 11, "proto: integer overflow"),
    (envelope("v1", "Widget", b""), 'no kind "Widget" is registered for version "v1"'),
    (envelope("v1", "ObjectMeta", b""), 'no kind "ObjectMeta" is registered'),
    (envelope("v1", "ConfigMap", vint(1, 5)), "proto: wrong wireType = 0 for field metadata"),
    (envelope("apps/v1", "ControllerRevision", ld(2, ld(1, b"{nope"))), "embedded object is not JSON"),
])
def test_malformed_bodies_raise_value_errors(raw: bytes, message: str) -> None:
    with pytest.raises(ValueError) as info:
        protobuf.decode_body(raw)
    assert isinstance(info.value, protobuf.ProtobufError)
    assert message in str(info.value)


def test_nesting_is_capped() -> None:
    # The served types do not recurse, so the cap is defensive: check it at its edge.
    leaf = "k8s.io.api.core.v1.LocalObjectReference"
    assert decoder.decode_message(leaf, ld(1, "x"), depth=protobuf.MAX_DEPTH) == {"name": "x"}
    with pytest.raises(protobuf.ProtobufError, match="nesting exceeds 100"):
        decoder.decode_message(leaf, ld(1, "x"), depth=protobuf.MAX_DEPTH + 1)


# --- over HTTP ----------------------------------------------------------------------------------


def post(cluster: Cluster, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/vnd.kubernetes.protobuf",
                                                "Accept": "application/vnd.kubernetes.protobuf,application/json"})
        response = connection.getresponse()
        assert response.getheader("Content-Type", "").startswith("application/json")
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_protobuf_create_over_http_answers_json(fakekube: Cluster) -> None:
    spec = vint(1, 0) + ld(2, entry(1, "app", "web")) + ld(3, pod_template())
    code, body = post(fakekube, "/apis/apps/v1/namespaces/default/deployments",
                      envelope("apps/v1", "Deployment", ld(1, object_meta("web")) + ld(2, spec)))
    assert code == 201, body
    assert body["spec"]["replicas"] == 0
    assert fakekube.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 0


def test_malformed_protobuf_over_http_is_a_400_and_changes_nothing(fakekube: Cluster) -> None:
    before = fakekube.store.resource_version
    code, body = post(fakekube, "/api/v1/namespaces/default/configmaps", b"k8s\x00\n\x0f\n\x02v1")
    assert (code, body["kind"], body["reason"]) == (400, "Status", "BadRequest")
    assert body["message"].startswith("the object provided is unrecognized (must be of type ConfigMap): unexpected EOF")
    assert fakekube.store.resource_version == before
