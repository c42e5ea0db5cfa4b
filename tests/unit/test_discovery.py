"""Discovery documents compared with upstream's fixtures (api/discovery/*.json) and what
a real kube-apiserver answers (1.36 native; 1.33–1.35 emulated)."""

import json

import pytest

from fakekube.api.verbs import discovery as d
from fakekube.api.types import builtin_registry
from fakekube.objects.versions import SUPPORTED_VERSIONS, release

REG = builtin_registry()
CLIENT_GO_ACCEPT = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_version_info_is_fixed_and_the_releases(version):
    """What a native binary of the release answers: its minor as the emulated one too, and
    the minor below as the oldest it stays compatible with."""
    minor = version.split(".")[1]
    info = d.version_info(release(version), 3)
    assert (info["major"], info["minor"], info["emulationMajor"], info["emulationMinor"]) == ("1", minor, "1", minor)
    assert (info["minCompatibilityMajor"], info["minCompatibilityMinor"]) == ("1", str(int(minor) - 1))
    assert info["gitVersion"] == f"v1.{minor}.3" and len(info["gitCommit"]) == 40
    assert info == d.version_info(release(version), 3)


def test_core_api_versions():
    doc = d.core_api_versions("10.0.0.1:6443")
    assert doc["kind"] == "APIVersions" and doc["versions"] == ["v1"]
    assert doc["serverAddressByClientCIDRs"] == [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]


