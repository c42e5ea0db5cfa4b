"""Index functions the cluster's parts share, named like client-go's indexers.

A controller declares the indexes it reads (``indexes = ((PODS, POD_NODE_NAME,
pod_node_name),)``); the runtime registers each with the store once, and two parts that
read the same index share it. Each function maps an object to the index values it has.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

#: Pods by the node they are bound to (upstream informers index pods the same way).
POD_NODE_NAME = "spec.nodeName"


def pod_node_name(pod: Obj) -> list[str]:
    """The pod's node, for the ``spec.nodeName`` index (unbound pods are not indexed)."""
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if isinstance(node, str) and node else []
