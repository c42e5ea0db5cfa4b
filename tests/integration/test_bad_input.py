"""Bad input: every malformed or invalid request gets upstream's status, and changes nothing.

Each case is one raw HTTP request (method, path, headers and body bytes exactly as
written) against a cluster seeded with a few objects and a Terminating namespace. For
each we check that the answer is a ``Status`` with ``status: Failure``, upstream's HTTP
code and ``reason``, a fragment of upstream's message where it is well known, the
``details.causes`` fields where upstream sets them — and that the store is byte-for-byte
what it was before: same resourceVersion, same objects.

The cluster is the default release (1.36); field error values render as JSON there (1.34+:
the cases below were checked against a real 1.36 kube-apiserver). The expected values come from Kubernetes 1.33's sources (k8s.io/apiserver v0.33.9
``endpoints/handlers/{create,update,patch,delete,rest,get}.go``, ``registry/rest``,
``storage``; k8s.io/apimachinery v0.33.9 ``api/errors``, ``util/validation``,
``runtime/serializer/json``; go-restful v3.11.0 ``jsr311.go``; the per-type validation in
``pkg/apis/*/validation``) and from real error outputs quoted in GitHub issues. Cases
whose wording could not be confirmed say so next to them.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from fakekube import Cluster
from tests.integration.support import snapshot

# A small history makes a continue token taken during seeding expire before the test runs.
pytestmark = pytest.mark.fakekube(history_limit=5)

CM = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
SERVICES = "/api/v1/namespaces/default/services"
SECRETS = "/api/v1/namespaces/default/secrets"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
STATEFULSETS = "/apis/apps/v1/namespaces/default/statefulsets"
DAEMONSETS = "/apis/apps/v1/namespaces/default/daemonsets"

JSON = "application/json"
YAML = "application/yaml"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PROTOBUF = "application/vnd.kubernetes.protobuf"

MAX_BODY_BYTES = 3 * 1024 * 1024
ANNOTATIONS_LIMIT_B = 256 * 1024

DNS1123_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                     "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
OPTIMISTIC_LOCK = "the object has been modified; please apply your changes to the latest version and try again"
DECODE_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")


def configmap(name: str = "new", **extra: Any) -> dict[str, Any]:
    meta = {"name": name, **extra.pop("metadata", {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **extra}


def pod(spec: dict[str, Any], name: str = "p") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def deployment(spec: dict[str, Any], name: str = "d") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def service(spec: dict[str, Any], name: str = "s") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}


def workload(kind: str, spec: dict[str, Any], name: str = "w") -> dict[str, Any]:
    """An apps/v1 workload selecting TEMPLATE, with ``spec`` added."""
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE, **spec}}


@dataclass(frozen=True)
class Case:
    """One request and what upstream answers to it."""

    method: str
    path: str
    body: bytes | None
    content_type: str | None
    code: int
    reason: str  # "" when upstream sends no reason (a plain Go error)
    message: str = ""  # a fragment of upstream's message
    causes: tuple[tuple[str, str], ...] = ()  # (reason, field) of each details.causes entry


def case(case_id: str, method: str, path: str, body: Any, code: int, reason: str, message: str = "", *,
         content_type: str | None = JSON, causes: tuple[tuple[str, str], ...] = ()) -> Any:
    """A table row. ``body`` is a JSON-able value, text or bytes; ``{uid}``, ``{rv}`` and
    ``{continue}`` in the path, body and message are filled in from the seeded cluster."""
    if body is None or isinstance(body, bytes):
        raw = body
    elif isinstance(body, str):
        raw = body.encode()
    else:
        raw = json.dumps(body).encode()
    return pytest.param(Case(method, path, raw, content_type, code, reason, message, causes), id=case_id)


CASES = [
    # --- bodies that do not decode --------------------------------------------------------
    # rest.go transformDecodeError + json.go Interpret; summary is summarizeData(body, 30).
    case("malformed-json", "POST", CM, '{"kind":', 400, "BadRequest",
         "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; "
         'json parse error: unexpected end of JSON input ({"kind":)'),
    case("empty-body", "POST", CM, b"", 400, "BadRequest",
         "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; "
         "json parse error: unexpected end of JSON input (<empty>)"),
    case("json-array-body", "POST", CM, "[1,2]", 400, "BadRequest",
         "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
         f"error: json: cannot unmarshal array into Go value of type {DECODE_STRUCT} (5b312c325d)"),
    case("json-string-body", "POST", CM, '"hello"', 400, "BadRequest",
         "json parse error: json: cannot unmarshal string into Go value of type struct"),
    # go-yaml's own wording ("yaml: line 1: mapping values are not allowed in this context")
    # is not reproduced exactly: PyYAML words the problem differently after the prefix.
    case("malformed-yaml", "POST", CM, "apiVersion: v1\nkind: ConfigMap: x\n", 400, "BadRequest",
         "the object provided is unrecognized (must be of type ConfigMap): yaml: line 2: ", content_type=YAML),
    # go-yaml's scanner refuses escapes of surrogates and past U+10FFFF (PyYAML builds them).
    case("yaml-surrogate-escape", "POST", CM, 'apiVersion: v1\nkind: ConfigMap\ndata: {a: "x\\ud800"}\n', 400,
         "BadRequest", "the object provided is unrecognized (must be of type ConfigMap): yaml: line 3: found invalid "
         "Unicode character escape code", content_type=YAML),
    case("yaml-escape-past-unicode", "POST", CM, 'apiVersion: v1\nkind: ConfigMap\ndata: {a: "\\U00110000"}\n',
         400, "BadRequest", "yaml: line 3: found invalid Unicode character escape code", content_type=YAML),
    # Protobuf bodies (kubectl >= 1.32): decoded for built-in types. An envelope with no raw
    # object is an empty ConfigMap; broken envelopes are transformDecodeError's 400s.
    case("protobuf-empty-object", "POST", CM, b"k8s\x00\n\x0f\n\x02v1\x12\tConfigMap", 422, "Invalid",
         'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
         content_type=PROTOBUF, causes=(("FieldValueRequired", "metadata.name"),)),
    case("protobuf-no-prefix", "POST", CM, b"\n\x0f\n\x02v1\x12\tConfigMap", 400, "BadRequest",
         "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a "
         "protobuf message, expected prefix [107 56 115 0] (0a0f0a0276311209436f6e6669674d6170)",
         content_type=PROTOBUF),
    case("protobuf-truncated", "POST", CM, b"k8s\x00\n\x0f\n\x02v1", 400, "BadRequest",
         "the object provided is unrecognized (must be of type ConfigMap): unexpected EOF", content_type=PROTOBUF),
    case("protobuf-unknown-kind", "POST", CM, b"k8s\x00\n\x0c\n\x02v1\x12\x06Widget", 400, "BadRequest",
         'Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1"',
         content_type=PROTOBUF),
    case("protobuf-bad-field", "POST", CM, b"k8s\x00\n\x0f\n\x02v1\x12\tConfigMap\x12\x02\x0a\x05", 400,
         "BadRequest", 'ConfigMap in version "v1" cannot be handled as a ConfigMap: unexpected EOF',
         content_type=PROTOBUF),
    case("unknown-content-type", "POST", CM, "<configmap/>", 415, "UnsupportedMediaType",
         "the body of the request was in an unknown format - accepted media types include: ",
         content_type="application/xml"),
    case("oversize-body", "POST", CM, json.dumps(configmap(data={"k": "x" * MAX_BODY_BYTES})), 413,
         "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}"),

    # --- type meta -------------------------------------------------------------------------
    # create.go: a registered but unserved version decodes, then fails AcceptsGroupVersion.
    case("wrong-api-version", "POST", DEPLOYMENTS,
         {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}}, 400, "BadRequest",
         "the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)"),
    # Scheme name/line ("k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:29") not asserted.
    case("unknown-api-version", "POST", CM, configmap() | {"apiVersion": "v2"}, 400, "BadRequest",
         'ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for '
         'version "v2" in scheme'),
    case("wrong-kind-for-url", "POST", CM, configmap() | {"kind": "Secret"}, 400, "BadRequest",
         'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): '
         "unknown conversion"),
    # meta/v1 kinds decode in any version (unversioned: Status) or any known group-version
    # (options, WatchEvent), so an echoed-back Status is a conversion error, in meta's package.
    case("status-body-for-url", "PUT", f"{CM}/x", {"apiVersion": "v1", "kind": "Status", "status": "Failure"}, 400,
         "BadRequest", 'Status in version "v1" cannot be handled as a ConfigMap: converting (v1.Status) to '
         "(core.ConfigMap): unknown conversion"),
    case("status-body-in-any-version", "POST", DEPLOYMENTS, {"apiVersion": "foo/v9", "kind": "Status"}, 400,
         "BadRequest", 'Status in version "v9" cannot be handled as a Deployment: converting (v1.Status) to '
         "(apps.Deployment): unknown conversion"),
    case("options-body-in-a-group-version", "POST", DEPLOYMENTS, {"apiVersion": "apps/v1beta1", "kind": "DeleteOptions"},
         400, "BadRequest", 'DeleteOptions in version "v1beta1" cannot be handled as a Deployment: converting '
         "(v1.DeleteOptions) to (apps.Deployment): unknown conversion"),
    case("watch-event-in-an-unknown-group", "POST", CM, {"apiVersion": "foo/v9", "kind": "WatchEvent"}, 400,
         "BadRequest", 'WatchEvent in version "v9" cannot be handled as a ConfigMap: no kind "WatchEvent" is '
         'registered for version "foo/v9" in scheme'),
    case("metadata-not-an-object", "POST", CM, configmap() | {"metadata": "x"}, 400, "BadRequest",
         'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go '
         "struct field ConfigMap.metadata of type v1.ObjectMeta"),
    case("wrong-field-type", "POST", DEPLOYMENTS,
         deployment({"replicas": "three", "selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE}),
         400, "BadRequest",
         'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go '
         "struct field DeploymentSpec.spec.replicas of type int32"),
    case("wrong-nested-field-type", "POST", PODS, pod({"containers": [{"name": "c", "image": 5}]}), 400,
         "BadRequest", 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go '
         "struct field Container.spec.containers.image of type string"),
    case("namespace-mismatch", "POST", CM, configmap(metadata={"namespace": "kube-system"}), 400, "BadRequest",
         "the namespace of the provided object does not match the namespace sent on the request"),

    # --- names, labels, annotations ---------------------------------------------------------
    case("name-uppercase", "POST", CM, configmap("Bad_Name"), 422, "Invalid",
         f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {DNS1123_SUBDOMAIN}',
         causes=(("FieldValueInvalid", "metadata.name"),)),
    case("name-too-long", "POST", CM, configmap("a" * 254), 422, "Invalid",
         f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters',
         causes=(("FieldValueInvalid", "metadata.name"),)),
    case("name-missing", "POST", CM, configmap(""), 422, "Invalid",
         'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
         causes=(("FieldValueRequired", "metadata.name"),)),
    case("namespace-name-with-dots", "POST", "/api/v1/namespaces",
         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}, 422, "Invalid",
         'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
         causes=(("FieldValueInvalid", "metadata.name"),)),
    # 1.36 takes "1svc" (RelaxedServiceNameValidation: a DNS-1123 label); a dotted name is still refused.
    case("service-name-with-a-dot", "POST", SERVICES, service({"ports": [{"port": 80}]}, "s.vc"), 422,
         "Invalid", 'Service "s.vc" is invalid: metadata.name: Invalid value: "s.vc": must not contain dots',
         causes=(("FieldValueInvalid", "metadata.name"),)),
    case("label-key-invalid", "POST", CM, configmap(metadata={"labels": {"bad key!": "v"}}), 422, "Invalid",
         'metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters',
         causes=(("FieldValueInvalid", "metadata.labels"),)),
    case("label-value-invalid", "POST", CM, configmap(metadata={"labels": {"k": "bad value!"}}), 422, "Invalid",
         'metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of',
         causes=(("FieldValueInvalid", "metadata.labels"),)),
    # k8s.io/kubernetes' ObjectMeta wrapper: a finalizer without a domain must be a standard one.
    case("finalizer-without-domain", "POST", CM, configmap(metadata={"finalizers": ["kubernetes", "hold"]}), 422,
         "Invalid", 'ConfigMap "new" is invalid: metadata.finalizers[1]: Invalid value: "hold": name is neither a '
         "standard finalizer name nor is it fully qualified", causes=(("FieldValueInvalid", "metadata.finalizers[1]"),)),
    case("key-in-data-and-binary-data", "POST", CM, configmap(data={"a": "b"}, binaryData={"a": "eA=="}), 422,
         "Invalid", 'ConfigMap "new" is invalid: data[a]: Invalid value: "a": duplicate of key present in binaryData',
         causes=(("FieldValueInvalid", "data[a]"),)),
    case("annotations-too-large", "POST", CM, configmap(metadata={"annotations": {"k": "x" * ANNOTATIONS_LIMIT_B}}),
         422, "Invalid", 'ConfigMap "new" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes',
         causes=(("FieldValueTooLong", "metadata.annotations"),)),

    # --- required fields and enums -----------------------------------------------------------
    case("pod-without-containers", "POST", PODS, pod({}), 422, "Invalid",
         'Pod "p" is invalid: spec.containers: Required value', causes=(("FieldValueRequired", "spec.containers"),)),
    case("container-without-image", "POST", PODS, pod({"containers": [{"name": "c"}]}), 422, "Invalid",
         'Pod "p" is invalid: spec.containers[0].image: Required value',
         causes=(("FieldValueRequired", "spec.containers[0].image"),)),
    case("pod-restart-policy-invalid", "POST", PODS,
         pod({"restartPolicy": "Sometimes", "containers": [{"name": "c", "image": "i"}]}), 422, "Invalid",
         'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
         causes=(("FieldValueNotSupported", "spec.restartPolicy"),)),
    # Verified against real output: [spec.selector: Required value, spec.template.metadata.labels: ...];
    # values as JSON, as 1.34+ renders them (the reference, 1.36; Go's %#v up to 1.33).
    case("deployment-without-selector", "POST", DEPLOYMENTS, deployment({"template": TEMPLATE}), 422, "Invalid",
         'Deployment.apps "d" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid '
         'value: {"app":"x"}: `selector` does not match template `labels`]',
         causes=(("FieldValueRequired", "spec.selector"), ("FieldValueInvalid", "spec.template.metadata.labels"))),
    case("deployment-selector-mismatch", "POST", DEPLOYMENTS,
         deployment({"selector": {"matchLabels": {"app": "y"}}, "template": TEMPLATE}), 422, "Invalid",
         'spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match '
         "template `labels`", causes=(("FieldValueInvalid", "spec.template.metadata.labels"),)),
    # Internal strategy structs print as JSON from 1.34 (Go's field names: no JSON tags on internal types).
    case("deployment-bad-strategy", "POST", DEPLOYMENTS,
         deployment({"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE, "strategy": {"type": "Sometimes"}}),
         422, "Invalid", 'Deployment.apps "d" is invalid: spec.strategy: Unsupported value: {"Type":"Sometimes",'
         '"RollingUpdate":null}: supported values: "Recreate", "RollingUpdate"',
         causes=(("FieldValueNotSupported", "spec.strategy"),)),
    # A selector LabelSelectorAsSelector refuses: its own errors, then "invalid label selector", no template checks.
    case("deployment-bad-selector-operator", "POST", DEPLOYMENTS,
         deployment({"selector": {"matchLabels": {"app": "x"}, "matchExpressions": [
             {"key": "app", "operator": "Like", "values": ["x"]}]}, "template": TEMPLATE}), 422, "Invalid",
         'spec.selector: Invalid value: {"matchLabels":{"app":"x"},"matchExpressions":[{"key":"app","operator":"Like",'
         '"values":["x"]}]}: invalid label selector',
         causes=(("FieldValueInvalid", "spec.selector.matchExpressions[0].operator"), ("FieldValueInvalid", "spec.selector"))),
    case("statefulset-bad-update-strategy", "POST", STATEFULSETS,
         workload("StatefulSet", {"updateStrategy": {"type": "Sometimes"}}), 422, "Invalid",
         'spec.updateStrategy: Invalid value: {"Type":"Sometimes","RollingUpdate":null}: must be \'RollingUpdate\' or '
         "'OnDelete'", causes=(("FieldValueInvalid", "spec.updateStrategy"),)),
    case("statefulset-bad-claim-template", "POST", STATEFULSETS,
         workload("StatefulSet", {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": []}}]}),
         422, "Invalid", "spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required",
         causes=(("FieldValueRequired", "spec.volumeClaimTemplates[0].spec.accessModes"),
                 ("FieldValueRequired", "spec.volumeClaimTemplates[0].spec.resources[storage]"))),
    case("statefulset-negative-ordinals", "POST", STATEFULSETS,
         workload("StatefulSet", {"ordinals": {"start": -1}}), 422, "Invalid",
         "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
         causes=(("FieldValueInvalid", "spec.ordinals.start"),)),
    case("daemonset-bad-update-strategy", "POST", DAEMONSETS,
         workload("DaemonSet", {"updateStrategy": {"type": "Sometimes"}}), 422, "Invalid",
         'spec.updateStrategy: Unsupported value: {"Type":"Sometimes","RollingUpdate":null}: supported values: '
         '"RollingUpdate", "OnDelete"', causes=(("FieldValueNotSupported", "spec.updateStrategy"),)),
    case("daemonset-zero-max-unavailable", "POST", DAEMONSETS,
         workload("DaemonSet", {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}}),
         422, "Invalid", "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
         causes=(("FieldValueRequired", "spec.updateStrategy.rollingUpdate.maxUnavailable"),)),
    # Without manualSelector the strategy adds the uid to the client's selector, which then must select the
    # generated labels (validateGeneratedSelector) and the template.
    case("job-selector-without-manual-selector", "POST", JOBS,
         {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {
             "selector": {"matchLabels": {"a": "b"}},
             "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]}}}},
         422, "Invalid", '`selector` not auto-generated',
         causes=(("FieldValueInvalid", "spec.selector"), ("FieldValueInvalid", "spec.template.metadata.labels"))),
    case("deployment-negative-replicas", "POST", DEPLOYMENTS,
         deployment({"replicas": -1, "selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE}), 422,
         "Invalid", "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
         causes=(("FieldValueInvalid", "spec.replicas"),)),
    case("service-without-ports", "POST", SERVICES, service({"selector": {"app": "x"}}), 422, "Invalid",
         'Service "s" is invalid: spec.ports: Required value', causes=(("FieldValueRequired", "spec.ports"),)),
    case("service-type-invalid", "POST", SERVICES, service({"type": "Bogus", "ports": [{"port": 80}]}), 422,
         "Invalid", 'spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", '
         '"LoadBalancer", "NodePort"', causes=(("FieldValueNotSupported", "spec.type"),)),

    # --- immutable fields ---------------------------------------------------------------------
    # The diff upstream appends (cmp.Diff of core.PodSpec, Go field names) is not reproduced.
    case("pod-spec-change", "PATCH", f"{PODS}/pod", {"spec": {"restartPolicy": "Never"}}, 422, "Invalid",
         'Pod "pod" is invalid: spec: Forbidden: pod updates may not change fields other than '
         "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`",
         content_type=MERGE, causes=(("FieldValueForbidden", "spec"),)),
    case("service-cluster-ip-change", "PATCH", f"{SERVICES}/svc",
         {"spec": {"clusterIP": "10.96.99.99", "clusterIPs": ["10.96.99.99"]}}, 422, "Invalid",
         'Service "svc" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.99.99"]: may not change '
         "once set", content_type=MERGE, causes=(("FieldValueInvalid", "spec.clusterIPs[0]"),)),
    case("job-selector-change", "PATCH", f"{JOBS}/job", {"spec": {"selector": {"matchLabels": {"x": "y"}}}}, 422,
         "Invalid", 'spec.selector: Invalid value: {"matchLabels":{', content_type=MERGE,
         causes=(("FieldValueInvalid", "spec.template.metadata.labels"), ("FieldValueInvalid", "spec.selector"))),
    case("job-template-change", "PATCH", f"{JOBS}/job",
         {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}}}}, 422, "Invalid",
         'Job.batch "job" is invalid: spec.template: Invalid value: ', content_type=STRATEGIC,
         causes=(("FieldValueInvalid", "spec.template"),)),
    case("deployment-selector-change", "PATCH", f"{DEPLOYMENTS}/web",
         {"spec": {"selector": {"matchLabels": {"app": "other"}}, "template": {"metadata": {"labels": {"app": "other"}}}}},
         422, "Invalid", 'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":'
         '{"app":"other"}}: field is immutable',
         content_type=MERGE, causes=(("FieldValueInvalid", "spec.selector"),)),
    case("immutable-configmap-data", "PATCH", f"{CM}/frozen", {"data": {"k": "changed"}}, 422, "Invalid",
         'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
         content_type=MERGE, causes=(("FieldValueForbidden", "data"),)),
    case("secret-type-change", "PATCH", f"{SECRETS}/sec", {"type": "example.com/custom"}, 422, "Invalid",
         'Secret "sec" is invalid: type: Invalid value: "example.com/custom": field is immutable',
         content_type=MERGE, causes=(("FieldValueInvalid", "type"),)),
    case("put-changes-name", "PUT", f"{CM}/cm", configmap("other"), 400, "BadRequest",
         "the name of the object (other) does not match the name on the URL (cm)"),
    case("put-changes-namespace", "PUT", f"{CM}/cm", configmap("cm", metadata={"namespace": "kube-system"}), 400,
         "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"),

    # --- patches --------------------------------------------------------------------------------
    # go-restful refuses a PATCH whose Content-Type the route does not consume, before the handler.
    case("unknown-patch-type", "PATCH", f"{CM}/cm", {"data": {"k": "x"}}, 415, "UnsupportedMediaType",
         "415: Unsupported Media Type", content_type="application/json"),
    case("protobuf-patch", "PATCH", f"{CM}/cm", b"k8s\x00\n\x0f\n\x02v1\x12\tConfigMap", 415,
         "UnsupportedMediaType", "415: Unsupported Media Type", content_type=PROTOBUF),
    case("json-patch-not-an-array", "PATCH", f"{CM}/cm", {"op": "add", "path": "/data/x", "value": "y"}, 400,
         "BadRequest", "error decoding patch: json: cannot unmarshal object into Go value of type "
         "[]handlers.jsonPatchOp", content_type=JSON_PATCH),
    case("json-patch-test-fails", "PATCH", f"{CM}/cm", [{"op": "test", "path": "/data/k", "value": "nope"}], 422,
         "Invalid", "the server rejected our request due to an error in our request", content_type=JSON_PATCH),
    case("merge-patch-not-an-object", "PATCH", f"{CM}/cm", "[1]", 400, "BadRequest",
         "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
         content_type=MERGE),
    case("merge-patch-malformed", "PATCH", f"{CM}/cm", "{bad", 400, "BadRequest",
         "error decoding patch: invalid character 'b' looking for beginning of object key string",
         content_type=MERGE),
    case("merge-patch-wrong-field-type", "PATCH", f"{CM}/cm", {"data": {"k": 1}}, 422, "Invalid",
         "json: cannot unmarshal number into Go struct field ConfigMap.data of type string", content_type=MERGE,
         causes=(("FieldValueInvalid", "patch"),)),
    # An unknown $patch directive is a plain Go error upstream (mergepatch.ErrBadPatchType):
    # a 500 with no reason. That is upstream's answer, not a crash of ours.
    case("strategic-patch-unknown-directive", "PATCH", f"{CM}/cm", {"$patch": "bogus"}, 500, "",
         "unknown patch type: bogus in map: map[$patch:bogus]", content_type=STRATEGIC),
    case("strategic-patch-bad-retain-keys", "PATCH", f"{CM}/cm", {"metadata": {"$retainKeys": "x"}}, 400,
         "BadRequest", "invalid patch format of retainKeys", content_type=STRATEGIC),
    # A strategic merge patch's result is converted (DefaultUnstructuredConverter), not decoded
    # as JSON: a mistyped value is worded the converter's way (kube-apiserver 1.36).
    case("strategic-patch-map-from-string", "PATCH", f"{CM}/cm", {"metadata": {"labels": "invalid"}}, 422, "Invalid",
         'patch: Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map from string',
         content_type=STRATEGIC, causes=(("FieldValueInvalid", "patch"),)),
    case("strategic-patch-map-from-slice", "PATCH", f"{CM}/cm", {"data": ["x"]}, 422, "Invalid",
         "cannot restore map from slice", content_type=STRATEGIC, causes=(("FieldValueInvalid", "patch"),)),
    case("strategic-patch-int-as-string", "PATCH", f"{CM}/cm", {"data": {"k": 1}}, 422, "Invalid",
         "cannot convert int64 to string", content_type=STRATEGIC, causes=(("FieldValueInvalid", "patch"),)),
    case("strategic-patch-bool-as-string", "PATCH", f"{CM}/cm", {"data": {"k": True}}, 422, "Invalid",
         "unrecognized type: string", content_type=STRATEGIC, causes=(("FieldValueInvalid", "patch"),)),
    case("strategic-patch-list-of-lists", "PATCH", f"{CM}/cm", {"metadata": {"finalizers": [["a"]]}}, 422, "Invalid",
         "unrecognized type: string", content_type=STRATEGIC, causes=(("FieldValueInvalid", "patch"),)),

    # --- conflicts and existence ------------------------------------------------------------------
    case("put-stale-resource-version", "PUT", f"{CM}/cm", configmap("cm", metadata={"resourceVersion": "1"}), 409,
         "Conflict", f'Operation cannot be fulfilled on configmaps "cm": {OPTIMISTIC_LOCK}'),
    case("merge-patch-stale-resource-version", "PATCH", f"{CM}/cm",
         {"metadata": {"resourceVersion": "1"}, "data": {"k": "x"}}, 409, "Conflict",
         f'Operation cannot be fulfilled on configmaps "cm": {OPTIMISTIC_LOCK}', content_type=MERGE),
    case("create-existing", "POST", CM, configmap("cm"), 409, "AlreadyExists", 'configmaps "cm" already exists'),
    # etcd3 store.Create returns a plain error (storage.ErrResourceVersionSetOnCreate): a 500
    # with no reason, as fabric8 users report ("code=500 ... reason=null").
    case("create-with-resource-version", "POST", CM, configmap(metadata={"resourceVersion": "5"}), 500, "",
         "resourceVersion should not be set on objects to be created"),
    case("put-missing-object", "PUT", f"{CM}/ghost", configmap("ghost"), 404, "NotFound",
         'configmaps "ghost" not found'),
    case("delete-missing-object", "DELETE", f"{CM}/ghost", None, 404, "NotFound", 'configmaps "ghost" not found',
         content_type=None),

    # --- namespaces ----------------------------------------------------------------------------------
    case("create-in-missing-namespace", "POST", "/api/v1/namespaces/nope/configmaps", configmap(), 404,
         "NotFound", 'namespaces "nope" not found'),
    case("create-in-terminating-namespace", "POST", "/api/v1/namespaces/doomed/configmaps", configmap(), 403,
         "Forbidden", 'configmaps "new" is forbidden: unable to create new content in namespace doomed because '
         "it is being terminated", causes=(("NamespaceTerminating", "metadata.namespace"),)),
    case("delete-kube-system", "DELETE", "/api/v1/namespaces/kube-system", None, 403, "Forbidden",
         'namespaces "kube-system" is forbidden: this namespace may not be deleted', content_type=None),
    case("delete-default-namespace", "DELETE", "/api/v1/namespaces/default", None, 403, "Forbidden",
         'namespaces "default" is forbidden: this namespace may not be deleted', content_type=None),

    # --- delete options --------------------------------------------------------------------------------
    # rest.BeforeDelete names the Kind (not the resource) in this Conflict.
    case("delete-uid-precondition", "DELETE", f"{CM}/cm", {"preconditions": {"uid": "not-the-uid"}}, 409,
         "Conflict", 'Operation cannot be fulfilled on ConfigMap "cm": the UID in the precondition (not-the-uid) '
         "does not match the UID in record ({uid}). The object might have been deleted and then recreated"),
    case("delete-resource-version-precondition", "DELETE", f"{CM}/cm", {"preconditions": {"resourceVersion": "1"}},
         409, "Conflict", 'Operation cannot be fulfilled on ConfigMap "cm": the ResourceVersion in the precondition '
         "(1) does not match the ResourceVersion in record ({rv}). The object might have been modified"),
    case("delete-invalid-propagation-policy", "DELETE", f"{CM}/cm?propagationPolicy=Sideways", None, 422,
         "Invalid", 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
         'supported values: "Foreground", "Background", "Orphan", "nil"', content_type=None,
         causes=(("FieldValueNotSupported", "propagationPolicy"),)),
    case("delete-orphan-and-propagation", "DELETE", f"{CM}/cm",
         {"propagationPolicy": "Orphan", "orphanDependents": True}, 422, "Invalid",
         'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
         causes=(("FieldValueInvalid", "propagationPolicy"),)),
    case("delete-invalid-dry-run", "DELETE", f"{CM}/cm?dryRun=Bogus", None, 422, "Invalid",
         'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported '
         'values: "All"', content_type=None, causes=(("FieldValueNotSupported", "dryRun"),)),

    # --- routing -----------------------------------------------------------------------------------------
    case("unknown-resource", "GET", "/api/v1/namespaces/default/foos", None, 404, "NotFound",
         "the server could not find the requested resource", content_type=None),
    # An unknown group has no go-restful web service: upstream's last handler answers with
    # Go's plain-text "404 page not found", which is not a Status, so it is not in this table.
    case("unknown-resource-in-known-group", "GET", "/apis/apps/v1/namespaces/default/foos", None, 404, "NotFound",
         "the server could not find the requested resource", content_type=None),
    case("put-on-collection", "PUT", CM, configmap(), 405, "MethodNotAllowed",
         "the server does not allow this method on the requested resource"),
    case("post-to-object", "POST", f"{CM}/cm", configmap("cm"), 405, "MethodNotAllowed",
         "the server does not allow this method on the requested resource"),

    # --- write options ------------------------------------------------------------------------------------
    case("strict-unknown-field", "POST", f"{CM}?fieldValidation=Strict", configmap() | {"bogus": 1}, 400,
         "BadRequest", 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
         'unknown field "bogus"'),
    case("strict-duplicate-field", "POST", f"{CM}?fieldValidation=Strict",
         '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}', 400, "BadRequest",
         'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field '
         '"metadata.name"'),
    case("strict-unknown-field-in-patch", "PATCH", f"{CM}/cm?fieldValidation=Strict", {"bogus": 1}, 422,
         "Invalid", 'strict decoding error: unknown field "bogus"', content_type=MERGE,
         causes=(("FieldValueInvalid", "patch"),)),
    case("field-validation-invalid", "POST", f"{CM}?fieldValidation=Sometimes", configmap(), 422, "Invalid",
         'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Sometimes": supported '
         'values: "", "Ignore", "Strict", "Warn"', causes=(("FieldValueNotSupported", "fieldValidation"),)),
    case("create-invalid-dry-run", "POST", f"{CM}?dryRun=Bogus", configmap(), 422, "Invalid",
         'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported '
         'values: "All"', causes=(("FieldValueNotSupported", "dryRun"),)),
    case("patch-invalid-dry-run", "PATCH", f"{CM}/cm?dryRun=Bogus", {"data": {"k": "x"}}, 422, "Invalid",
         'PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]',
         content_type=MERGE, causes=(("FieldValueNotSupported", "dryRun"),)),

    # --- list options -------------------------------------------------------------------------------------
    case("invalid-label-selector", "GET", f"{CM}?labelSelector=" + quote("a b"), None, 400, "BadRequest",
         "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt", content_type=None),
    case("unsupported-field-selector", "GET", f"{CM}?fieldSelector=" + quote("spec.foo=bar"), None, 400,
         "BadRequest", '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
         content_type=None),
    case("malformed-field-selector", "GET", f"{CM}?fieldSelector=foo", None, 400, "BadRequest",
         "invalid selector: 'foo'; can't understand 'foo'", content_type=None),
    case("invalid-limit", "GET", f"{CM}?limit=ten", None, 400, "BadRequest",
         'strconv.ParseInt: parsing "ten": invalid syntax', content_type=None),
    case("invalid-continue-token", "GET", f"{CM}?limit=1&continue=abc!!", None, 400, "BadRequest",
         "invalid continue token: continue key is not valid: illegal base64 data at input byte 3",
         content_type=None),
    case("invalid-resource-version", "GET", f"{CM}?resourceVersion=abc", None, 400, "BadRequest",
         'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": '
         "invalid syntax", content_type=None),
    case("resource-version-match-without-resource-version", "GET", f"{CM}?resourceVersionMatch=NotOlderThan",
         None, 422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
         "resourceVersionMatch is forbidden unless resourceVersion is provided", content_type=None,
         causes=(("FieldValueForbidden", "resourceVersionMatch"),)),
    case("expired-continue-token", "GET", f"{CM}?limit=1&continue={{continue}}", None, 410, "Expired",
         INCONSISTENT_CONTINUE, content_type=None),
]


# --- the cluster each case runs against --------------------------------------------------------------


@pytest.fixture
def seeded(fakekube: Cluster) -> dict[str, str]:
    """Objects the cases refer to, a Terminating namespace, and a continue token that has
    expired by the time the test runs (more writes follow it than the history keeps)."""
    cm = fakekube.create(configmap("cm", data={"k": "v"}))
    fakekube.create(configmap("frozen", data={"k": "v"}, immutable=True))
    status, listing = request(fakekube, "GET", f"{CM}?limit=1")
    assert status == 200 and listing["metadata"]["continue"]
    fakekube.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec"}, "stringData": {"k": "v"},
                     "immutable": True})
    fakekube.create(pod({"containers": [{"name": "c", "image": "nginx:1.27"}]}, "pod"))
    fakekube.create(deployment({"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                                "template": {"metadata": {"labels": {"app": "web"}},
                                             "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}, "web"))
    fakekube.create(service({"selector": {"app": "web"}, "ports": [{"port": 80}]}, "svc"))
    fakekube.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
                     "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                    "containers": [{"name": "c", "image": "busybox"}]}}}})
    fakekube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    fakekube.delete("v1", "Namespace", "doomed", namespace="")  # Terminating: the clock never reaches its first pass
    assert fakekube.get("v1", "Namespace", "doomed", namespace="")["status"]["phase"] == "Terminating"
    return {"uid": cm["metadata"]["uid"], "rv": cm["metadata"]["resourceVersion"],
            "continue": listing["metadata"]["continue"]}


def request(cluster: Cluster, method: str, path: str, body: bytes | None = None,
            content_type: str | None = None) -> tuple[int, Any]:
    """One raw HTTP request; the decoded JSON answer."""
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Accept": JSON}
    if content_type is not None:
        headers["Content-Type"] = content_type
    try:
        try:
            connection.request(method, path, body=body, headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer an oversize body before reading all of it
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


# --- the test ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", CASES)
def test_bad_input_is_refused_like_upstream_and_changes_nothing(fakekube: Cluster, seeded: dict[str, str],
                                                                 bad: Case) -> None:
    path = fill(bad.path, seeded)
    body = fill(bad.body.decode(), seeded).encode() if bad.body and len(bad.body) < 1024 * 1024 else bad.body
    before = snapshot(fakekube)

    status, answer = request(fakekube, bad.method, path, body, bad.content_type)

    assert (answer.get("kind"), answer.get("apiVersion"), answer.get("status")) == ("Status", "v1", "Failure"), answer
    assert (status, answer.get("code"), answer.get("reason", "")) == (bad.code, bad.code, bad.reason), answer
    assert fill(bad.message, seeded) in answer.get("message", ""), answer
    causes = tuple((c.get("reason"), c.get("field")) for c in (answer.get("details") or {}).get("causes", []))
    assert causes == bad.causes, answer
    assert snapshot(fakekube) == before


def test_expired_continue_hands_out_a_fresh_token(fakekube: Cluster, seeded: dict[str, str]) -> None:
    """Upstream's 410 for an expired continue token carries a token that continues the
    same list at the newest state (rv -1), and that token works."""
    status, answer = request(fakekube, "GET", f"{CM}?limit=1&continue={seeded['continue']}")
    assert (status, answer["reason"]) == (410, "Expired")
    fresh = answer["metadata"]["continue"]
    status, page = request(fakekube, "GET", f"{CM}?limit=1&continue={fresh}")
    assert status == 200
    assert [item["metadata"]["name"] for item in page["items"]] == ["frozen"]


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 50
