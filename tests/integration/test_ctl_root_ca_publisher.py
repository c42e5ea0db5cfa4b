"""The root CA certificate publisher (root-ca-certificate-publisher-controller): a
``kube-root-ca.crt`` ConfigMap in every namespace, put back at once when deleted or edited."""

from __future__ import annotations

import ssl

from fakekube import Cluster
from fakekube.controllers.rootcacertpublisher import DESCRIPTION

ROOT_CA = "kube-root-ca.crt"
DESCRIPTION_TEXT = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
                    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
                    "guaranteed across distributions of Kubernetes clusters.")


def root_cas(cluster: Cluster) -> dict[str, dict]:
    return {c["metadata"]["namespace"]: c
            for c in cluster.list("v1", "ConfigMap", field_selector=f"metadata.name={ROOT_CA}")}


def namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_every_namespace_has_the_ca_from_the_start() -> None:
    cluster = Cluster()
    published = root_cas(cluster)
    assert sorted(published) == ["default", "kube-node-lease", "kube-public", "kube-system"]
    (pem,) = {c["data"]["ca.crt"] for c in published.values()}
    for configmap in published.values():
        assert configmap["data"] == {"ca.crt": pem}
        assert configmap["metadata"]["annotations"] == {"kubernetes.io/description": DESCRIPTION_TEXT}
        assert configmap["metadata"]["creationTimestamp"] == "2025-01-01T00:00:00Z"
    assert DESCRIPTION == DESCRIPTION_TEXT
    (certificate,) = ssl.create_default_context(cadata=pem).get_ca_certs()
    assert certificate["subject"] == certificate["issuer"] == ((("commonName", "kubernetes"),),)
    assert (certificate["notBefore"], certificate["notAfter"]) == ("Jan  1 00:00:00 2025 GMT",
                                                                   "Dec 30 00:00:00 2034 GMT")


def test_the_ca_is_the_seed_s() -> None:
    pem = root_cas(Cluster(seed=1))["default"]["data"]["ca.crt"]
    assert root_cas(Cluster(seed=1))["default"]["data"]["ca.crt"] == pem
    assert root_cas(Cluster(seed=2))["default"]["data"]["ca.crt"] != pem


def test_a_new_namespace_gets_it_at_once() -> None:
    cluster = Cluster()
    cluster.advance(7)
    cluster.create(namespace("team"))  # create() settles: what is due at this instant has run
    configmap = root_cas(cluster)["team"]
    assert configmap["metadata"]["creationTimestamp"] == "2025-01-01T00:00:07Z"
    assert configmap["data"] == root_cas(cluster)["default"]["data"]


def test_deleted_or_edited_it_is_put_back_keeping_what_else_was_added() -> None:
    cluster = Cluster()
    original = root_cas(cluster)["default"]
    cluster.delete("v1", "ConfigMap", ROOT_CA)
    recreated = root_cas(cluster)["default"]
    assert recreated["metadata"]["uid"] != original["metadata"]["uid"]
    assert recreated["data"] == original["data"]

    rt = cluster.resource("v1", "ConfigMap")
    cluster.api.patch(rt, "default", ROOT_CA, "application/merge-patch+json",
                      b'{"metadata":{"labels":{"team":"a"},"annotations":{"kubernetes.io/description":null,'
                      b'"note":"mine"}},"data":{"ca.crt":"tampered","extra":"x"}}')
    cluster.settle()
    restored = root_cas(cluster)["default"]
    assert restored["data"] == original["data"]  # the extra key goes too: upstream sets the whole data
    assert restored["metadata"]["annotations"] == {"note": "mine", "kubernetes.io/description": DESCRIPTION_TEXT}
    assert restored["metadata"]["labels"] == {"team": "a"}
    assert restored["metadata"]["uid"] == recreated["metadata"]["uid"]


def test_an_annotation_alone_or_a_label_change_is_left_alone() -> None:
    cluster = Cluster()
    rt = cluster.resource("v1", "ConfigMap")
    cluster.api.patch(rt, "default", ROOT_CA, "application/merge-patch+json",
                      b'{"metadata":{"annotations":{"kubernetes.io/description":"my own words"}}}')
    cluster.settle()
    # Upstream only checks that the description is there, not what it says.
    assert root_cas(cluster)["default"]["metadata"]["annotations"] == {"kubernetes.io/description": "my own words"}


def test_a_terminating_namespace_is_not_retried() -> None:
    cluster = Cluster()
    cluster.create(namespace("going"))
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "held", "namespace": "going", "finalizers": ["example.com/hold"]}})
    cluster.delete("v1", "Namespace", "going", "")
    if "going" in root_cas(cluster):  # no namespace controller emptied it (yet): do it by hand
        cluster.delete("v1", "ConfigMap", ROOT_CA, "going")
    cluster.advance(10)
    assert "going" not in root_cas(cluster)
    assert not [r for r in cluster.engine.retries if r.controller == "root-ca-certificate-publisher-controller"]
    assert not cluster.internal_errors


def test_it_can_be_switched_off() -> None:
    cluster = Cluster(controllers=("*", "-root-ca-cert-publisher"))
    assert root_cas(cluster) == {}
    assert "root-ca-certificate-publisher-controller" not in cluster.controllers
