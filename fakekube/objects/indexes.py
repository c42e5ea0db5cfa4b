"""Index functions the cluster's parts share, named like client-go's indexers.

A controller declares the indexes it reads (``indexes = ((PODS, POD_NODE_NAME,
pod_node_name),)``); the runtime registers each with the store once, and two parts that
read the same index share it. Each function maps an object to the index values it has.
"""

from __future__ import annotations

from typing import Any

from fakekube.objects.owners import controller_of

Obj = dict[str, Any]

#: Pods by the node they are bound to (upstream informers index pods the same way).
POD_NODE_NAME = "spec.nodeName"


def pod_node_name(pod: Obj) -> list[str]:
    """The pod's node, for the ``spec.nodeName`` index (unbound pods are not indexed)."""
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if isinstance(node, str) and node else []


#: Objects without a controller owner reference, by namespace: the orphans a ReplicaSet
#: (or another workload controller) may adopt, found without listing the namespace.
ORPHANS_BY_NAMESPACE = "orphanNamespace"


def orphan_namespace(obj: Obj) -> list[str]:
    """The object's namespace if no controller owns it (cluster-scoped objects: none)."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [namespace] if isinstance(namespace, str) and namespace and controller_of(obj) is None else []
