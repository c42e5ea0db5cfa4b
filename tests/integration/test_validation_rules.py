"""Validation rules a real kube-apiserver applies and fakekube once let through (or refused
when upstream accepts): each case is one create, with the status and message a Kubernetes
1.36.2 apiserver answered (tests/conformance/golden/1.36; the rules are
``pkg/apis/*/validation``). Values that render differently by release are checked for both.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakekube import Cluster
from tests.integration.test_request_semantics import request

NS = "/api/v1/namespaces/default"
NET = "/apis/networking.k8s.io/v1/namespaces/default"
HPA = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def _pod(name: str, container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx", **(container or {})}], **spec}}


def _policy(name: str, rule: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"podSelector": {}, "ingress": [rule]}}


def _hpa(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3, **spec}}


def _limit_range(name: str, *limits: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(limits)}}


#: (test id, path, body, expected status, expected message or None for a create that succeeds)
CASES: list[tuple[str, str, dict[str, Any], int, str | None]] = [
    ("node-bad-pod-cidr", "/api/v1/nodes",
     {"metadata": {"name": "bad2"}, "spec": {"podCIDR": "not-a-cidr"}}, 422,
     'Node "bad2" is invalid: spec.podCIDRs[0]: Invalid value: "not-a-cidr": must be a valid CIDR value, '
     "(e.g. 10.9.8.0/24 or 2001:db8::/64)"),
    ("node-bad-taint-key", "/api/v1/nodes",
     {"metadata": {"name": "bad3"}, "spec": {"taints": [{"key": "a b", "effect": "NoSchedule"}]}}, 422,
     f'Node "bad3" is invalid: metadata.taints[0].key: Invalid value: "a b": {QUALIFIED}'),
    ("node-bad-taint-effect", "/api/v1/nodes",
     {"metadata": {"name": "bad4"}, "spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}, 422,
     'Node "bad4" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: '
     '"NoSchedule", "PreferNoSchedule", "NoExecute"'),
    ("node-negative-capacity", "/api/v1/nodes",
     {"metadata": {"name": "bad5"}, "status": {"capacity": {"cpu": "-1"}}}, 422,
     'Node "bad5" is invalid: [status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0, '
     'status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0]'),
    ("pod-request-above-limit", f"{NS}/pods",
     _pod("bad7", {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}), 422,
     'Pod "bad7" is invalid: spec.containers[0].resources.requests: Invalid value: "2": '
     "must be less than or equal to cpu limit of 1"),
    ("pod-bad-env-name", f"{NS}/pods", _pod("bad11", {"env": [{"name": "1bad=", "value": "x"}]}), 422,
     'Pod "bad11" is invalid: spec.containers[0].env[0].name: Invalid value: "1bad=": a valid environment '
     "variable name must consist only of printable ASCII characters other than '='"),
    ("pod-two-volume-sources", f"{NS}/pods",
     _pod("bad14", volumes=[{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]), 422,
     'Pod "bad14" is invalid: spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type'),
    ("pod-probe-without-handler", f"{NS}/pods", _pod("bad15", {"readinessProbe": {"periodSeconds": 5}}), 422,
     'Pod "bad15" is invalid: spec.containers[0].readinessProbe: Required value: must specify a handler type'),
    ("endpoints-bad-address", f"{NS}/endpoints",
     {"metadata": {"name": "bad1"}, "subsets": [{"addresses": [{"ip": "not-an-ip"}], "ports": [{"port": 80}]}]}, 422,
     'Endpoints "bad1" is invalid: [subsets[0].addresses[0].ip: Invalid value: "not-an-ip": must be a valid IP '
     'address, (e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].addresses[0].ip: Invalid value: "not-an-ip": '
     "must be a valid IP address]"),
    ("endpoints-loopback-address", f"{NS}/endpoints",
     {"metadata": {"name": "bad3"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 80}]}]}, 422,
     'Endpoints "bad3" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the '
     "loopback range (127.0.0.0/8, ::1/128)"),
    ("pv-without-source", "/api/v1/persistentvolumes",
     {"metadata": {"name": "bad1"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}}, 422,
     'PersistentVolume "bad1" is invalid: spec: Required value: must specify a volume type'),
    ("pvc-bad-volume-mode", f"{NS}/persistentvolumeclaims",
     {"metadata": {"name": "bad3"}, "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Sideways",
                                             "resources": {"requests": {"storage": "1Gi"}}}}, 422,
     'PersistentVolumeClaim "bad3" is invalid: spec.volumeMode: Unsupported value: "Sideways": supported values: '
     '"Block", "Filesystem"'),
    ("secret-basic-auth-without-keys", f"{NS}/secrets",
     {"metadata": {"name": "bad3"}, "type": "kubernetes.io/basic-auth", "data": {}}, 422,
     'Secret "bad3" is invalid: [data[username]: Required value, data[password]: Required value]'),
    ("secret-basic-auth-password-only", f"{NS}/secrets",
     {"metadata": {"name": "ok3"}, "type": "kubernetes.io/basic-auth", "data": {"password": ""}}, 201, None),
    ("limitrange-bad-type", f"{NS}/limitranges", _limit_range("bad1", {"type": "Node"}), 422,
     'LimitRange "bad1" is invalid: spec.limits[0].type: Invalid value: "Node": must be a standard limit type or '
     "fully qualified"),
    ("limitrange-min-above-max", f"{NS}/limitranges",
     _limit_range("bad2", {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}), 422,
     'LimitRange "bad2" is invalid: [spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max '
     'value 1, spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than default request '
     'value 1, spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1]'),
    ("limitrange-default-on-pod-limit", f"{NS}/limitranges",
     _limit_range("bad3", {"type": "Pod", "default": {"cpu": "1"}}), 422,
     "LimitRange \"bad3\" is invalid: spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"),
    ("limitrange-default-above-max", f"{NS}/limitranges",
     _limit_range("bad4", {"type": "Container", "default": {"cpu": "3"}, "max": {"cpu": "2"}}), 422,
     'LimitRange "bad4" is invalid: [spec.limits[0].defaultRequest[cpu]: Invalid value: "3": default request value 3 '
     'is greater than max value 2, spec.limits[0].default[cpu]: Invalid value: "2": default value 3 is greater '
     "than max value 2]"),
    ("resourcequota-bad-resource-name", f"{NS}/resourcequotas",
     {"metadata": {"name": "bad"}, "spec": {"hard": {"not a resource": "1"}}}, 422,
     f'ResourceQuota "bad" is invalid: [spec.hard[not a resource]: Invalid value: "not a resource": {QUALIFIED}, '
     'spec.hard[not a resource]: Invalid value: "not a resource": must be a standard resource for quota]'),
    ("podtemplate-bad-label", f"{NS}/podtemplates",
     {"metadata": {"name": "bad2"}, "template": {"metadata": {"labels": {"a b": "c"}},
                                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}, 422,
     f'PodTemplate "bad2" is invalid: template.labels: Invalid value: "a b": {QUALIFIED}'),
    ("ingress-bad-wildcard-host", f"{NET}/ingresses",
     {"metadata": {"name": "bad4"}, "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}},
                                             "rules": [{"host": "*.*.example.com"}]}}, 422,
     'Ingress.networking.k8s.io "bad4" is invalid: spec.rules[0].host: Invalid value: "*.*.example.com": a wildcard '
     "DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case "
     "alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used "
     "for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ("networkpolicy-bad-cidr", f"{NET}/networkpolicies",
     _policy("bad2", {"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}), 422,
     'NetworkPolicy.networking.k8s.io "bad2" is invalid: spec.ingress[0].from[0].ipBlock.cidr: Invalid value: '
     '"10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'),
    ("networkpolicy-except-outside-cidr", f"{NET}/networkpolicies",
     _policy("bad3", {"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}]}), 422,
     'NetworkPolicy.networking.k8s.io "bad3" is invalid: spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: '
     '"10.1.0.0/24": must be a strict subset of `cidr`'),
    ("networkpolicy-except-inside-cidr", f"{NET}/networkpolicies",
     _policy("ok3", {"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.1.0/24"]}}]}), 201, None),
    ("networkpolicy-bad-port-protocol", f"{NET}/networkpolicies",
     _policy("bad4", {"ports": [{"protocol": "ICMP", "port": 80}]}), 422,
     'NetworkPolicy.networking.k8s.io "bad4" is invalid: spec.ingress[0].ports[0].protocol: Unsupported value: '
     '"ICMP": supported values: "TCP", "UDP", "SCTP"'),
    ("endpointslice-bad-address", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
     {"metadata": {"name": "bad2"}, "addressType": "IPv4", "endpoints": [{"addresses": ["not-an-ip"]}]}, 422,
     'EndpointSlice.discovery.k8s.io "bad2" is invalid: endpoints[0].addresses[0]: Invalid value: "not-an-ip": '
     "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ("hpa-zero-max", HPA, _hpa("bad2", maxReplicas=0), 422,
     'HorizontalPodAutoscaler.autoscaling "bad2" is invalid: [spec.maxReplicas: Required value: must be set and '
     "greater than 0, spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`]"),
    ("hpa-metric-without-target-value", HPA,
     _hpa("bad4", metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]),
     422, 'HorizontalPodAutoscaler.autoscaling "bad4" is invalid: spec.metrics[0].resource.target.averageUtilization: '
     "Required value: must set either a target raw value or a target utilization"),
    ("hpa-bad-select-policy", HPA, _hpa("bad5", behavior={"scaleUp": {"selectPolicy": "Sideways"}}), 422,
     'HorizontalPodAutoscaler.autoscaling "bad5" is invalid: spec.behavior.scaleUp.selectPolicy: Unsupported value: '
     '"Sideways": supported values: "Disabled", "Max", "Min"'),
    ("hpa-behavior-defaulted", HPA, _hpa("ok5", behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}),
     201, None),
    ("clusterrole-bad-aggregation-selector", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     {"metadata": {"name": "bad3"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a b": "c"}}]}},
     422, 'ClusterRole.rbac.authorization.k8s.io "bad3" is invalid: [aggregationRule.clusterRoleSelectors[0].'
     f'matchLabels: Invalid value: "a b": {QUALIFIED}, aggregationRule.clusterRoleSelectors[0]: Invalid value: '
     "null: invalid label selector.]"),
    ("storageclass-topology-without-values", "/apis/storage.k8s.io/v1/storageclasses",
     {"metadata": {"name": "bad4"}, "provisioner": "example.com/p",
      "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": []}]}]}, 422,
     'StorageClass.storage.k8s.io "bad4" is invalid: allowedTopologies[0].matchLabelExpressions[0].values: '
     "Required value"),
    ("runtimeclass-negative-overhead", "/apis/node.k8s.io/v1/runtimeclasses",
     {"metadata": {"name": "bad2"}, "handler": "runc", "overhead": {"podFixed": {"cpu": "-1"}}}, 422,
     'RuntimeClass.node.k8s.io "bad2" is invalid: overhead.limits[cpu]: Invalid value: "-1": must be greater than '
     "or equal to 0"),
    ("runtimeclass-bad-toleration", "/apis/node.k8s.io/v1/runtimeclasses",
     {"metadata": {"name": "bad3"}, "handler": "runc",
      "scheduling": {"tolerations": [{"key": "a", "operator": "Exists", "value": "b"}]}}, 422,
     'RuntimeClass.node.k8s.io "bad3" is invalid: scheduling.tolerations[0].operator: Invalid value: "b": value '
     "must be empty when `operator` is 'Exists'"),
    ("priorityclass-reserved-prefix", "/apis/scheduling.k8s.io/v1/priorityclasses",
     {"metadata": {"name": "system-mine"}, "value": 5}, 422,
     'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: priority class names with '
     "'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"),
    ("ingress-port-name-and-number", f"{NET}/ingresses",
     {"metadata": {"name": "bad5"}, "spec": {"defaultBackend": {"service": {
         "name": "s", "port": {"name": "http", "number": 80}}}}}, 422,
     'Ingress.networking.k8s.io "bad5" is invalid: spec.defaultBackend: Invalid value: "": cannot set both port '
     "name & port number"),
    ("csidriver-bad-lifecycle-mode", "/apis/storage.k8s.io/v1/csidrivers",
     {"metadata": {"name": "d.example.com"}, "spec": {"volumeLifecycleModes": ["Forever"]}}, 422,
     'CSIDriver.storage.k8s.io "d.example.com" is invalid: spec.volumeLifecycleModes: Unsupported value: "Forever": '
     'supported values: "Persistent", "Ephemeral"'),
    ("flowschema-precedence-too-high", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
     {"metadata": {"name": "f"}, "spec": {"matchingPrecedence": 20000,
                                          "priorityLevelConfiguration": {"name": "global-default"}}}, 422,
     'FlowSchema.flowcontrol.apiserver.k8s.io "f" is invalid: spec.matchingPrecedence: Invalid value: 20000: '
     "must not be greater than 10000"),
    ("job-restart-policy-always", "/apis/batch/v1/namespaces/default/jobs",
     {"metadata": {"name": "bad1"}, "spec": {"template": {"spec": {
         "restartPolicy": "Always", "containers": [{"name": "c", "image": "perl"}]}}}}, 422,
     'Job.batch "bad1" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", '
     '"Never"'),
    ("secret-dockerconfigjson-not-json", f"{NS}/secrets",
     {"metadata": {"name": "bad2"}, "type": "kubernetes.io/dockerconfigjson",
      "data": {".dockerconfigjson": "bm90IGpzb24="}}, 422,
     'Secret "bad2" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid '
     "character 'o' in literal null (expecting 'u')"),
    ("secret-dockerconfigjson-not-an-object", f"{NS}/secrets",
     {"metadata": {"name": "bad3"}, "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "WzFd"}},
     422, 'Secret "bad3" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: '
          "cannot unmarshal array into Go value of type map[string]interface {}"),
    ("job-zero-active-deadline", "/apis/batch/v1/namespaces/default/jobs",
     {"metadata": {"name": "bad8"}, "spec": {"activeDeadlineSeconds": 0, "template": {"spec": {
         "restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]}}}}, 201, None),
]


@pytest.mark.parametrize(("path", "body", "code", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_create_is_validated_as_upstream(fakekube: Cluster, path: str, body: dict[str, Any], code: int,
                                         message: str | None) -> None:
    status, answer, _ = request(fakekube, "POST", path, body)
    assert status == code, answer
    if message is not None:
        assert (answer["reason"], answer["message"]) == ("Invalid", message)


@pytest.mark.parametrize(("version", "shown"), [
    ("1.33", 'core.Taint{Key:"a", Value:"", Effect:"NoSchedule", TimeAdded:<nil>}'),
    ("1.36", '{"Key":"a","Value":"","Effect":"NoSchedule","TimeAdded":null}'),
])
def test_duplicate_taint_shows_the_taint_as_the_release_renders_it(version: str, shown: str) -> None:
    taint = {"key": "a", "effect": "NoSchedule"}
    with Cluster(kubernetes_version=version) as cluster:
        status, answer, _ = request(cluster, "POST", "/api/v1/nodes",
                                    {"metadata": {"name": "dup"}, "spec": {"taints": [taint, taint]}})
    assert status == 422
    assert answer["message"] == (f'Node "dup" is invalid: metadata.taints[1]: Duplicate value: {shown}: '
                                 "taints must be unique by key and effect pair")


def test_a_node_update_reports_a_bad_taint_twice(fakekube: Cluster) -> None:
    """The node strategy validates an update with ValidateNode and then ValidateNodeUpdate, and
    both check the taints: two causes, one line in the (de-duplicated) message."""
    assert request(fakekube, "POST", "/api/v1/nodes", {"metadata": {"name": "tainted"}})[0] == 201
    status, answer, _ = request(fakekube, "PATCH", "/api/v1/nodes/tainted",
                                {"spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}, "application/merge-patch+json")
    assert status == 422
    effect = 'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
    assert answer["message"] == f'Node "tainted" is invalid: metadata.taints[0].effect: {effect}'
    assert [(c["field"], c["message"]) for c in answer["details"]["causes"]] == [
        ("metadata.taints[0].effect", effect)] * 2


@pytest.mark.parametrize(("version", "shown"), [("1.33", '[]string{"/x"}'), ("1.36", '["/x"]')])
def test_a_rule_with_urls_and_resources_shows_the_urls_as_the_release_renders_them(version: str, shown: str) -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "both"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"], "apiGroups": [""]}]}
    with Cluster(kubernetes_version=version) as cluster:
        status, answer, _ = request(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    assert status == 422
    assert answer["message"] == (f'ClusterRole.rbac.authorization.k8s.io "both" is invalid: rules[0].nonResourceURLs: '
                                 f"Invalid value: {shown}: rules cannot apply to both regular resources and "
                                 "non-resource URLs")


def test_hpa_behavior_gets_upstream_defaults(fakekube: Cluster) -> None:
    _, hpa, _ = request(fakekube, "POST", HPA, _hpa("h", behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}))
    assert hpa["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}


def test_node_pod_cidr_cannot_change_through_the_legacy_field(fakekube: Cluster) -> None:
    """``podCIDR`` wins over a differing ``podCIDRs[0]`` (v1 conversion), so changing it alone
    is a change of ``podCIDRs``."""
    request(fakekube, "POST", "/api/v1/nodes", {"metadata": {"name": "n"}, "spec": {"podCIDR": "10.244.7.0/24"}})
    status, answer, _ = request(fakekube, "PATCH", "/api/v1/nodes/n", {"spec": {"podCIDR": "10.244.8.0/24"}},
                                content_type="application/strategic-merge-patch+json")
    assert status == 422, answer
    assert answer["message"] == ('Node "n" is invalid: spec.podCIDRs: Forbidden: node updates may not change '
                                 'podCIDR except from "" to valid')


DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
MERGE = "application/merge-patch+json"


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


@pytest.mark.parametrize(("status", "message"), [
    ({"replicas": 1, "readyReplicas": 3},
     "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas"),
    ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2, "updatedReplicas": -1},
     "[status.updatedReplicas: Invalid value: -1: must be greater than or equal to 0, status.availableReplicas: "
     "Invalid value: 2: cannot be greater than readyReplicas]"),
])
def test_deployment_status_counts_are_validated(fakekube: Cluster, status: dict[str, Any], message: str) -> None:
    request(fakekube, "POST", DEPLOYMENTS, _deployment("web"))
    code, answer, _ = request(fakekube, "PATCH", f"{DEPLOYMENTS}/web/status", {"status": status}, content_type=MERGE)
    assert (code, answer["message"]) == (422, f'Deployment.apps "web" is invalid: {message}')


def test_deployment_collision_count_cannot_go_down(fakekube: Cluster) -> None:
    request(fakekube, "POST", DEPLOYMENTS, _deployment("web"))
    request(fakekube, "PATCH", f"{DEPLOYMENTS}/web/status", {"status": {"collisionCount": 2}}, content_type=MERGE)
    code, answer, _ = request(fakekube, "PATCH", f"{DEPLOYMENTS}/web/status", {"status": {"collisionCount": 1}},
                              content_type=MERGE)
    assert (code, answer["message"]) == (422, 'Deployment.apps "web" is invalid: status.collisionCount: '
                                              "Invalid value: 1: cannot be decremented")


@pytest.mark.parametrize("version", ["1.33", "1.36"])
def test_controller_revision_data_is_immutable(version: str) -> None:
    path = "/apis/apps/v1/namespaces/default/controllerrevisions"
    with Cluster(kubernetes_version=version) as cluster:
        request(cluster, "POST", path, {"metadata": {"name": "r"}, "revision": 1, "data": {"a": 1}})
        code, answer, _ = request(cluster, "PATCH", f"{path}/r", {"revision": -1, "data": {"b": [1], "a": "x"}},
                                  content_type=MERGE)
    assert (code, answer["message"]) == (422, 'ControllerRevision.apps "r" is invalid: [revision: Invalid value: -1: '
                                              'must be greater than or equal to 0, data: Invalid value: '
                                              '{"a":"x","b":[1]}: field is immutable]')


CONTROLLER_REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"


def _revision_body(data: str) -> bytes:
    return ('{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r"},"revision":1,"data":'
            + data + "}").encode()


def _immutable(shown: str) -> tuple[int, str]:
    return 422, f'ControllerRevision.apps "r" is invalid: data: Invalid value: {shown}: field is immutable'


@pytest.mark.parametrize(("created", "content_type", "patch", "expected"), [
    # Created with spaces (Python's json.dumps): every patch re-encodes it compact.
    ('{"a": 1}', MERGE, {"metadata": {"labels": {"x": "y"}}}, _immutable('{"a":1}')),
    ('{"a": 1}', "application/json-patch+json", [{"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}],
     _immutable('{"a":1}')),
    ('{"a": 1}', "application/apply-patch+yaml",
     {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r", "labels": {"x": "y"}}},
     _immutable('{"a":1}')),
    # Compact as Go writes it: merge and JSON patches keep its key order, strategic sorts it.
    ('{"b":1,"a":2}', MERGE, {"metadata": {"labels": {"x": "y"}}}, (200, "")),
    ('{"b":1,"a":2}', "application/json-patch+json", [{"op": "add", "path": "/metadata/labels", "value": {}}],
     (200, "")),
    ('{"b":1,"a":2}', "application/strategic-merge-patch+json", {"metadata": {"labels": {"x": "y"}}},
     _immutable('{"a":2,"b":1}')),
])
def test_controller_revision_data_is_compared_as_the_bytes_sent(created: str, content_type: str, patch: Any,
                                                                expected: tuple[int, str]) -> None:
    """Upstream keeps a RawExtension as the bytes of the body and compares bytes (the same
    value in other spacing or key order is a change); answers of a 1.36.2 apiserver."""
    with Cluster() as cluster:
        assert request(cluster, "POST", CONTROLLER_REVISIONS, _revision_body(created))[0] == 201
        query = "?fieldManager=m" if content_type.startswith("application/apply") else ""
        code, answer, _ = request(cluster, "PATCH", f"{CONTROLLER_REVISIONS}/r{query}", patch,
                                  content_type=content_type)
    assert (code, answer.get("message", "")) == expected


@pytest.mark.parametrize(("sent", "expected"), [
    ('{"b":1,"a":2}', (200, "")),
    (' {"b":1,"a":2} ', (200, "")),  # spaces around the value are not part of it
    ('{"b":1, "a":2}', _immutable('{"b":1,"a":2}')),
    ('{"a":2,"b":1}', _immutable('{"a":2,"b":1}')),
])
def test_controller_revision_replace_must_send_the_stored_bytes(sent: str, expected: tuple[int, str]) -> None:
    with Cluster() as cluster:
        request(cluster, "POST", CONTROLLER_REVISIONS, _revision_body('{"b":1,"a":2}'))
        code, answer, _ = request(cluster, "PUT", f"{CONTROLLER_REVISIONS}/r", _revision_body(sent))
    assert (code, answer.get("message", "")) == expected


def test_controller_revision_bytes_follow_a_replace() -> None:
    """A PUT of new metadata with other bytes of the same data is refused; with the same
    bytes it is stored, and the bytes stay those of the create for the next write."""
    with Cluster() as cluster:
        request(cluster, "POST", CONTROLLER_REVISIONS, _revision_body('{"a": 1}'))
        labelled = _revision_body('{"a": 1}').replace(b'"name":"r"}', b'"name":"r","labels":{"x":"y"}}')
        assert request(cluster, "PUT", f"{CONTROLLER_REVISIONS}/r", labelled)[0] == 200
        code, answer, _ = request(cluster, "PATCH", f"{CONTROLLER_REVISIONS}/r", {"metadata": {"labels": None}},
                                  content_type=MERGE)
    assert (code, answer["message"]) == _immutable('{"a":1}')


JOBS = "/apis/batch/v1/namespaces/default/jobs"
SMP = "application/strategic-merge-patch+json"
#: The internal core.PodSpec of the Job below as json.Marshal writes it, its image perl:5
#: (a 1.36.2 apiserver's answer, tests/conformance/golden/1.36/batch-jobs.json #5).
PI_POD_SPEC = (
    '{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"perl:5","Command":null,"Args":null,'
    '"WorkingDir":"","Ports":null,"EnvFrom":null,"Env":null,"Resources":{"Limits":null,"Requests":null,'
    '"Claims":null},"ResizePolicy":null,"RestartPolicy":null,"RestartPolicyRules":null,"VolumeMounts":null,'
    '"VolumeDevices":null,"LivenessProbe":null,"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,'
    '"TerminationMessagePath":"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"Always",'
    '"SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}],"EphemeralContainers":null,'
    '"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,"ActiveDeadlineSeconds":null,'
    '"DNSPolicy":"ClusterFirst","NodeSelector":null,"ServiceAccountName":"","AutomountServiceAccountToken":null,'
    '"NodeName":"","SecurityContext":{"HostNetwork":false,"HostPID":false,"HostIPC":false,'
    '"ShareProcessNamespace":null,"HostUsers":null,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,'
    '"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,"SupplementalGroupsPolicy":null,'
    '"FSGroup":null,"FSGroupChangePolicy":null,"Sysctls":null,"SeccompProfile":null,"AppArmorProfile":null,'
    '"SELinuxChangePolicy":null},"ImagePullSecrets":null,"Hostname":"","Subdomain":"","SetHostnameAsFQDN":null,'
    '"Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,'
    '"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"DNSConfig":null,"ReadinessGates":null,'
    '"RuntimeClassName":null,"Overhead":null,"EnableServiceLinks":null,"TopologySpreadConstraints":null,"OS":null,'
    '"SchedulingGates":null,"ResourceClaims":null,"Resources":null,"HostnameOverride":null,"SchedulingGroup":null}')


def _suspended_job(cluster: Cluster, **metadata: Any) -> None:
    template = {"metadata": metadata, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
           "spec": {"suspend": True, "template": template}}
    assert request(cluster, "POST", JOBS, job)[0] == 201


@pytest.mark.parametrize(("version", "expected"), [
    ("1.36", (200, "")),
    ("1.35", (422, 'Job.batch "pi" is invalid: spec.template: Invalid value: ')),
])
def test_a_suspended_job_may_change_its_resources_from_1_36(version: str, expected: tuple[int, str]) -> None:
    """MutablePodResourcesForSuspendedJobs (beta, on from 1.36): a suspended Job that has no
    active pods may change its containers' resources."""
    with Cluster(kubernetes_version=version) as cluster:
        _suspended_job(cluster)
        code, answer, _ = request(cluster, "PATCH", f"{JOBS}/pi", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "resources": {"limits": {"cpu": "2"}}}]}}}}, content_type=SMP)
    assert (code, answer.get("message", "")[:len(expected[1])]) == expected


