"""The root CA certificate publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace.

Upstream's kube-controller-manager 1.33
(pkg/controller/certificates/rootcacertpublisher/publisher.go) keeps, in each namespace,
a ConfigMap ``kube-root-ca.crt`` with ``data: {ca.crt: <the cluster's CA bundle>}`` and
the ``kubernetes.io/description`` annotation, so pods can verify the apiserver (projected
service account volumes mount it). Its work queue is keyed by namespace name and fed by:

* a namespace added, or updated while its phase is Active;
* a ``kube-root-ca.crt`` ConfigMap updated or deleted (not added).

A sync creates the ConfigMap when it is missing (a create refused because the namespace is
gone or terminating is dropped, not retried), and otherwise puts back the data and the
annotation when either differs (other annotations, labels and keys a user added to
``metadata`` stay). The CA bundle is handed in by the cluster
(:mod:`fakekube.cluster.rootca`).
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects.kinds import CONFIGMAPS, NAMESPACES
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
CA_KEY = "ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


class RootCACertPublisher:
    """Keeps ``kube-root-ca.crt`` with the cluster's CA in every namespace (see the module docstring)."""

    name = "root-ca-certificate-publisher-controller"
    resources = (NAMESPACES, CONFIGMAPS)

    def __init__(self, root_ca_pem: str) -> None:
        self.root_ca_pem = root_ca_pem

    def keys_for(self, change: Change) -> Iterable[str]:
        """The namespace to sync (upstream's event handlers)."""
        if change.resource == NAMESPACES.plural:
            if change.type == ADDED:
                return [change.name]
            if change.type != DELETED and ((change.obj.get("status") or {}).get("phase") == "Active"):
                return [change.name]
            return []
        if change.name == ROOT_CA_CONFIGMAP and change.type != ADDED:
            return [change.namespace]
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        current = ctx.get(CONFIGMAPS, ROOT_CA_CONFIGMAP, namespace=key)
        if current is None:
            self._create(key, ctx)
            return
        annotations = (current.get("metadata") or {}).get("annotations") or {}
        if current.get("data") == self._data() and annotations.get(DESCRIPTION_ANNOTATION):
            return
        meta = dict(current["metadata"])
        meta["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
        ctx.client.update(CONFIGMAPS, {**current, "metadata": meta, "data": self._data()})

    def _create(self, namespace: str, ctx: Context) -> None:
        configmap = {"metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": namespace,
                                  "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                     "data": self._data()}
        try:
            ctx.client.create(CONFIGMAPS, configmap)
        except ApiError as error:
            if error.code == 404 or _namespace_terminating(error):
                return  # upstream does not retry a create into a namespace that is gone or going
            raise

    def _data(self) -> dict[str, str]:
        return {CA_KEY: self.root_ca_pem}


def _namespace_terminating(error: ApiError) -> bool:
    causes = (error.details or {}).get("causes") or []
    return error.code == 403 and any(cause.get("reason") == NAMESPACE_TERMINATING_CAUSE for cause in causes)
