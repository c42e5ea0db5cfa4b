"""The official `kubernetes` Python client against fakekube: what its users observe."""

from __future__ import annotations

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.fakekube(nodes=2)


@pytest.fixture
def core(fakekube) -> client.CoreV1Api:
    return client.CoreV1Api(fakekube.client())


@pytest.fixture
def apps(fakekube) -> client.AppsV1Api:
    return client.AppsV1Api(fakekube.client())


def configmap(name: str, labels: dict | None = None, data: dict | None = None) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data or {"k": "v"})


def deployment(name: str, replicas: int = 1) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
        },
    }


def status_of(call) -> int:
    with pytest.raises(ApiException) as info:
        call()
    return info.value.status


def test_crud_round_trip(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map("default", configmap("one"))
    assert created.metadata.uid and created.metadata.resource_version
    read = core.read_namespaced_config_map("one", "default")
    assert read.data == {"k": "v"}
    read.data = {"k": "changed"}
    replaced = core.replace_namespaced_config_map("one", "default", read)
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    core.delete_namespaced_config_map("one", "default")
    assert status_of(lambda: core.read_namespaced_config_map("one", "default")) == 404


def test_errors_carry_go_status_lines_and_headers(core: client.CoreV1Api) -> None:
    """The apiserver is a Go server: title-case reason phrases, no Server header."""
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("nope", "default")
    assert (info.value.status, info.value.reason) == (404, "Not Found")
    assert info.value.headers["Cache-Control"] == "no-cache, private"
    assert "Server" not in info.value.headers


def test_stale_update_is_a_conflict(core: client.CoreV1Api) -> None:
    first = core.create_namespaced_config_map("default", configmap("cm"))
    core.patch_namespaced_config_map("cm", "default", {"data": {"k": "2"}})
    first.data = {"k": "stale"}
    assert status_of(lambda: core.replace_namespaced_config_map("cm", "default", first)) == 409
    assert core.read_namespaced_config_map("cm", "default").data == {"k": "2"}


def test_label_selectors(core: client.CoreV1Api) -> None:
    for name, tier in [("a", "web"), ("b", "db"), ("c", "web")]:
        core.create_namespaced_config_map("default", configmap(name, {"tier": tier}))
    core.create_namespaced_config_map("default", configmap("d"))

    def names(selector: str) -> list[str]:
        items = core.list_namespaced_config_map("default", label_selector=selector).items
        return [i.metadata.name for i in items]

    # The namespace's kube-root-ca.crt (root CA publisher) has no tier label either.
    assert names("tier=web") == ["a", "c"]
    assert names("tier!=web") == ["b", "d", "kube-root-ca.crt"]
    assert names("tier in (db,web)") == ["a", "b", "c"]
    assert names("tier notin (web)") == ["b", "d", "kube-root-ca.crt"]
    assert names("tier") == ["a", "b", "c"]
    assert names("!tier") == ["d", "kube-root-ca.crt"]
    assert status_of(lambda: core.list_namespaced_config_map("default", label_selector="tier in (")) == 400


def test_field_selectors(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("a"))
    core.create_namespaced_config_map("default", configmap("b"))
    items = core.list_namespaced_config_map("default", field_selector="metadata.name=b").items
    assert [i.metadata.name for i in items] == ["b"]
    nodes = core.list_node(field_selector="metadata.name!=node-1").items
    assert [n.metadata.name for n in nodes] == ["node-2"]
    assert status_of(lambda: core.list_namespaced_config_map("default", field_selector="data.k=v")) == 400


def test_pagination_is_consistent_while_writes_continue(core: client.CoreV1Api) -> None:
    for i in range(7):
        core.create_namespaced_config_map("default", configmap(f"cm-{i}"))
    page = core.list_namespaced_config_map("default", limit=3)
    assert [i.metadata.name for i in page.items] == ["cm-0", "cm-1", "cm-2"]
    assert page.metadata.remaining_item_count == 5  # cm-3..cm-6 and the namespace's kube-root-ca.crt
    core.delete_namespaced_config_map("cm-4", "default")
    core.create_namespaced_config_map("default", configmap("cm-3a"))
    seen = [i.metadata.name for i in page.items]
    token = page.metadata._continue
    while token:
        page = core.list_namespaced_config_map("default", limit=3, _continue=token)
        assert page.metadata.resource_version == str(int(page.metadata.resource_version))
        seen += [i.metadata.name for i in page.items]
        token = page.metadata._continue
    assert seen == [f"cm-{i}" for i in range(7)] + ["kube-root-ca.crt"]


def test_watch_streams_events_and_resumes(core: client.CoreV1Api) -> None:
    start_rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("w"))
    core.patch_namespaced_config_map("w", "default", {"data": {"k": "2"}})
    core.delete_namespaced_config_map("w", "default")
    events = []
    for event in watch.Watch().stream(core.list_namespaced_config_map, "default",
                                      resource_version=start_rv, timeout_seconds=1):
        events.append((event["type"], event["object"].metadata.name))
        if len(events) == 3:
            break
    assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_watch_from_a_compacted_version_gets_410(fakekube, core: client.CoreV1Api) -> None:
    limit = fakekube.store.history.limit
    for i in range(2 * limit + 2):
        fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"x{i}"}})
    with pytest.raises(ApiException) as info:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default",
                                      resource_version="1", timeout_seconds=1):
            pass
    assert info.value.status == 410


