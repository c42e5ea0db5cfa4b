"""CustomResourceDefinitions over HTTP with the official client: a CRD is accepted and
established at once, its custom resources are served (CRUD, status, scale, discovery,
Tables), and deleting it deletes its objects and stops serving them."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube.api.machinery.errors import ApiError

Obj = dict[str, Any]
GROUP = "stable.example.com"


def crd_body(plural: str = "crontabs", kind: str = "CronTab", scope: str = "Namespaced",
             versions: list[Obj] | None = None, short_names: list[str] | None = None) -> Obj:
    schema = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"cronSpec": {"type": "string"}, "image": {"type": "string"},
                                                  "replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                      "shortNames": short_names if short_names is not None else ["ct"], "categories": ["all"]},
            "versions": versions or [{
                "name": "v1", "served": True, "storage": True, "schema": schema,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                         "statusReplicasPath": ".status.replicas",
                                                         "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [
                    {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
            }],
        },
    }


def crontab(name: str, replicas: int = 1, **spec: Any) -> Obj:
    return {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "metadata": {"name": name},
            "spec": {"cronSpec": "* * * * */5", "image": "my-cron-image", "replicas": replicas, **spec}}


@pytest.fixture
def api(fakekube) -> client.ApiClient:
    return fakekube.client()


@pytest.fixture
def ext(api: client.ApiClient) -> client.ApiextensionsV1Api:
    return client.ApiextensionsV1Api(api)


@pytest.fixture
def custom(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


def error_of(call) -> ApiException:
    with pytest.raises(ApiException) as info:
        call()
    return info.value


def test_a_created_crd_is_established_at_once_with_upstreams_conditions(fakekube, ext) -> None:
    created = ext.create_custom_resource_definition(crd_body())
    assert created.status.stored_versions == ["v1"]
    assert created.spec.conversion.strategy == "None"
    crd = ext.read_custom_resource_definition(f"crontabs.{GROUP}")
    conditions = [(c.type, c.status, c.reason, c.message) for c in crd.status.conditions]
    assert conditions == [("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
                          ("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")]
    assert crd.status.accepted_names.plural == "crontabs"
    assert crd.status.accepted_names.list_kind == "CronTabList"
    assert crd.status.conditions[0].last_transition_time.isoformat() == "2025-01-01T00:00:00+00:00"


def test_custom_resources_crud_right_after_the_crd(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    made = custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", crontab("one"))
    assert made["metadata"]["generation"] == 1 and made["kind"] == "CronTab"
    got = custom.get_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one")
    got["spec"]["image"] = "other"
    replaced = custom.replace_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one", got)
    assert replaced["metadata"]["generation"] == 2
    patched = custom.patch_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one",
                                                    {"metadata": {"labels": {"a": "b"}}})
    assert patched["metadata"]["generation"] == 2 and patched["metadata"]["labels"] == {"a": "b"}
    listed = custom.list_namespaced_custom_object(GROUP, "v1", "default", "crontabs")
    assert listed["kind"] == "CronTabList"
    assert [(i["apiVersion"], i["kind"], i["metadata"]["name"]) for i in listed["items"]] == \
        [(f"{GROUP}/v1", "CronTab", "one")]
    custom.delete_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one")
    assert error_of(lambda: custom.get_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one")).status == 404


def test_status_subresource_keeps_spec_and_status_apart(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    made = custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                                  dict(crontab("one"), status={"replicas": 9}))
    assert "status" not in made  # reset on create
    status = custom.patch_namespaced_custom_object_status(GROUP, "v1", "default", "crontabs", "one",
                                                          {"status": {"replicas": 3}, "spec": {"image": "x"}})
    assert status["status"] == {"replicas": 3} and status["spec"]["image"] == "my-cron-image"
    assert status["metadata"]["generation"] == 1
    main = custom.patch_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one",
                                                 {"status": {"replicas": 7}})
    assert main["status"] == {"replicas": 3}


def test_scale_subresource_reads_and_writes_the_declared_paths(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", crontab("one", replicas=2))
    custom.patch_namespaced_custom_object_status(GROUP, "v1", "default", "crontabs", "one",
                                                 {"status": {"replicas": 2, "selector": "app=cron"}})
    scale = custom.get_namespaced_custom_object_scale(GROUP, "v1", "default", "crontabs", "one")
    assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 2, "selector": "app=cron"}
    custom.patch_namespaced_custom_object_scale(GROUP, "v1", "default", "crontabs", "one", {"spec": {"replicas": 5}})
    assert custom.get_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one")["spec"]["replicas"] == 5


def test_strategic_merge_patch_is_refused_with_415(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    fakekube.create(dict(crontab("one"), metadata={"name": "one", "namespace": "default"}))
    response = requests.patch(f"{fakekube.url}/apis/{GROUP}/v1/namespaces/default/crontabs/one",
                              data=json.dumps({"spec": {"image": "x"}}),
                              headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert response.status_code == 415
    assert response.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


def test_a_body_without_kind_or_of_another_kind_is_refused(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    url = f"{fakekube.url}/apis/{GROUP}/v1/namespaces/default/crontabs"
    missing = requests.post(url, data='{"metadata":{"name":"x"}}', headers={"Content-Type": "application/json"})
    assert missing.status_code == 400
    assert missing.json()["message"] == ("the object provided is unrecognized (must be of type CronTab): "
                                         """Object 'Kind' is missing in '{"metadata":{"name":"x"}}' """
                                         """({"metadata":{"name":"x"}})""")
    wrong = requests.post(url, json=dict(crontab("x"), kind="Other"))
    assert wrong.status_code == 422
    assert wrong.json()["message"] == 'CronTab.stable.example.com "x" is invalid: kind: Invalid value: "Other": must be CronTab'


def test_discovery_lists_custom_groups_after_the_built_in_ones(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    groups = requests.get(f"{fakekube.url}/apis").json()["groups"]
    assert groups[-1] == {"name": GROUP, "versions": [{"groupVersion": f"{GROUP}/v1", "version": "v1"}],
                          "preferredVersion": {"groupVersion": f"{GROUP}/v1", "version": "v1"}}
    resources = requests.get(f"{fakekube.url}/apis/{GROUP}/v1").json()["resources"]
    # apiextensions appends status, then scale (built-in types list theirs by name)
    assert [r["name"] for r in resources] == ["crontabs", "crontabs/status", "crontabs/scale"]
    assert resources[0]["verbs"] == ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
    assert resources[0]["shortNames"] == ["ct"] and resources[0]["categories"] == ["all"]
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    aggregated = requests.get(f"{fakekube.url}/apis", headers={"Accept": accept}).json()
    last = aggregated["items"][-1]
    assert last["metadata"]["name"] == GROUP
    entry = last["versions"][0]["resources"][0]
    assert entry["responseKind"] == {"group": GROUP, "version": "v1", "kind": "CronTab"}
    assert [s["subresource"] for s in entry["subresources"]] == ["status", "scale"]


def test_printer_columns_make_the_table(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    fakekube.create(dict(crontab("one", replicas=3), metadata={"name": "one", "namespace": "default"}))
    fakekube.advance(90)
    table = requests.get(f"{fakekube.url}/apis/{GROUP}/v1/namespaces/default/crontabs",
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Spec", "Replicas", "Age"]
    assert [c["type"] for c in table["columnDefinitions"]] == ["string", "string", "integer", "date"]
    assert [c["description"] for c in table["columnDefinitions"][1:]] == [
        f"Custom resource definition column (in JSONPath format): {path}"
        for path in (".spec.cronSpec", ".spec.replicas", ".metadata.creationTimestamp")]
    assert table["rows"][0]["cells"] == ["one", "* * * * */5", 3, "90s"]


def test_name_conflicts_are_reported_as_upstream(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    clash = crd_body(plural="crontabs2", kind="CronTab2", short_names=["ct"])
    ext.create_custom_resource_definition(clash)
    crd = ext.read_custom_resource_definition(f"crontabs2.{GROUP}")
    names = {c.type: (c.status, c.reason, c.message) for c in crd.status.conditions}
    assert names["NamesAccepted"] == ("False", "ShortNamesConflict", '"ct" is already in use')
    assert names["Established"] == ("False", "NotAccepted", "not all names are accepted")
    assert requests.get(f"{fakekube.url}/apis/{GROUP}/v1/namespaces/default/crontabs2").status_code == 404


def test_deleting_the_crd_deletes_its_objects_and_stops_serving(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    for name in ("one", "two"):
        custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", crontab(name))
    ext.delete_custom_resource_definition(f"crontabs.{GROUP}")
    assert error_of(lambda: ext.read_custom_resource_definition(f"crontabs.{GROUP}")).status == 404
    assert fakekube.store.list((GROUP, "crontabs"))[0] == []
    gone = requests.get(f"{fakekube.url}/apis/{GROUP}/v1/namespaces/default/crontabs")
    assert gone.status_code == 404
    assert GROUP not in [g["name"] for g in requests.get(f"{fakekube.url}/apis").json()["groups"]]


def test_invalid_crds_get_upstreams_messages(fakekube, ext) -> None:
    body = crd_body()
    body["metadata"]["name"] = "wrong.stable.example.com"
    body["spec"]["group"] = "nodots"
    body["spec"]["versions"][0]["storage"] = False
    error = error_of(lambda: ext.create_custom_resource_definition(body))
    assert error.status == 422
    causes = [(c["field"], c["message"]) for c in json.loads(error.body)["details"]["causes"]]
    assert ("metadata.name", 'Invalid value: "wrong.stable.example.com": must be spec.names.plural+"."+spec.group') in causes
    assert ("spec.group", 'Invalid value: "nodots": should be a domain with at least one dot') in causes
    assert any(field == "spec.versions" and message.endswith("must have exactly one version marked as storage version")
               for field, message in causes)


def test_removing_a_stored_version_from_spec_is_refused(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    crd = fakekube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"crontabs.{GROUP}", "")
    v2 = dict(crd["spec"]["versions"][0], name="v2")
    crd["spec"]["versions"] = [v2]
    response = requests.put(f"{fakekube.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{GROUP}",
                            json=crd)
    assert response.status_code == 422
    assert 'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions' in response.json()["message"]


def test_field_validation_of_unknown_fields(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    url = f"{fakekube.url}/apis/{GROUP}/v1/namespaces/default/crontabs"
    body = crontab("x", extra="no")
    strict = requests.post(url + "?fieldValidation=Strict", json=body)
    assert strict.status_code == 400
    assert strict.json()["message"] == ('CronTab in version "v1" cannot be handled as a CronTab: '
                                        'strict decoding error: unknown field "spec.extra"')
    warned = requests.post(url, json=body)
    assert warned.status_code == 201
    assert warned.headers["Warning"] == '299 - "unknown field \\"spec.extra\\""'
    assert "extra" not in warned.json()["spec"]


def test_openapi_v3_publishes_the_schema_and_follows_the_crd(fakekube, ext) -> None:
    index_before = requests.get(f"{fakekube.url}/openapi/v3").json()["paths"]
    assert f"apis/{GROUP}/v1" not in index_before
    ext.create_custom_resource_definition(crd_body())
    url = requests.get(f"{fakekube.url}/openapi/v3").json()["paths"][f"apis/{GROUP}/v1"]["serverRelativeURL"]
    doc = requests.get(fakekube.url + url).json()
    schema = doc["components"]["schemas"]["com.example.stable.v1.CronTab"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": GROUP, "kind": "CronTab", "version": "v1"}]
    assert schema["properties"]["spec"]["properties"]["cronSpec"] == {"type": "string"}
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["components"]["schemas"]
    patch = doc["paths"][f"/apis/{GROUP}/v1/namespaces/{{namespace}}/crontabs/{{name}}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    ext.delete_custom_resource_definition(f"crontabs.{GROUP}")
    assert f"apis/{GROUP}/v1" not in requests.get(f"{fakekube.url}/openapi/v3").json()["paths"]
    assert requests.get(fakekube.url + url).status_code == 404


def test_openapi_documents_give_embedded_resources_their_type_meta(fakekube, ext) -> None:
    """apiextensions' builder adds apiVersion, kind and metadata to every embedded resource
    (and requires the first two); /openapi/v2 leaves them out where unknown fields are kept."""
    body = crd_body()
    spec_props = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec_props["template"] = {"type": "object", "x-kubernetes-embedded-resource": True,
                              "properties": {"spec": {"type": "object"}}}
    spec_props["raw"] = {"type": "object", "x-kubernetes-embedded-resource": True,
                         "x-kubernetes-preserve-unknown-fields": True}
    ext.create_custom_resource_definition(body)
    v3 = requests.get(f"{fakekube.url}/openapi/v3/apis/{GROUP}/v1").json()["components"]["schemas"]
    template = v3["com.example.stable.v1.CronTab"]["properties"]["spec"]["properties"]["template"]
    assert sorted(template["properties"]) == ["apiVersion", "kind", "metadata", "spec"]
    assert template["required"] == ["kind", "apiVersion"]
    assert template["properties"]["metadata"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
        "description": "Standard object's metadata. More info: "
                       "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
    # apiextensions gives the kind's and the list's own metadata no default (built-in kinds have {})
    assert "default" not in v3["com.example.stable.v1.CronTab"]["properties"]["metadata"]
    assert "default" not in v3["com.example.stable.v1.CronTabList"]["properties"]["metadata"]
    v2 = requests.get(f"{fakekube.url}/openapi/v2").json()["definitions"]["com.example.stable.v1.CronTab"]
    assert v2["properties"]["spec"]["properties"]["raw"] == {"x-kubernetes-embedded-resource": True,
                                                             "x-kubernetes-preserve-unknown-fields": True}
    assert v2["properties"]["spec"]["properties"]["template"]["required"] == ["kind", "apiVersion"]


def test_several_versions_share_one_storage(fakekube, ext, custom) -> None:
    body = crd_body()
    v1 = body["spec"]["versions"][0]
    v1beta1 = dict(v1, name="v1beta1", storage=False)
    body["spec"]["versions"] = [v1beta1, v1]
    ext.create_custom_resource_definition(body)
    custom.create_namespaced_custom_object(GROUP, "v1beta1", "default", "crontabs",
                                           dict(crontab("one"), apiVersion=f"{GROUP}/v1beta1"))
    read = custom.get_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "one")
    assert read["apiVersion"] == f"{GROUP}/v1"
    old = custom.get_namespaced_custom_object(GROUP, "v1beta1", "default", "crontabs", "one")
    assert old["apiVersion"] == f"{GROUP}/v1beta1" and old["spec"] == read["spec"]
    group = requests.get(f"{fakekube.url}/apis/{GROUP}").json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    assert ext.read_custom_resource_definition(f"crontabs.{GROUP}").status.stored_versions == ["v1"]


def test_a_namespace_deletion_deletes_its_custom_resources(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    client.CoreV1Api(fakekube.client()).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team")))
    custom.create_namespaced_custom_object(GROUP, "v1", "team", "crontabs", crontab("one"))
    client.CoreV1Api(fakekube.client()).delete_namespace("team")
    fakekube.advance(10)
    assert fakekube.store.list((GROUP, "crontabs"))[0] == []
    assert fakekube.store.get(("", "namespaces"), ("", "team")) is None


def test_owned_custom_resources_are_garbage_collected(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    owner = client.CoreV1Api(fakekube.client()).create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner")))
    owned = crontab("child")
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                             "uid": owner.metadata.uid}]
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", owned)
    parent = crontab("parent")
    made = custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", parent)
    child_of_cr = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="dep", owner_references=[
        client.V1OwnerReference(api_version=f"{GROUP}/v1", kind="CronTab", name="parent", uid=made["metadata"]["uid"])]))
    client.CoreV1Api(fakekube.client()).create_namespaced_config_map("default", child_of_cr)
    client.CoreV1Api(fakekube.client()).delete_namespaced_config_map("owner", "default")
    custom.delete_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "parent")
    assert fakekube.store.get((GROUP, "crontabs"), ("default", "child")) is None
    assert fakekube.store.get(("", "configmaps"), ("default", "dep")) is None


def test_cluster_scoped_custom_resources_and_watch(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body(plural="clustertabs", kind="ClusterTab", scope="Cluster",
                                                   short_names=[]))
    response = requests.get(f"{fakekube.url}/apis/{GROUP}/v1/clustertabs?watch=1&timeoutSeconds=1", stream=True)
    body = dict(crontab("c1"), kind="ClusterTab")
    custom.create_cluster_custom_object(GROUP, "v1", "clustertabs", body)
    line = next(response.iter_lines())
    event = json.loads(line)
    assert event["type"] == "ADDED" and event["object"]["kind"] == "ClusterTab"
    assert event["object"]["apiVersion"] == f"{GROUP}/v1" and "namespace" not in event["object"]["metadata"]
    response.close()


def test_a_reset_forgets_custom_types(fakekube, ext) -> None:
    ext.create_custom_resource_definition(crd_body())
    assert fakekube.registry.find(GROUP, "v1", "crontabs") is not None
    fakekube.reset()
    assert fakekube.registry.find(GROUP, "v1", "crontabs") is None
    assert requests.get(f"{fakekube.url}/apis/{GROUP}/v1").status_code == 404


def test_a_crd_waits_for_its_objects_finalizers_and_refuses_creates_meanwhile(fakekube, ext, custom) -> None:
    ext.create_custom_resource_definition(crd_body())
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", held)
    ext.delete_custom_resource_definition(f"crontabs.{GROUP}")
    crd = ext.read_custom_resource_definition(f"crontabs.{GROUP}")
    assert crd.metadata.finalizers == ["customresourcecleanup.apiextensions.k8s.io"]
    # The CRD REST's first Delete sets only the timestamp (kube-apiserver 1.36: no grace period).
    assert crd.metadata.deletion_timestamp is not None and crd.metadata.deletion_grace_period_seconds is None
    terminating = next(c for c in crd.status.conditions if c.type == "Terminating")
    assert (terminating.status, terminating.reason, terminating.message) == \
        ("True", "InstanceDeletionInProgress", "CustomResource deletion is in progress")
    refused = error_of(lambda: custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", crontab("new")))
    assert refused.status == 405
    assert json.loads(refused.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "create not allowed while custom resource definition is terminating", "reason": "MethodNotAllowed",
        "details": {"group": GROUP, "kind": "crontabs"}, "code": 405}
    verbs = requests.get(f"{fakekube.url}/apis/{GROUP}/v1").json()["resources"][0]["verbs"]
    assert verbs == ["delete", "deletecollection", "get", "list", "watch"]
    custom.patch_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "held", {"metadata": {"finalizers": None}})
    fakekube.advance(5)
    assert error_of(lambda: ext.read_custom_resource_definition(f"crontabs.{GROUP}")).status == 404


def test_a_status_write_may_set_any_stored_versions_and_the_next_spec_write_checks_them(fakekube, ext) -> None:
    """``ValidateUpdateCustomResourceDefinitionStatus`` checks only the accepted names (a
    storage migrator rewrites storedVersions through status); a spec write then needs the
    storage version among them, shown as the list it got."""
    ext.create_custom_resource_definition(crd_body())
    url = f"{fakekube.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{GROUP}"
    other = requests.patch(f"{url}/status", data=json.dumps({"status": {"storedVersions": ["v9"]}}),
                           headers={"Content-Type": "application/merge-patch+json"})
    assert other.status_code == 200 and other.json()["status"]["storedVersions"] == ["v9"]
    refused = requests.patch(url, data=json.dumps({"metadata": {"labels": {"a": "b"}}}),
                             headers={"Content-Type": "application/merge-patch+json"})
    assert refused.status_code == 422 and "status.storedVersions[0]" in refused.json()["message"]
    body = crd_body()
    body["metadata"]["name"] = f"twos.{GROUP}"
    body["spec"]["names"] = {"plural": "twos", "singular": "two", "kind": "Two"}
    body["spec"]["versions"] = [dict(body["spec"]["versions"][0], name=name) for name in ("v1", "v2")]
    two = requests.post(f"{fakekube.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=body)
    assert two.status_code == 422
    assert 'status.storedVersions: Invalid value: ["v1"]: must have the storage version v2' in two.json()["message"]


def test_scale_paths_holding_another_type_are_refused_with_gos_formatting(fakekube) -> None:
    """``NestedInt64``'s accessor error, with ``%v`` and ``%T`` of the decoded value."""
    fakekube.create({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                     "metadata": {"name": f"widgets.{GROUP}"},
                     "spec": {"group": GROUP, "scope": "Namespaced",
                              "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                              "versions": [{"name": "v1", "served": True, "storage": True,
                                            "schema": {"openAPIV3Schema": {"type": "object",
                                                                           "x-kubernetes-preserve-unknown-fields": True}},
                                            "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                                                       "statusReplicasPath": ".status.replicas"}}}]}})
    for replicas, shown in (({"b": [1, 2.5], "a": None}, "map[a:<nil> b:[1 2.5]] is of the type map[string]interface {}"),
                            (None, "<nil> is of the type <nil>"), ("3", "3 is of the type string")):
        with pytest.raises(ApiError) as refused:
            fakekube.create({"apiVersion": f"{GROUP}/v1", "kind": "Widget",
                             "metadata": {"name": "w", "namespace": "default"}, "spec": {"replicas": replicas}})
        assert refused.value.status()["message"] == (
            f'Widget.{GROUP} "w" is invalid: .spec.replicas: Invalid value: 0: .spec.replicas accessor error: '
            f"{shown}, expected int64")


def test_paths_a_crd_does_not_serve_are_go_s_plain_not_found(fakekube, ext, custom) -> None:
    """The crdHandler hands a version, a resource or a path of the other scope it does not
    serve to the apiserver's NotFoundHandler (kube-apiserver 1.36: ``404 page not found``,
    text/plain); a built-in group's unknown version is go-restful's Status."""
    ext.create_custom_resource_definition(crd_body())
    ext.create_custom_resource_definition(crd_body(plural="clustertabs", kind="ClusterTab", scope="Cluster",
                                                   short_names=[]))
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", crontab("one"))
    for path in (f"/apis/{GROUP}/v9", f"/apis/{GROUP}/v9/namespaces/default/crontabs",
                 f"/apis/{GROUP}/v1/namespaces/default/nothings", f"/apis/{GROUP}/v1/crontabs/one",
                 f"/apis/{GROUP}/v1/namespaces/default/clustertabs"):
        response = requests.get(fakekube.url + path)
        assert (response.status_code, response.headers["Content-Type"], response.text) == (
            404, "text/plain; charset=utf-8", "404 page not found\n"), path
    assert requests.get(f"{fakekube.url}/apis/{GROUP}/v1/crontabs").status_code == 200  # every namespace's
    response = requests.get(f"{fakekube.url}/apis/apps/v9/deployments")
    assert (response.status_code, response.json()["details"]) == (404, {})
