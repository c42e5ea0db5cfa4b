"""Server-side apply and managedFields over HTTP, as a 1.33 apiserver answers them."""

from __future__ import annotations

import json

import pytest
import requests
from kubernetes import client

pytestmark = pytest.mark.fakekube(nodes=1)

APPLY = {"Content-Type": "application/apply-patch+yaml"}
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def configmap(data: dict, name: str = "settings") -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
                       "data": data})


def deployment(replicas: int, image: str = "nginx:1.27") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: "{image}"}}]
"""


def apply(fakekube, path: str, body: str, manager: str | None = "alice", **query: str) -> requests.Response:
    params = dict(query)
    if manager is not None:
        params["fieldManager"] = manager
    return requests.patch(fakekube.url + path, data=body, headers=APPLY, params=params)


def managers(obj: dict) -> dict[tuple[str, str, str], dict]:
    return {(e["manager"], e["operation"], e.get("subresource", "")): e for e in obj["metadata"]["managedFields"]}


def test_create_update_and_patch_record_their_managers(fakekube) -> None:
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}},
                                      field_manager="creator")
    read = core.read_namespaced_config_map("cm", "default").to_dict()
    entry = read["metadata"]["managed_fields"][0]
    assert (entry["manager"], entry["operation"], entry["api_version"], entry["fields_type"]) == \
        ("creator", "Update", "v1", "FieldsV1")
    assert entry["fields_v1"] == {"f:data": {".": {}, "f:a": {}}}
    assert entry["time"].isoformat() == "2025-01-01T00:00:00+00:00"
    fakekube.advance(30)
    patched = requests.patch(fakekube.url + CONFIGMAPS + "/cm", data='{"data":{"b":"2"}}',
                             headers={"Content-Type": "application/merge-patch+json", "User-Agent": "tool/1.0 (x)"}).json()
    entries = managers(patched)
    assert entries[("tool", "Update", "")]["fieldsV1"] == {"f:data": {"f:b": {}}}  # named after the User-Agent
    assert entries[("tool", "Update", "")]["time"] == "2025-01-01T00:00:30Z"
    assert entries[("creator", "Update", "")]["time"] == "2025-01-01T00:00:00Z"


def test_a_long_or_odd_user_agent_names_a_valid_manager(fakekube) -> None:
    """Upstream's prefixFromUserAgent: non-printable characters dropped, cut at 128 bytes;
    the create succeeds (it once failed validation of its own managedFields)."""
    product = "tool\u200b-" + "é" * 100  # a zero-width space is not printable; é is 2 bytes in UTF-8
    created = requests.post(fakekube.url + CONFIGMAPS, data=configmap({"a": "1"}, "long-agent"),
                            headers={"Content-Type": "application/json",
                                     "User-Agent": (product + "/1.0 (x)").encode().decode("latin-1")})
    assert created.status_code == 201, created.text
    (entry,) = created.json()["metadata"]["managedFields"]
    assert entry["manager"] == "tool-" + "é" * 61  # 5 + 122 bytes: one more would pass 128


def test_a_write_without_user_agent_or_field_manager_is_managed_by_unknown(fakekube) -> None:
    """``buildManagerInfo`` names an empty manager ``unknown`` (kube-apiserver 1.36)."""
    created = requests.post(fakekube.url + CONFIGMAPS, data=configmap({"a": "1"}, "anonymous"),
                            headers={"Content-Type": "application/json", "User-Agent": ""})
    assert created.status_code == 201, created.text
    assert [e["manager"] for e in created.json()["metadata"]["managedFields"]] == ["unknown"]


def test_what_the_rest_layer_sets_after_the_field_manager_is_nobodys(fakekube) -> None:
    """The field manager runs before the Service REST's normalizeClusterIPs: a headless
    Service's ``clusterIPs: [None]`` is not the creator's field (kube-apiserver 1.36)."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless"},
               "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]}}
    created = requests.post(fakekube.url + "/api/v1/namespaces/default/services?fieldManager=me",
                            data=json.dumps(service), headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["clusterIPs"] == ["None"]
    (entry,) = created.json()["metadata"]["managedFields"]
    assert "f:clusterIP" in entry["fieldsV1"]["f:spec"] and "f:clusterIPs" not in entry["fieldsV1"]["f:spec"]


def test_what_an_update_s_storage_changes_after_the_field_manager_is_nobodys(fakekube) -> None:
    """The update handler's field manager runs before the storage's BeforeUpdate: a node port
    the Service REST allocates is not the patcher's, and fields a type change clears stay
    the patcher's (kube-apiserver 1.36 answers these managedFields)."""
    url = fakekube.url + "/api/v1/namespaces/default/services"
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    assert requests.post(url, data=json.dumps(service), headers={"Content-Type": "application/json"}).status_code == 201

    def patch(spec: dict) -> dict:
        answer = requests.patch(f"{url}/web", data=json.dumps({"spec": spec}),
                                headers={"Content-Type": "application/merge-patch+json"})
        assert answer.status_code == 200, answer.text
        return answer.json()
    node_port = patch({"type": "NodePort"})
    assert node_port["spec"]["ports"][0]["nodePort"]
    (entry,) = node_port["metadata"]["managedFields"]
    assert "f:nodePort" not in entry["fieldsV1"]["f:spec"]["f:ports"]['k:{"port":80,"protocol":"TCP"}']
    back = patch({"type": "ClusterIP"})
    assert "externalTrafficPolicy" not in back["spec"]
    assert "f:externalTrafficPolicy" in back["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]


def test_a_scale_write_s_entry_has_no_time(fakekube) -> None:
    """The ScaleHandler moves a scale writer's fields to the parent under its apiVersion, and
    finds no parent time for it: the entry has none (kube-apiserver 1.36's answer)."""
    url = fakekube.url + "/apis/apps/v1/namespaces/default/deployments"
    labels = {"app": "web"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    headers = {"Content-Type": "application/json"}
    assert requests.post(url + "?fieldManager=me", data=json.dumps(deployment), headers=headers).status_code == 201
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    assert requests.put(url + "/web/scale?fieldManager=scaler", data=json.dumps(scale), headers=headers).status_code == 200
    entries = requests.get(url + "/web").json()["metadata"]["managedFields"]
    assert [e for e in entries if e.get("subresource") == "scale"] == [
        {"manager": "scaler", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"}]


def test_a_crd_spec_s_struct_fields_have_no_dot_entry(fakekube) -> None:
    """A field the type's empty value already holds (a non-pointer struct: a CRD's spec and
    names) is only new below; a pointer (conversion) is new itself: ``"."`` (1.36's answer)."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    created = requests.post(fakekube.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldManager=me",
                            data=json.dumps(crd), headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    (entry,) = created.json()["metadata"]["managedFields"]
    spec = entry["fieldsV1"]["f:spec"]
    assert "." not in spec and "." not in spec["f:names"] and "." in spec["f:conversion"]


def test_consecutive_updates_merge_into_one_entry(fakekube) -> None:
    url = fakekube.url + CONFIGMAPS
    requests.post(url, data=configmap({"a": "1"}, "cm"), params={"fieldManager": "editor"})
    patch = {"Content-Type": "application/merge-patch+json"}
    requests.patch(url + "/cm", data='{"data":{"b":"2"}}', headers=patch, params={"fieldManager": "editor"})
    obj = requests.patch(url + "/cm", data='{"data":{"c":"3"}}', headers=patch, params={"fieldManager": "editor"}).json()
    assert len(obj["metadata"]["managedFields"]) == 1
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {".": {}, "f:a": {}, "f:b": {}, "f:c": {}}}


def test_apply_creates_then_conflicts_with_another_manager(fakekube) -> None:
    created = apply(fakekube, DEPLOYMENTS + "/web", deployment(2))
    assert created.status_code == 201
    assert managers(created.json())[("alice", "Apply", "")]["fieldsV1"]["f:spec"]["f:replicas"] == {}
    refused = apply(fakekube, DEPLOYMENTS + "/web", deployment(3, image="nginx:1.28"), manager="bob")
    assert refused.status_code == 409
    assert refused.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n'
                   '- .spec.template.spec.containers[name="web"].image',
        "reason": "Conflict",
        "details": {"causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.replicas"},
            {"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
             "field": '.spec.template.spec.containers[name="web"].image'}]},
        "code": 409,
    }
    forced = apply(fakekube, DEPLOYMENTS + "/web", deployment(3), manager="bob", force="true")
    assert forced.status_code == 200 and forced.json()["spec"]["replicas"] == 3
    owners = managers(forced.json())
    assert "f:replicas" not in owners[("alice", "Apply", "")]["fieldsV1"]["f:spec"]
    assert owners[("bob", "Apply", "")]["fieldsV1"]["f:spec"]["f:replicas"] == {}


def test_conflict_with_an_updater_names_its_api_version(fakekube) -> None:
    requests.post(fakekube.url + CONFIGMAPS, data=configmap({"a": "1"}), params={"fieldManager": "kubectl-edit"})
    refused = apply(fakekube, CONFIGMAPS + "/settings", configmap({"a": "2"}))
    assert refused.status_code == 409
    assert refused.json()["message"] == 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a'


def test_shared_fields_and_removal_of_what_a_manager_stops_applying(fakekube) -> None:
    apply(fakekube, CONFIGMAPS + "/settings", configmap({"a": "1", "b": "1"}))
    shared = apply(fakekube, CONFIGMAPS + "/settings", configmap({"b": "1"}), manager="bob").json()
    assert managers(shared)[("bob", "Apply", "")]["fieldsV1"] == {"f:data": {"f:b": {}}}
    after = apply(fakekube, CONFIGMAPS + "/settings", configmap({}), manager="alice").json()
    assert after["data"] == {"b": "1"}  # a removed (only alice had it), b kept (bob owns it too)


def test_apply_options_are_validated_as_upstream(fakekube) -> None:
    missing = apply(fakekube, CONFIGMAPS + "/settings", configmap({"a": "1"}), manager=None)
    assert missing.status_code == 422
    assert missing.json()["message"] == \
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    forced_merge = requests.patch(fakekube.url + CONFIGMAPS + "/settings", data="{}", params={"force": "true"},
                                  headers={"Content-Type": "application/merge-patch+json"})
    assert forced_merge.status_code == 422
    assert forced_merge.json()["message"] == \
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    cbor = requests.patch(fakekube.url + CONFIGMAPS + "/settings", data=b"\xa0", params={"fieldManager": "x"},
                          headers={"Content-Type": "application/apply-patch+cbor"})
    assert cbor.status_code == 415


def test_dry_run_apply_changes_nothing(fakekube) -> None:
    apply(fakekube, CONFIGMAPS + "/settings", configmap({"a": "1"}))
    answer = apply(fakekube, CONFIGMAPS + "/settings", configmap({"a": "2"}), dryRun="All").json()
    assert answer["data"] == {"a": "2"}
    assert requests.get(fakekube.url + CONFIGMAPS + "/settings").json()["data"] == {"a": "1"}


def test_unknown_field_in_an_applied_object_is_upstreams_500(fakekube) -> None:
    body = json.loads(configmap({"a": "1"}))
    body["spec"] = {"x": 1}
    answer = apply(fakekube, CONFIGMAPS + "/settings", json.dumps(body))
    assert answer.status_code == 500
    assert answer.json()["message"] == ("failed to create typed patch object (default/settings; /v1, Kind=ConfigMap): "
                                        ".spec: field not declared in schema")


def test_status_writes_get_a_subresource_entry(fakekube) -> None:
    apply(fakekube, DEPLOYMENTS + "/web", deployment(1))
    fakekube.settle()
    obj = requests.get(fakekube.url + DEPLOYMENTS + "/web").json()
    status = {"status": {**obj["status"], "observedGeneration": 7}}
    updated = requests.patch(fakekube.url + DEPLOYMENTS + "/web/status", data=json.dumps(status),
                             headers={"Content-Type": "application/merge-patch+json"},
                             params={"fieldManager": "my-controller"}).json()
    entry = managers(updated)[("my-controller", "Update", "status")]
    assert entry["fieldsV1"] == {"f:status": {"f:observedGeneration": {}}}
    assert list(entry)[-1] == "subresource"  # upstream's field order


def test_clients_reset_or_replace_managed_fields(fakekube) -> None:
    url = fakekube.url + CONFIGMAPS
    obj = requests.post(url, data=configmap({"a": "1"}), params={"fieldManager": "one"}).json()
    obj["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]  # invalid: the live ones stay
    kept = requests.put(url + "/settings", data=json.dumps(obj)).json()
    assert [e["manager"] for e in kept["metadata"]["managedFields"]] == ["one"]
    kept["metadata"]["managedFields"] = [{}]
    cleared = requests.put(url + "/settings", data=json.dumps(kept)).json()
    assert "managedFields" not in cleared["metadata"]


def test_custom_resources_merge_by_their_schema_list_types(fakekube) -> None:
    """A CRD version's schema types the apply: a list-map merges items by key, an atomic
    list is replaced whole, and the managers of each part are kept apart."""
    items = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
             "items": {"type": "object", "required": ["name"],
                       "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": items, "tags": {"type": "array", "items": {"type": "string"}}}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "boxes.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "boxes", "singular": "box", "kind": "Box"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    created = apply(fakekube, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/boxes.example.com",
                    json.dumps(crd), manager="installer")
    assert created.status_code == 201, created.text
    fakekube.settle()
    path = "/apis/example.com/v1/namespaces/default/boxes/b"

    def box(**spec: object) -> str:
        return json.dumps({"apiVersion": "example.com/v1", "kind": "Box",
                           "metadata": {"name": "b", "namespace": "default"}, "spec": spec})

    assert apply(fakekube, path, box(items=[{"name": "a", "size": 1}], tags=["x"])).status_code == 201
    merged = apply(fakekube, path, box(items=[{"name": "b", "size": 2}], tags=["y"]), manager="bob", force="true").json()
    assert merged["spec"] == {"items": [{"name": "a", "size": 1}, {"name": "b", "size": 2}], "tags": ["y"]}
    owners = managers(merged)
    assert owners[("alice", "Apply", "")]["fieldsV1"] == {
        "f:spec": {"f:items": {'k:{"name":"a"}': {".": {}, "f:name": {}, "f:size": {}}}}}
    assert owners[("bob", "Apply", "")]["fieldsV1"]["f:spec"]["f:tags"] == {}
    unknown = apply(fakekube, path, box(color="red"))
    assert unknown.status_code == 500
    assert unknown.json()["message"] == ("failed to create typed patch object (default/b; example.com/v1, Kind=Box): "
                                         ".spec.color: field not declared in schema")


def test_managed_fields_of_a_type_stored_in_another_version_name_the_version_written(fakekube) -> None:
    """An autoscaling/v1 HPA is stored as v2 and an events.k8s.io Event as a core Event; the
    field manager still reads the object as the client wrote it (kube-apiserver 1.36)."""
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
           "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "maxReplicas": 3}}
    created = requests.post(fakekube.url + "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
                            data=json.dumps(hpa), headers={"Content-Type": "application/json", "User-Agent": "me"})
    assert created.status_code == 201, created.text
    (entry,) = created.json()["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {"f:spec": {"f:maxReplicas": {}, "f:minReplicas": {}, "f:scaleTargetRef": {},
                                            "f:targetCPUUtilizationPercentage": {}}}
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
             "eventTime": "2025-01-01T00:00:00.000000Z", "reportingController": "example.com/c", "reportingInstance": "i",
             "action": "A", "reason": "R", "type": "Normal", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}
    created = requests.post(fakekube.url + "/apis/events.k8s.io/v1/namespaces/default/events",
                            data=json.dumps(event), headers={"Content-Type": "application/json", "User-Agent": "me"})
    assert created.status_code == 201, created.text
    (entry,) = created.json()["metadata"]["managedFields"]
    assert (entry["apiVersion"], entry["fieldsV1"]) == ("events.k8s.io/v1", {
        "f:action": {}, "f:eventTime": {}, "f:reason": {}, "f:regarding": {}, "f:reportingController": {},
        "f:reportingInstance": {}, "f:type": {}})


def test_an_object_created_untracked_is_tracked_from_its_first_apply(fakekube) -> None:
    """Upstream's skipNonAppliedManager: a minimal ConfigMap's create owns nothing, so its
    updates are not tracked either; the first apply gives what is there to
    ``before-first-apply`` and conflicts with it (kube-apiserver 1.36's answers)."""
    url = fakekube.url + CONFIGMAPS
    created = requests.post(url, data=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "bare"}}),
                            headers={"Content-Type": "application/json"})
    assert created.status_code == 201 and "managedFields" not in created.json()["metadata"]
    patched = requests.patch(url + "/bare?fieldManager=patcher", data='{"metadata":{"labels":{"team":"a"}}}',
                             headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200 and "managedFields" not in patched.json()["metadata"]
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bare", "labels": {"team": "b"}}})
    conflict = apply(fakekube, CONFIGMAPS + "/bare", body)
    assert conflict.status_code == 409
    assert conflict.json()["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "before-first-apply" using v1',
         "field": ".metadata.labels.team"}]
    applied = apply(fakekube, CONFIGMAPS + "/bare", body.replace('"team": "b"', '"owner": "alice"'))
    assert applied.status_code == 200, applied.text
    assert [(e["manager"], e["operation"], e["fieldsV1"]) for e in applied.json()["metadata"]["managedFields"]] == [
        ("alice", "Apply", {"f:metadata": {"f:labels": {"f:owner": {}}}}),
        ("before-first-apply", "Update", {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}})]


def test_a_daemonset_s_creator_owns_its_template_generation_annotation(fakekube) -> None:
    """apps/v1's conversion writes ``deprecated.daemonset.template.generation`` before the
    field manager reads the object, so the writer owns it (kube-apiserver 1.36)."""
    labels = {"app": "agent"}
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                 "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    created = requests.post(fakekube.url + "/apis/apps/v1/namespaces/default/daemonsets?fieldManager=me",
                            data=json.dumps(daemonset), headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    (entry,) = created.json()["metadata"]["managedFields"]
    assert entry["fieldsV1"]["f:metadata"] == {
        "f:annotations": {".": {}, "f:deprecated.daemonset.template.generation": {}}}


def _template_metadata_owned(fakekube) -> dict:
    labels = {"app": "a"}
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
          "spec": {"selector": labels, "template": {"metadata": {"labels": labels},
                   "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    created = requests.post(fakekube.url + "/api/v1/namespaces/default/replicationcontrollers?fieldManager=me",
                            data=json.dumps(rc), headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    (entry,) = created.json()["metadata"]["managedFields"]
    return entry["fieldsV1"]["f:spec"]["f:template"]["f:metadata"]


def test_a_template_s_zero_creation_timestamp_is_nobody_s_from_1_34(fakekube) -> None:
    """From 1.34 Go leaves a pod template's zero ``creationTimestamp`` out (``omitzero``):
    a ReplicationController's creator does not own it (kube-apiserver 1.36)."""
    assert _template_metadata_owned(fakekube) == {".": {}, "f:labels": {".": {}, "f:app": {}}}


@pytest.mark.fakekube(kubernetes_version="1.33")
def test_a_template_s_zero_creation_timestamp_is_the_creator_s_in_1_33(fakekube) -> None:
    """Up to 1.33 Go writes the zero ``creationTimestamp`` as null, and the creator owns it."""
    assert _template_metadata_owned(fakekube) == {".": {}, "f:creationTimestamp": {},
                                                  "f:labels": {".": {}, "f:app": {}}}


def _entries(fakekube, path: str) -> list[tuple[str, str, str, dict]]:
    answer = requests.get(fakekube.url + path)
    assert answer.status_code == 200, answer.text
    return [(e["manager"], e["operation"], e.get("subresource", ""), e["fieldsV1"])
            for e in answer.json()["metadata"].get("managedFields") or []]


def test_what_the_apiserver_creates_itself_is_kube_apiserver_s(fakekube) -> None:
    """Its bootstrap objects carry a ``kube-apiserver`` Update entry, as its loopback client's
    creates record them (kube-apiserver 1.36's answers); an aggregated role's rules are the
    aggregation controller's, not its."""
    assert _entries(fakekube, "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical") == [
        ("kube-apiserver", "Update", "", {"f:description": {}, "f:preemptionPolicy": {}, "f:value": {}})]
    assert _entries(fakekube, "/api/v1/namespaces/default") == [
        ("kube-apiserver", "Update", "", {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})]
    (service,) = _entries(fakekube, "/api/v1/namespaces/default/services/kubernetes")
    assert service[:3] == ("kube-apiserver", "Update", "") and "f:ipFamilyPolicy" in service[3]["f:spec"]
    (admin,) = _entries(fakekube, "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin")
    assert admin[0] == "kube-apiserver" and "f:aggregationRule" in admin[3] and "f:rules" not in admin[3]


@pytest.mark.fakekube(controllers=())  # the quota controller would write the status first
def test_the_apiserver_s_own_status_writes_are_kube_apiserver_s(fakekube) -> None:
    """ResourceQuota admission's charge and the CRD controllers' conditions are status
    writes by ``kube-apiserver``: the fields they change leave the status writer's entry."""
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
             "spec": {"hard": {"configmaps": "5"}}}
    url = fakekube.url + "/api/v1/namespaces/default/resourcequotas"
    headers = {"Content-Type": "application/json"}
    assert requests.post(url + "?fieldManager=me", data=json.dumps(quota), headers=headers).status_code == 201
    status = {**quota, "status": {"hard": {"configmaps": "5"}, "used": {"configmaps": "0"}}}
    assert requests.put(url + "/q/status?fieldManager=counter", data=json.dumps(status),
                        headers=headers).status_code == 200
    assert requests.post(fakekube.url + CONFIGMAPS, data=configmap({"a": "1"}, "charged"),
                         headers=headers).status_code == 201
    entries = _entries(fakekube, "/api/v1/namespaces/default/resourcequotas/q")
    assert ("kube-apiserver", "Update", "status", {"f:status": {"f:used": {"f:configmaps": {}}}}) in entries
    owners = [e[0] for e in entries if "f:configmaps" in (e[3].get("f:status") or {}).get("f:used", {})]
    assert owners == ["kube-apiserver"]
    # As upstream's entry once every key it set was charged: an empty f:used.
    assert ("counter", "Update", "status", {"f:status": {"f:hard": {".": {}, "f:configmaps": {}},
                                                           "f:used": {}}}) in entries
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gizmos.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    crds = fakekube.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert requests.post(crds, data=json.dumps(crd), headers=headers).status_code == 201
    fakekube.settle()
    conditions = [e for e in _entries(fakekube, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                                "gizmos.example.com") if e[0] == "kube-apiserver"]
    assert [(e[1], e[2], sorted(e[3]["f:status"])) for e in conditions] == [
        ("Update", "status", ["f:acceptedNames", "f:conditions"])]


def test_an_apply_to_scale_conflicts_with_the_replicas_owner_as_the_scale_sees_it(fakekube) -> None:
    """The ScaleHandler presents the parent's owners of replicas as owners of the Scale's
    ``.spec.replicas`` through autoscaling/v1; with force the applier takes the field over
    (an Apply entry with subresource scale and no time). Checked against kube-apiserver 1.36."""
    url = fakekube.url + DEPLOYMENTS
    labels = {"app": "web"}
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    headers = {"Content-Type": "application/json"}
    assert requests.post(url + "?fieldManager=me", data=json.dumps(body), headers=headers).status_code == 201
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    assert requests.put(url + "/web/scale?fieldManager=owner", data=json.dumps(scale), headers=headers).status_code == 200
    wanted = json.dumps(dict(scale, spec={"replicas": 6}))
    refused = apply(fakekube, DEPLOYMENTS + "/web/scale", wanted, manager="scaler")
    assert refused.status_code == 409
    assert refused.json()["message"] == ('Apply failed with 1 conflict: conflict with "owner" with subresource "scale" '
                                         "using autoscaling/v1: .spec.replicas")
    forced = apply(fakekube, DEPLOYMENTS + "/web/scale", wanted, manager="scaler", force="true")
    assert forced.status_code == 200 and forced.json()["kind"] == "Scale" and forced.json()["spec"] == {"replicas": 6}
    entries = requests.get(url + "/web").json()["metadata"]["managedFields"]
    assert [e for e in entries if e.get("subresource") == "scale"] == [
        {"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"}]