def test_three_patch_types(core: client.CoreV1Api, apps: client.AppsV1Api) -> None:
    apps.create_namespaced_deployment("default", deployment("web"))
    # strategic merge (the client's default for dicts): containers merge by name
    apps.patch_namespaced_deployment("web", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "sidecar", "image": "busybox"}]}}}})
    containers = apps.read_namespaced_deployment("web", "default").spec.template.spec.containers
    assert [c.name for c in containers] == ["sidecar", "web"]  # upstream puts new merge-list items first
    # JSON patch (a list body)
    apps.patch_namespaced_deployment("web", "default", [
        {"op": "test", "path": "/spec/replicas", "value": 1},
        {"op": "replace", "path": "/spec/replicas", "value": 3}])
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 3
    failing = [{"op": "test", "path": "/spec/replicas", "value": 99}]
    assert status_of(lambda: apps.patch_namespaced_deployment("web", "default", failing)) == 422
    # JSON merge patch: lists are replaced whole
    apps.patch_namespaced_deployment(
        "web", "default", {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "redis"}]}}}},
        _content_type="application/merge-patch+json")
    containers = apps.read_namespaced_deployment("web", "default").spec.template.spec.containers
    assert [c.name for c in containers] == ["only"]


def test_generation_counts_spec_changes_only(apps: client.AppsV1Api) -> None:
    created = apps.create_namespaced_deployment("default", deployment("gen"))
    assert created.metadata.generation == 1
    apps.patch_namespaced_deployment("gen", "default", {"metadata": {"labels": {"x": "y"}}})
    assert apps.read_namespaced_deployment("gen", "default").metadata.generation == 1
    apps.patch_namespaced_deployment("gen", "default", {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("gen", "default").metadata.generation == 2
    # A Deployment's annotations go to its ReplicaSets: upstream's strategy counts them too.
    apps.patch_namespaced_deployment("gen", "default", {"metadata": {"annotations": {"note": "x"}}})
    assert apps.read_namespaced_deployment("gen", "default").metadata.generation == 3


def test_each_kind_keeps_its_strategy_s_generation(fakekube, core: client.CoreV1Api) -> None:
    """Upstream's generic create and update set no generation; each strategy does its own
    (kube-apiserver 1.36's answers): a ConfigMap keeps what its client sent, a PodTemplate
    starts at 1, a CSIDriver has none until its spec changes, an EndpointSlice counts labels."""
    sent = configmap("gen")
    sent.metadata.generation = 7
    assert core.create_namespaced_config_map("default", sent).metadata.generation == 7
    assert core.patch_namespaced_config_map("gen", "default", {"data": {"a": "b"}}).metadata.generation == 7
    template = {"metadata": {"name": "gen"}, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    assert core.create_namespaced_pod_template("default", template).metadata.generation == 1
    storage = client.StorageV1Api(fakekube.client())
    driver = storage.create_csi_driver({"metadata": {"name": "gen.example.com"}, "spec": {}})
    assert driver.metadata.generation is None
    patched = storage.patch_csi_driver("gen.example.com", {"spec": {"requiresRepublish": True}})
    assert patched.metadata.generation == 1
    discovery = client.DiscoveryV1Api(fakekube.client())
    discovery.create_namespaced_endpoint_slice("default", {"metadata": {"name": "gen"}, "addressType": "IPv4",
                                                           "endpoints": []})
    labelled = discovery.patch_namespaced_endpoint_slice("gen", "default", {"metadata": {"labels": {"a": "b"}}})
    assert labelled.metadata.generation == 2


@pytest.mark.fakekube(controllers=("*", "-deployment-controller"))  # it would rewrite the status set here
def test_status_and_scale_subresources(apps: client.AppsV1Api) -> None:
    apps.create_namespaced_deployment("default", deployment("sub", replicas=2))
    apps.patch_namespaced_deployment_status("sub", "default", {"status": {"replicas": 2, "readyReplicas": 1},
                                                                 "spec": {"replicas": 9}})
    read = apps.read_namespaced_deployment("sub", "default")
    assert read.status.ready_replicas == 1 and read.spec.replicas == 2
    # status sent through the main resource is ignored
    apps.patch_namespaced_deployment("sub", "default", {"status": {"readyReplicas": 7}})
    assert apps.read_namespaced_deployment("sub", "default").status.ready_replicas == 1
    scale = apps.read_namespaced_deployment_scale("sub", "default")
    assert scale.spec.replicas == 2 and scale.status.selector == "app=sub"
    apps.patch_namespaced_deployment_scale("sub", "default", {"spec": {"replicas": 5}})
    assert apps.read_namespaced_deployment("sub", "default").spec.replicas == 5
    assert status_of(lambda: apps.patch_namespaced_deployment_scale("sub", "default", {"spec": {"replicas": -1}})) == 422


@pytest.mark.parametrize("call, expected", [
    (lambda core: core.read_namespaced_pod("missing", "default"), 404),
    (lambda core: core.create_namespaced_config_map("default", configmap("Bad_Name")), 422),
    (lambda core: core.create_namespaced_config_map("no-such-ns", configmap("x")), 404),
    (lambda core: core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="default"))), 409),
    (lambda core: core.delete_namespace("kube-system"), 403),
    (lambda core: core.list_namespaced_config_map("default", label_selector="a b"), 400),
])
def test_error_status_codes(core: client.CoreV1Api, call, expected: int) -> None:
    assert status_of(lambda: call(core)) == expected


