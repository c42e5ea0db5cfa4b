"""The rest of core/v1 over HTTP: ``bindings``, ``componentstatuses``, ``podtemplates``, and
the pod subresources ``ephemeralcontainers``, ``resize`` and the connect ones (exec, attach,
portforward, proxy — also of nodes and services; a node's proxy is not simulated)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.support import pod
from tests.integration.test_request_semantics import request

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PODS = "/api/v1/namespaces/default/pods"

pytestmark = pytest.mark.fakekube(nodes=1)


def body_of(exc: ApiException) -> dict:
    return dict(json.loads(exc.body))


def test_a_binding_posted_to_bindings_binds_the_pod_it_names(fakekube: Cluster) -> None:
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_pod("default", pod("web", node="", schedulerName="none"))  # no scheduler binds it
    status = core.create_namespaced_binding("default", {"metadata": {"name": "web"},
                                                        "target": {"kind": "Node", "name": "node-1"}},
                                            _preload_content=False)
    assert status.status == 201 and json.loads(status.data)["status"] == "Success"
    assert core.read_namespaced_pod("web", "default").spec.node_name == "node-1"
    with pytest.raises(ApiException) as again:
        core.create_namespaced_binding("default", {"metadata": {"name": "web"}, "target": {"name": "node-1"}})
    assert (again.value.status, body_of(again.value)["message"]) == \
        (409, 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"')
    assert request(fakekube, "GET", "/api/v1/namespaces/default/bindings")[0] == 405


def test_component_statuses_are_healthy_and_deprecated(fakekube: Cluster) -> None:
    code, listed, response = request(fakekube, "GET", "/api/v1/componentstatuses")
    assert code == 200 and response.getheader("Warning") == '299 - "v1 ComponentStatus is deprecated in v1.19+"'
    assert [(cs["metadata"]["name"], cs["conditions"]) for cs in listed["items"]] == [
        (name, [{"type": "Healthy", "status": "True", "message": "ok"}])
        for name in ("scheduler", "controller-manager", "etcd-0")]
    assert request(fakekube, "GET", "/api/v1/componentstatuses/etcd-0")[1]["kind"] == "ComponentStatus"
    code, missing, _ = request(fakekube, "GET", "/api/v1/componentstatuses/kubelet")
    assert (code, missing["message"]) == (404, 'componentstatuses "kubelet" not found')
    code, table, _ = request(fakekube, "GET", "/api/v1/componentstatuses", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Status", "Message", "Error"]
    assert table["rows"][2]["cells"] == ["etcd-0", "Healthy", "ok", ""]
    assert request(fakekube, "GET", "/api/v1/componentstatuses?watch=true")[0] == 405
    # A method the type has no route for is go-restful's 405: no handler ran, nothing warns.
    code, _, response = request(fakekube, "DELETE", "/api/v1/componentstatuses/etcd-0")
    assert (code, response.getheader("Warning")) == (405, None)


def test_pod_templates_are_defaulted_and_validated(fakekube: Cluster) -> None:
    core = client.CoreV1Api(fakekube.client())
    template = {"metadata": {"name": "t"}, "template": {"metadata": {"labels": {"app": "web"}},
                                                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    created = core.create_namespaced_pod_template("default", template)
    container = created.template.spec.containers[0]
    assert (container.image_pull_policy, created.template.spec.restart_policy) == ("Always", "Always")
    code, table, _ = request(fakekube, "GET", "/api/v1/namespaces/default/podtemplates", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Containers", "Images", "Pod Labels"]
    assert table["rows"][0]["cells"] == ["t", "c", "nginx", "app=web"]
    with pytest.raises(ApiException) as bad:
        core.create_namespaced_pod_template("default", {"metadata": {"name": "u"}, "template": {"spec": {"containers": []}}})
    assert body_of(bad.value)["details"]["causes"][0]["field"] == "template.spec.containers"


def test_ephemeral_containers_are_added_never_changed(fakekube: Cluster) -> None:
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_pod("default", pod("web"))
    debugger = {"name": "debugger", "image": "busybox", "targetContainerName": "c", "stdin": True, "tty": True}
    patched = core.patch_namespaced_pod_ephemeralcontainers(
        "web", "default", {"spec": {"ephemeralContainers": [debugger], "nodeName": "elsewhere"}})
    [added] = patched.spec.ephemeral_containers
    assert (added.name, added.image_pull_policy, added.termination_message_path) == \
        ("debugger", "Always", "/dev/termination-log")
    assert patched.spec.node_name == "node-1"  # only ephemeral containers change through this subresource
    with pytest.raises(ApiException) as changed:
        core.patch_namespaced_pod_ephemeralcontainers(
            "web", "default", {"spec": {"ephemeralContainers": [{**debugger, "image": "alpine"}]}})
    assert body_of(changed.value)["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "spec.ephemeralContainers[0]",
        "message": 'Forbidden: existing ephemeral containers "debugger" may not be changed'}]
    bad = {"name": "c", "image": "", "ports": [{"containerPort": 80}], "targetContainerName": "nope"}
    with pytest.raises(ApiException) as invalid:
        core.patch_namespaced_pod_ephemeralcontainers(
            "web", "default", [{"op": "add", "path": "/spec/ephemeralContainers/-", "value": bad}])
    assert [(c["field"], c["message"]) for c in body_of(invalid.value)["details"]["causes"]] == [
        ("spec.ephemeralContainers[1].name", 'Duplicate value: "c"'),
        ("spec.ephemeralContainers[1].image", "Required value"),
        ("spec.ephemeralContainers[1].ports", "Forbidden: cannot be set for an Ephemeral Container"),
        ("spec.ephemeralContainers[1].targetContainerName", 'Not found: "nope"')]


def test_resize_changes_only_container_resources_and_keeps_the_qos_class(fakekube: Cluster) -> None:
    core = client.CoreV1Api(fakekube.client())
    resources = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}
    core.create_namespaced_pod("default", pod("web", containers=[{"name": "c", "image": "nginx", "resources": resources}]))
    grown = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "200m", "memory": "64Mi"},
                                                                    "limits": {"memory": "256Mi"}}}],
                      "activeDeadlineSeconds": 5}}
    resized = core.patch_namespaced_pod_resize("web", "default", grown)
    assert resized.spec.containers[0].resources.requests == {"cpu": "200m", "memory": "64Mi"}
    assert resized.spec.active_deadline_seconds is None
    guaranteed = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                                         "limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    with pytest.raises(ApiException) as qos:
        core.patch_namespaced_pod_resize("web", "default", guaranteed)
    assert body_of(qos.value)["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec",  # upstream shows the class the status holds
        "message": 'Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing'}]


def test_a_negative_termination_grace_period_is_stored_as_1(fakekube: Cluster) -> None:
    """v1 → internal Pod conversion forces a negative terminationGracePeriodSeconds to 1
    (a pod's only: templates keep theirs)."""
    core = client.CoreV1Api(fakekube.client())
    created = core.create_namespaced_pod("default", pod("neg", terminationGracePeriodSeconds=-5))
    assert created.spec.termination_grace_period_seconds == 1


def test_the_connect_subresources_reach_the_pods_kubelet(fakekube: Cluster) -> None:
    """pods/proxy is answered by the container's HTTP behaviour (nginx's 404 page here);
    attach and portforward are stream protocols: a plain request is the kubelet's 400."""
    fakekube.create(pod("web"))
    fakekube.advance(2)
    code, page, response = request(fakekube, "GET", f"{PODS}/web/proxy/healthz", accept=None)
    assert (code, response.getheader("Server")) == (404, "nginx/1.29.1")
    assert "<title>404 Not Found</title>" in page
    for method, path in (("GET", f"{PODS}/web/attach?stdout=true"), ("POST", f"{PODS}/web/portforward?ports=80")):
        code, text, _ = request(fakekube, method, path, accept=None)
        assert (code, text) == (400, "unable to upgrade: missing upgrade headers in request\n")


def test_connect_checks_come_first(fakekube: Cluster) -> None:
    fakekube.create(pod("unbound", node="", schedulerName="none"))
    fakekube.create(pod("two", containers=[{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]))
    assert request(fakekube, "POST", f"{PODS}/missing/exec")[1]["message"] == 'pods "missing" not found'
    assert request(fakekube, "POST", f"{PODS}/unbound/exec")[1]["message"] == "pod unbound does not have a host assigned"
    assert request(fakekube, "POST", f"{PODS}/two/exec")[1]["message"] == \
        "a container name must be specified for pod two, choose one of: [a b]"
    assert request(fakekube, "POST", f"{PODS}/two/exec?container=z")[1]["message"] == "container z is not valid for pod two"
    assert request(fakekube, "PUT", f"{PODS}/two/exec?container=a", {})[0] == 405
    code, node, _ = request(fakekube, "GET", "/api/v1/nodes/node-1:10250/proxy/metrics")
    assert (code, node["message"]) == (400, 'nodes/proxy is not simulated by fakekube: node "node-1" cannot be connected '
                                            "to (its kubelet is simulated and serves no endpoint)")
    code, service, _ = request(fakekube, "DELETE", "/api/v1/namespaces/default/services/kubernetes/proxy")
    assert (code, service["reason"], service["message"]) == (
        503, "ServiceUnavailable", 'no endpoints available for service "kubernetes"')  # its endpoint is no pod


def test_a_cluster_scoped_object_sent_with_a_namespace_is_accepted_without_it(fakekube: Cluster) -> None:
    """Ansible's module_defaults give every object a namespace; upstream's BeforeCreate and
    BeforeUpdate clear it on a cluster-scoped object (kube-apiserver 1.36: 201 and 200)."""
    code, created, _ = request(fakekube, "POST", "/api/v1/namespaces", {"metadata": {"name": "team", "namespace": "default"}})
    assert code == 201 and "namespace" not in created["metadata"]
    code, updated, _ = request(fakekube, "PUT", "/api/v1/namespaces/team",
                               {"metadata": {"name": "team", "namespace": "other", "labels": {"a": "b"}}})
    assert code == 200 and "namespace" not in updated["metadata"] and updated["metadata"]["labels"]["a"] == "b"
    code, patched, _ = request(fakekube, "PATCH", "/api/v1/namespaces/team", {"metadata": {"namespace": "x"}},
                               content_type="application/merge-patch+json")
    assert code == 200 and "namespace" not in patched["metadata"]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader", "namespace": "default"}, "rules": []}
    code, applied, _ = request(fakekube, "PATCH", "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader?fieldManager=ansible",
                               json.dumps(role).encode(), content_type="application/apply-patch+yaml")
    assert code == 201 and "namespace" not in applied["metadata"]


def test_a_clients_pod_status_write_carries_its_labels_but_not_owner_references(fakekube: Cluster) -> None:
    """podStatusStrategy resets only spec, deletionTimestamp and ownerReferences: the labels a
    status patch sends are written, and owned by its manager (kube-apiserver 1.36's answer)."""
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_pod("default", pod("labelled", node="", schedulerName="none"))
    code, patched, _ = request(fakekube, "PATCH", "/api/v1/namespaces/default/pods/labelled/status?fieldManager=st",
                               {"metadata": {"labels": {"via": "status"}, "ownerReferences": [
                                   {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "1"}]},
                                "status": {"message": "hi"}}, "application/merge-patch+json")
    assert code == 200, patched
    assert patched["metadata"]["labels"] == {"via": "status"} and "ownerReferences" not in patched["metadata"]
    entry = [e for e in patched["metadata"]["managedFields"] if e["manager"] == "st"][0]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"]["f:metadata"] == {"f:labels": {".": {}, "f:via": {}}}
