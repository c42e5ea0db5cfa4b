"""Namespaces, ConfigMaps/Secrets, PVCs and the small API groups."""

from __future__ import annotations

import base64
import copy
import random
from datetime import datetime, timezone

from fakekube.api.registry import WriteContext
from fakekube.api.types import BUILTIN_TYPES
from fakekube.api.machinery.errors import emulating
from fakekube.objects.versions import release

STRATEGIES = {f"{rt.group}/{rt.plural}": rt.strategy for rt in BUILTIN_TYPES}


class _Store:
    def get_object(self, group, resource, namespace, name):
        return None

    def list_objects(self, group, resource, namespace=""):
        return []


CTX = WriteContext(datetime(2025, 1, 1, tzinfo=timezone.utc), random.Random(1), _Store())


def _create(key, obj):
    obj = copy.deepcopy(obj)
    STRATEGIES[key].default(obj, CTX)
    STRATEGIES[key].prepare_for_create(obj, CTX)
    return obj


def _messages(key, new, old=None):
    strategy = STRATEGIES[key]
    errs = strategy.validate(new) if old is None else strategy.validate_update(new, old)
    return [e.message() for e in errs]


def test_namespace_label_finalizer_and_phase():
    ns = _create("/namespaces", {"metadata": {"name": "team-a"}})
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}
    new = copy.deepcopy(ns)
    new["spec"]["finalizers"] = []
    STRATEGIES["/namespaces"].prepare_for_update(new, ns, CTX)
    assert new["spec"]["finalizers"] == ["kubernetes"]