def test_dry_run_changes_nothing(core: client.CoreV1Api) -> None:
    result = core.create_namespaced_config_map("default", configmap("dry"), dry_run="All")
    assert result.metadata.name == "dry"
    assert status_of(lambda: core.read_namespaced_config_map("dry", "default")) == 404


def test_dry_run_update_and_patch_answer_the_changed_object(core: client.CoreV1Api) -> None:
    """What `kubectl diff` compares: the dry-run answer has the change, the store does not."""
    stored = core.create_namespaced_config_map("default", configmap("dry", data={"k": "1"}))
    patched = core.patch_namespaced_config_map("dry", "default", {"data": {"k": "2"}}, dry_run="All")
    assert (patched.data, patched.metadata.resource_version) == ({"k": "2"}, stored.metadata.resource_version)
    stored.data = {"k": "3"}
    assert core.replace_namespaced_config_map("dry", "default", stored, dry_run="All").data == {"k": "3"}
    assert core.read_namespaced_config_map("dry", "default").data == {"k": "1"}


def test_finalizers_hold_deletion_until_removed(core: client.CoreV1Api) -> None:
    cm = configmap("fin")
    cm.metadata.finalizers = ["example.com/hold"]
    core.create_namespaced_config_map("default", cm)
    core.delete_namespaced_config_map("fin", "default")
    held = core.read_namespaced_config_map("fin", "default")
    assert held.metadata.deletion_timestamp is not None
    # Upstream answers the object the update made (never stored): no finalizers, no manager
    # owning them any more, the resourceVersion it replaced.
    last = core.patch_namespaced_config_map("fin", "default", {"metadata": {"finalizers": None}})
    assert last.metadata.finalizers is None
    assert [entry.fields_v1 for entry in last.metadata.managed_fields] == [{"f:data": {".": {}, "f:k": {}}}]
    assert last.metadata.resource_version == held.metadata.resource_version
    assert status_of(lambda: core.read_namespaced_config_map("fin", "default")) == 404


def test_nodes_are_ready(core: client.CoreV1Api) -> None:
    nodes = core.list_node().items
    assert [n.metadata.name for n in nodes] == ["node-1", "node-2"]
    ready = {c.type: c.status for c in nodes[0].status.conditions}
    assert ready["Ready"] == "True"


def test_put_creates_only_where_upstream_allows_it(core: client.CoreV1Api) -> None:
    service = client.V1Service(metadata=client.V1ObjectMeta(name="via-put"),
                               spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)]))
    created = core.replace_namespaced_service("via-put", "default", service)
    assert created.spec.cluster_ip.startswith("10.")
    assert status_of(lambda: core.replace_namespaced_config_map("nope", "default", configmap("nope"))) == 404


def test_cluster_time_is_virtual_and_moves_only_when_advanced(fakekube, core: client.CoreV1Api) -> None:
    from datetime import timedelta

    start = fakekube.now
    first = core.create_namespaced_config_map("default", configmap("t0"))
    fakekube.advance(timedelta(minutes=5))
    second = core.create_namespaced_config_map("default", configmap("t1"))
    assert first.metadata.creation_timestamp == start
    assert second.metadata.creation_timestamp - first.metadata.creation_timestamp == timedelta(minutes=5)
    assert fakekube.now == start + timedelta(seconds=300)
