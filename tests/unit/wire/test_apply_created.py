"""The one-pass field set of a create equals the general comparison with the empty object."""

from __future__ import annotations

import pytest

from fakekube.api.wire import schema
from fakekube.api.wire.apply.managers import compared_create_fields, create_fields
from fakekube.api.wire.apply.types import builtin_root

SCHEMAS = schema.load()
POD_SPEC = {"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}, {"containerPort": 81, "protocol": "UDP"}],
                            "args": [], "resources": {}, "env": [{"name": "E", "value": "1"}]},
                           {"name": "b", "image": "y", "securityContext": {"runAsUser": 1}}],
            "securityContext": {}, "nodeSelector": {"disk": "ssd"}, "tolerations": [{"key": "k", "operator": "Exists"}]}
CASES = [
    ("", "v1", "ConfigMap", {"metadata": {"name": "c", "namespace": "d", "uid": "u", "labels": {"a": "b"}},
                             "data": {"k": "v"}, "binaryData": {}}),
    ("", "v1", "Pod", {"metadata": {"name": "p", "finalizers": ["x", "y"], "annotations": {}}, "spec": POD_SPEC,
                       "status": {"phase": "Pending"}}),
    ("apps", "v1", "Deployment", {"metadata": {"name": "d"}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "strategy": {"type": "Recreate"},
        "template": {"metadata": {"labels": {"app": "x"}, "creationTimestamp": None}, "spec": POD_SPEC}}}),
    ("", "v1", "Service", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": 8080}],
                                                               "selector": {"app": "x"}, "type": "ClusterIP"}}),
    ("batch", "v1", "Job", {"metadata": {"name": "j"}, "spec": {"template": {"spec": POD_SPEC}, "backoffLimit": 1}}),
]


@pytest.mark.parametrize("ignored", [None, {"f:status": {}}])
@pytest.mark.parametrize(("group", "version", "kind", "obj"), CASES, ids=[c[2] for c in CASES])
def test_one_pass_equals_comparison(group: str, version: str, kind: str, obj: dict, ignored: dict | None) -> None:
    node = builtin_root(SCHEMAS, group, version, kind)
    full = {"apiVersion": f"{group}/{version}" if group else version, "kind": kind, **obj}
    fast = create_fields(full, node, ignored)
    assert fast == compared_create_fields(full, node, ignored)
    assert list(fast) == sorted(fast)


def test_duplicate_list_keys_fall_back_to_the_comparison() -> None:
    node = builtin_root(SCHEMAS, "", "v1", "Pod")
    pod = {"spec": {"containers": [{"name": "a"}, {"name": "a", "image": "z"}]}}
    assert create_fields(pod, node, None) == compared_create_fields(pod, node, None)