def test_immutable_configmap():
    old = {"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True}
    new = copy.deepcopy(old)
    new["data"]["a"] = "2"
    assert _messages("/configmaps", new, old) == ["data: Forbidden: field is immutable when `immutable` is set"]
    new = copy.deepcopy(old)
    new["immutable"] = False
    assert _messages("/configmaps", new, old) == ["immutable: Forbidden: field is immutable when `immutable` is set"]


def test_config_key_validation():
    cm = {"metadata": {"name": "c"}, "data": {"bad key": "x"}}
    assert _messages("/configmaps", cm) == [
        'data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '
        "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
        "'[-._a-zA-Z0-9]+')"]


def test_secret_string_data_type_and_immutability():
    secret = _create("/secrets", {"metadata": {"name": "s"}, "stringData": {"password": "hunter2"}})
    assert secret["type"] == "Opaque"
    assert "stringData" not in secret
    assert base64.b64decode(secret["data"]["password"]) == b"hunter2"
    retyped = copy.deepcopy(secret)
    retyped["type"] = "kubernetes.io/tls"
    retyped["data"] = {"tls.crt": "eA==", "tls.key": "eA=="}
    assert _messages("/secrets", retyped, secret) == ['type: Invalid value: "kubernetes.io/tls": field is immutable']
    tls = _create("/secrets", {"metadata": {"name": "t"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}})
    assert _messages("/secrets", tls) == ["data[tls.key]: Required value"]


def test_pvc_defaults_and_spec_immutability():
    pvc = _create("/persistentvolumeclaims", {"metadata": {"name": "p"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert pvc["spec"]["volumeMode"] == "Filesystem" and pvc["status"] == {"phase": "Pending"}
    assert _messages("/persistentvolumeclaims", pvc) == []
    grown = copy.deepcopy(pvc)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert _messages("/persistentvolumeclaims", grown, pvc) == [
        "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName "
        'for bound claims\n@@ -6,7 +6,7 @@\n  "Resources": {\n   "Limits": null,\n   "Requests": {\n'
        '-   "storage": "1Gi"\n+   "storage": "2Gi"\n   }\n  },\n  "VolumeName": "",\n']
    bound = copy.deepcopy(pvc)
    bound["status"] = {"phase": "Bound"}
    assert _messages("/persistentvolumeclaims", grown, bound) == []


def test_pvc_volume_name_may_be_set_once():
    """ValidatePersistentVolumeClaimUpdate lets the binder set spec.volumeName while it is empty."""
    pvc = _create("/persistentvolumeclaims", {"metadata": {"name": "p"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    named = copy.deepcopy(pvc)
    named["spec"]["volumeName"] = "pv-1"
    assert _messages("/persistentvolumeclaims", named, pvc) == []
    renamed = copy.deepcopy(named)
    renamed["spec"]["volumeName"] = "pv-2"
    assert _messages("/persistentvolumeclaims", renamed, named) == [
        "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName "
        'for bound claims\n@@ -9,7 +9,7 @@\n    "storage": "1Gi"\n   }\n  },\n- "VolumeName": "pv-1",\n'
        '+ "VolumeName": "pv-2",\n  "StorageClassName": null,\n  "VolumeMode": "Filesystem",\n  "DataSource": null,\n']


def test_rbac_rules_and_role_ref():
    role = {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"]}]}
    assert _messages("rbac.authorization.k8s.io/roles", role) == [
        "rules[0].verbs: Required value: verbs must contain at least one value"]
    binding = _create("rbac.authorization.k8s.io/rolebindings", {
        "metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "alice"}]})
    assert binding["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    changed = copy.deepcopy(binding)
    changed["roleRef"]["name"] = "other"
    assert _messages("rbac.authorization.k8s.io/rolebindings", changed, binding) == [  # the reference, 1.36
        'roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"other"}: '
        "cannot change roleRef"]
    with emulating(release("1.33")):
        assert _messages("rbac.authorization.k8s.io/rolebindings", changed, binding) == [
            'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: '
            "cannot change roleRef"]


def test_pdb_priorityclass_storageclass():
    pdb = _create("policy/poddisruptionbudgets", {"metadata": {"name": "p"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}})
    assert [e.detail for e in STRATEGIES["policy/poddisruptionbudgets"].validate(pdb)] == [
        "minAvailable and maxUnavailable cannot be both set"]
    assert pdb["status"]["disruptionsAllowed"] == 0
    pc = _create("scheduling.k8s.io/priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    assert pc["preemptionPolicy"] == "PreemptLowerPriority"
    new = dict(pc, value=2000)
    assert _messages("scheduling.k8s.io/priorityclasses", new, pc) == ["value: Forbidden: may not be changed in an update."]
    sc = _create("storage.k8s.io/storageclasses", {"metadata": {"name": "fast"}, "provisioner": "x"})
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    assert _messages("storage.k8s.io/storageclasses", dict(sc, provisioner="y"), sc) == [
        "provisioner: Forbidden: updates to provisioner are forbidden."]
    assert _messages("storage.k8s.io/storageclasses", {"metadata": {"name": "s"}, "reclaimPolicy": "Delete",
                                                       "volumeBindingMode": "Immediate"}) == ["provisioner: Required value"]


def test_ingress_path_type_required():
    ing = {"metadata": {"name": "i"}, "spec": {"rules": [{"http": {"paths": [
        {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}
    assert _messages("networking.k8s.io/ingresses", ing) == [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]


def test_endpointslice_and_hpa():
    eps = _create("discovery.k8s.io/endpointslices", {"metadata": {"name": "e"}, "ports": [{"port": 80}]})
    assert eps["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}]
    assert _messages("discovery.k8s.io/endpointslices", eps) == ["addressType: Required value"]
    hpa = _create("autoscaling/horizontalpodautoscalers", {"metadata": {"name": "h"}, "spec": {"maxReplicas": 0}})
    assert hpa["spec"]["minReplicas"] == 1
    assert hpa["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 80}
    messages = _messages("autoscaling/horizontalpodautoscalers", hpa)
    assert "spec.scaleTargetRef.kind: Required value" in messages
    assert "spec.maxReplicas: Required value: must be set and greater than 0" in messages