def test_a_suspended_jobs_other_template_changes_show_the_internal_pod_spec() -> None:
    with Cluster(kubernetes_version="1.36") as cluster:
        _suspended_job(cluster)
        code, answer, _ = request(cluster, "PATCH", f"{JOBS}/pi", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "perl:5"}]}}}}, content_type=SMP)
    assert (code, answer["message"]) == (
        422, f'Job.batch "pi" is invalid: spec.template.spec: Invalid value: {PI_POD_SPEC}: field is immutable')


def test_a_running_jobs_template_change_shows_the_internal_template() -> None:
    """Not suspended, any template change is refused at spec.template, the new template shown
    as json.Marshal writes the internal core.PodTemplateSpec (metadata inlined, maps sorted)."""
    with Cluster(kubernetes_version="1.36") as cluster:
        _suspended_job(cluster, labels={"z": "1", "a": "2"})
        request(cluster, "PATCH", f"{JOBS}/pi", {"spec": {"suspend": False}}, content_type=MERGE)
        code, answer, _ = request(cluster, "PATCH", f"{JOBS}/pi", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "perl:5"}]}}}}, content_type=SMP)
        uid = request(cluster, "GET", f"{JOBS}/pi")[1]["metadata"]["uid"]
    labels = (f'{{"a":"2","batch.kubernetes.io/controller-uid":"{uid}","batch.kubernetes.io/job-name":"pi",'
              f'"controller-uid":"{uid}","job-name":"pi","z":"1"}}')
    assert (code, answer["message"]) == (
        422, f'Job.batch "pi" is invalid: spec.template: Invalid value: {{"labels":{labels},"Spec":{PI_POD_SPEC}}}: '
             "field is immutable")