def test_api_group_list_and_group():
    groups = d.api_group_list(REG)["groups"]
    apps = next(g for g in groups if g["name"] == "apps")
    assert apps["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    assert all(g["name"] for g in groups)
    assert d.api_group(REG, "apps")["kind"] == "APIGroup"
    assert d.api_group(REG, "nope.example.com") is None


def test_storage_version_hash_matches_upstream():
    # Values from upstream's api/discovery fixtures.
    assert d.storage_version_hash(REG.lookup("", "v1", "pods"), REG.release) == "xPOwRZ+Yhw8="
    assert d.storage_version_hash(REG.lookup("apps", "v1", "deployments"), REG.release) == "8aSe+NMegvE="


@pytest.mark.parametrize("version,group,plural,want", [
    # the reference's answers: CRDs are stored as apiextensions v1beta1, events.k8s.io Events
    # as core Events, in every release; a new version is stored from the release after.
    ("1.33", "apiextensions.k8s.io", "customresourcedefinitions", "jfWCUB31mvA="),
    ("1.36", "apiextensions.k8s.io", "customresourcedefinitions", "jfWCUB31mvA="),
    ("1.33", "events.k8s.io", "events", "r2yiGXH7wu8="),
    ("1.36", "events.k8s.io", "events", "r2yiGXH7wu8="),
    ("1.34", "resource.k8s.io", "resourceclaims", "EJAWH5WrAYg="),
    ("1.34", "resource.k8s.io", "deviceclasses", "weQRMT6DeYM="),
    ("1.35", "resource.k8s.io", "deviceclasses", "Yk2PTc1Ybxk="),
    ("1.36", "resource.k8s.io", "resourceslices", "KsC072WgaEY="),
    ("1.34", "storage.k8s.io", "volumeattributesclasses", "Bl3MtjZ/n/s="),
    ("1.35", "storage.k8s.io", "volumeattributesclasses", "tIjydgKBC5w="),
    ("1.36", "storage.k8s.io", "volumeattributesclasses", "tIjydgKBC5w="),
    ("1.36", "admissionregistration.k8s.io", "mutatingadmissionpolicies", "LYmCf+UMVdg="),
])
def test_storage_version_hashes_follow_the_release(version, group, plural, want):
    registry = builtin_registry(release=release(version))
    listed = {r["name"]: r for r in d.api_resource_list(registry, group, "v1")["resources"]}
    assert listed[plural]["storageVersionHash"] == want


def test_apps_resource_list_like_upstream():
    doc = d.api_resource_list(REG, "apps", "v1")
    names = [r["name"] for r in doc["resources"]]
    assert names[:5] == ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale"]
    scale = next(r for r in doc["resources"] if r["name"] == "deployments/scale")
    assert scale == {"name": "deployments/scale", "singularName": "", "namespaced": True, "group": "autoscaling",
                     "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
    deploy = next(r for r in doc["resources"] if r["name"] == "deployments")
    assert deploy["shortNames"] == ["deploy"] and deploy["categories"] == ["all"] and deploy["singularName"] == "deployment"
    assert d.api_resource_list(REG, "apps", "v9") is None


def test_pod_subresources_in_core_list():
    res = {r["name"]: r for r in d.api_resource_list(REG, "", "v1")["resources"]}
    assert res["pods/log"]["kind"] == "Pod" and res["pods/log"]["verbs"] == ["get"]
    assert res["pods/binding"]["kind"] == "Binding" and res["pods/binding"]["verbs"] == ["create"]
    assert (res["pods/eviction"]["group"], res["pods/eviction"]["version"], res["pods/eviction"]["kind"]) == ("policy", "v1", "Eviction")
    assert res["namespaces"]["namespaced"] is False


@pytest.mark.parametrize("version", ["v2"])
def test_aggregated_discovery(version):
    doc = d.aggregated_discovery(REG, core=False, api_version=version)
    assert doc["apiVersion"] == f"apidiscovery.k8s.io/{version}" and doc["kind"] == "APIGroupDiscoveryList"
    apps = next(i for i in doc["items"] if i["metadata"]["name"] == "apps")
    v1 = apps["versions"][0]
    assert v1["version"] == "v1" and v1["freshness"] == "Current"
    deploy = next(r for r in v1["resources"] if r["resource"] == "deployments")
    assert deploy["responseKind"] == {"group": "", "version": "", "kind": "Deployment"}
    assert deploy["scope"] == "Namespaced" and deploy["singularResource"] == "deployment"
    assert [s["subresource"] for s in deploy["subresources"]] == ["scale", "status"]
    assert deploy["subresources"][0]["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def test_aggregated_core():
    doc = d.aggregated_discovery(REG, core=True)
    assert len(doc["items"]) == 1 and "name" not in doc["items"][0]["metadata"]
    nodes = next(r for r in doc["items"][0]["versions"][0]["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster" and nodes["shortNames"] == ["no"]
    with pytest.raises(ValueError):
        d.aggregated_discovery(REG, core=True, api_version="v1")
    with pytest.raises(ValueError):  # AggregatedDiscoveryRemoveBetaType: gone in every supported release
        d.aggregated_discovery(REG, core=True, api_version="v2beta1")


@pytest.mark.parametrize("version,null", [("1.33", True), ("1.34", False), ("1.36", False)])
def test_aggregated_group_metadata_has_a_null_creation_timestamp_up_to_1_33(version, null):
    """Go's zero ObjectMeta time is ``null`` up to 1.33, omitted from 1.34 (``omitzero``)."""
    doc = d.aggregated_discovery(builtin_registry(release=release(version)), core=False)
    apps = next(i for i in doc["items"] if i["metadata"]["name"] == "apps")
    assert apps["metadata"] == ({"name": "apps", "creationTimestamp": None} if null else {"name": "apps"})


@pytest.mark.parametrize("accept,want", [
    (CLIENT_GO_ACCEPT, "v2"),
    ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", None),
    ("application/json", None),
    ("", None),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5,"
     "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", "v2"),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0", None),
    ("application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", None),
])
def test_negotiate_discovery(accept, want):
    assert d.negotiate_discovery(accept) == want


def test_negotiate_respects_served_versions():
    assert d.negotiate_discovery(CLIENT_GO_ACCEPT, served=("v2beta1",)) == "v2beta1"


def test_content_type_and_etag():
    assert d.aggregated_content_type("v2") == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    tag = d.discovery_etag(b"{}")
    assert len(tag) == 128 and tag == tag.upper()


def test_serviceaccount_token_and_reviews_in_discovery():
    core = {r["name"]: r for r in d.api_resource_list(REG, "", "v1")["resources"]}
    assert core["serviceaccounts/token"] == {"name": "serviceaccounts/token", "singularName": "", "namespaced": True,
                                             "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest",
                                             "verbs": ["create"]}
    authz = {r["name"]: r for r in d.api_resource_list(REG, "authorization.k8s.io", "v1")["resources"]}
    # Never stored, so upstream lists no storageVersionHash.
    assert authz["selfsubjectaccessreviews"] == {"name": "selfsubjectaccessreviews", "singularName": "selfsubjectaccessreview",
                                                 "namespaced": False, "kind": "SelfSubjectAccessReview", "verbs": ["create"]}
    assert authz["localsubjectaccessreviews"]["namespaced"] is True


def test_aggregated_bodies_are_joined_from_per_group_pieces():
    """The body equals the whole document encoded; after a CRD change only its group is
    described again."""
    from fakekube.api.registry import CustomResource, ResourceType

    registry = builtin_registry()
    cache = d.AggregatedDiscovery()

    def body_is_whole(core: bool, version: str) -> None:
        data, etag = cache.body(registry.pinned(), core, version)
        assert data == json.dumps(d.aggregated_discovery(registry, core, version), separators=(",", ":")).encode()
        assert etag == d.discovery_etag(data)

    def widget(group: str) -> ResourceType:
        return ResourceType(group, "v1", "Widget", "widgets", True,
                            custom=CustomResource(f"widgets.{group}", "widget", "WidgetList", "v1"))

    for version in d.AGGREGATED_VERSIONS:
        body_is_whole(False, version)
        body_is_whole(True, version)
    for group in ("a.example.com", "b.example.com"):
        registry.set_custom(f"widgets.{group}", [widget(group)])
    body_is_whole(False, "v2")
    described = cache.pieces_built
    registry.set_custom("widgets.a.example.com", [])
    registry.set_custom("widgets.c.example.com", [widget("c.example.com")])
    body_is_whole(False, "v2")
    assert cache.pieces_built == described + 1  # c.example.com; a's is gone, b's is kept
