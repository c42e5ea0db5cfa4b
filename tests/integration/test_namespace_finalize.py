"""``namespaces/finalize``: an update of the whole Namespace that keeps its status, validated
by ``ValidateNamespaceFinalizeUpdate`` (checked against a real kube-apiserver 1.36)."""

from __future__ import annotations

from fakekube import Cluster
from tests.integration.test_request_semantics import request

NAMESPACES = "/api/v1/namespaces"


def namespace(name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, **extra}


def test_finalize_refuses_bad_names_by_index(fakekube: Cluster) -> None:
    assert request(fakekube, "POST", NAMESPACES, namespace("doomed"))[0] == 201
    code, status, _ = request(fakekube, "PUT", f"{NAMESPACES}/doomed/finalize",
                              namespace("doomed", spec={"finalizers": ["kubernetes", "bad name"]}))
    assert code == 422
    assert [(c["field"], c["message"].split(":")[0]) for c in status["details"]["causes"]] == [
        ("spec.finalizers[1]", "Invalid value"), ("spec.finalizers[1]", "Invalid value")]
    assert status["details"]["causes"][1]["message"].endswith(
        "name is neither a standard finalizer name nor is it fully qualified")


def test_finalize_takes_the_bodys_labels_and_keeps_the_status(fakekube: Cluster) -> None:
    body = namespace("labelled")
    body["metadata"] = {"name": "labelled", "labels": {"team": "a"}}
    assert request(fakekube, "POST", NAMESPACES, body)[0] == 201
    code, finalized, _ = request(fakekube, "PUT", f"{NAMESPACES}/labelled/finalize",
                                 namespace("labelled", spec={"finalizers": ["kubernetes"]}))
    assert code == 200, finalized
    assert finalized["metadata"]["labels"] == {"kubernetes.io/metadata.name": "labelled"}
    assert finalized["spec"] == {"finalizers": ["kubernetes"]} and finalized["status"] == {"phase": "Active"}
