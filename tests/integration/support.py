"""What several integration tests build or compare: a whole-store snapshot, a bound pod."""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION

Obj = dict[str, Any]


def snapshot(cluster: Cluster) -> tuple[int, str]:
    """The whole store: its resourceVersion and every object of every resource."""
    store = cluster.store
    with store.lock:
        objects = {f"{group}/{resource}": store.list((group, resource))[0] for group, resource in store.resources()}
        return store.resource_version, json.dumps(objects, sort_keys=True)


def pod(name: str = "p", behaviour: Obj | None = None, node: str = "node-1", **spec: Any) -> Obj:
    """A pod bound to ``node`` (one nginx container unless ``containers`` is given), with a
    ``fakekube.io/behaviour`` annotation when ``behaviour`` is given."""
    containers = spec.pop("containers", [{"name": "c", "image": "nginx:1.27"}])
    meta: Obj = {"name": name, "namespace": "default"}
    if behaviour is not None:
        meta["annotations"] = {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": containers, **spec}}