POD_UPDATE_FORBIDDEN = (
    'Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,'
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
    "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n")
#: A 1.36.2 apiserver's diffs of the internal PodSpecs for the patches below.
POD_UPDATE_DIFFS = (
    ({"restartPolicy": "Never"},
     '@@ -55,7 +55,7 @@\n   }\n  ],\n  "EphemeralContainers": null,\n- "RestartPolicy": "Always",\n'
     '+ "RestartPolicy": "Never",\n  "TerminationGracePeriodSeconds": 30,\n  "ActiveDeadlineSeconds": null,\n'
     '  "DNSPolicy": "ClusterFirst",\n'),
    ({"containers": [{"name": "c", "env": [{"name": "A", "value": "2"}]}]},
     '@@ -21,7 +21,7 @@\n    "Env": [\n     {\n      "Name": "A",\n-     "Value": "1",\n+     "Value": "2",\n'
     '      "ValueFrom": null\n     }\n    ],\n'),
    ({"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]},
     '@@ -27,7 +27,7 @@\n    ],\n    "Resources": {\n     "Limits": {\n-     "cpu": "500m",\n+     "cpu": "1",\n'
     '      "memory": "1Gi"\n     },\n     "Requests": {\n'),
)


def _forbidden_pod_update(version: str, patch: dict[str, Any]) -> tuple[int, str]:
    pod = _pod("web", {"env": [{"name": "A", "value": "1"}], "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                       "ports": [{"containerPort": 80}]},
               automountServiceAccountToken=False,
               tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}])
    with Cluster(kubernetes_version=version) as cluster:
        assert request(cluster, "POST", f"{NS}/pods", pod)[0] == 201
        code, answer, _ = request(cluster, "PATCH", f"{NS}/pods/web", {"spec": patch},
                                  content_type="application/strategic-merge-patch+json")
    return code, answer["message"]


@pytest.mark.parametrize(("patch", "diff"), POD_UPDATE_DIFFS)
def test_a_forbidden_pod_update_shows_the_diff_of_the_internal_pod_specs(patch: dict[str, Any], diff: str) -> None:
    """apimachinery's diff.Diff: a unified diff of the internal core.PodSpecs as indented
    JSON (Go field names and order, every field, quantities canonical)."""
    assert _forbidden_pod_update("1.36", patch) == (422, POD_UPDATE_FORBIDDEN + diff)


@pytest.mark.parametrize(("version", "start"), [("1.33", "  core.PodSpec{\n"), ("1.34", "@@ -"), ("1.35", "@@ -")])
def test_the_pod_update_diff_is_go_cmps_up_to_1_33(version: str, start: str) -> None:
    """diff.Diff replaced go-cmp's cmp.Diff in 1.34 (kubernetes/kubernetes#132221)."""
    code, message = _forbidden_pod_update(version, {"restartPolicy": "Never"})
    assert (code, message[len(POD_UPDATE_FORBIDDEN):][:len(start)]) == (422, start)
