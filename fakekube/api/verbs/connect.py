"""The connect subresources: ``pods/exec``, ``pods/attach``, ``pods/portforward`` and the
``proxy`` of pods, nodes and services.

Upstream's apiserver answers them by opening a stream to the node's kubelet (or proxying to
a pod, node or service). fakekube's kubelets run no processes and listen on no port, so
after upstream's own checks (the object exists; a pod is bound to a node; a named container
is the pod's) the request is answered with a 400 ``BadRequest`` Status that says so, which
kubectl prints as ``Error from server (BadRequest): ...``. Discovery and OpenAPI list the
subresources as upstream does, so clients find them.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.registry import PROXY, ResourceType
from fakekube.api.verbs.apiserver import APIServer

Obj = dict[str, Any]

#: The methods upstream routes for each connect subresource (go-restful's connect routes).
EXEC_METHODS = ("GET", "POST")
PROXY_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")

#: Why each kind of object cannot be connected to, in the answer's message.
_WHY = {
    "pods": "its containers run in a simulated kubelet, which runs no processes",
    "nodes": "its kubelet is simulated and serves no endpoint",
    "services": "its endpoints are simulated pods, which serve no traffic",
}


def connect(api: APIServer, rt: ResourceType, namespace: str, name: str, subresource: str, method: str,
            query: dict[str, str]) -> errors.ApiError:
    """The error a connect request ends in (always raised by the caller: there is no success).

    405 for a method upstream does not route; 404 when the object is missing; for pods,
    upstream's 400s for an unbound pod or an unknown container; else 400 naming what is not
    simulated."""
    allowed = PROXY_METHODS if subresource == PROXY else EXEC_METHODS
    if method not in allowed:
        return errors.method_not_allowed()
    obj = api.get(rt, namespace, name.split(":", 1)[0] if subresource == PROXY else name)
    if rt.key == ("", "pods") and subresource != PROXY:
        problem = _pod_problem(obj, name, query)
        if problem is not None:
            return errors.bad_request(problem)
    return errors.bad_request(
        f"{rt.plural}/{subresource} is not simulated by fakekube: {rt.singular} \"{obj['metadata']['name']}\" "
        f"cannot be connected to ({_WHY.get(rt.plural, 'nothing runs behind it')})")


def _pod_problem(pod: Obj, name: str, query: dict[str, str]) -> str | None:
    """Upstream's checks before it dials the kubelet (pod REST's ``streamLocation``)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return f"pod {name} does not have a host assigned"
    containers = [c.get("name") for key in ("containers", "initContainers", "ephemeralContainers")
                  for c in spec.get(key) or []]
    container = query.get("container", "")
    if container and container not in containers:
        return f"container {container} is not valid for pod {name}"
    if not container and len(spec.get("containers") or []) > 1:
        names = " ".join(c.get("name", "") for c in spec.get("containers") or [])
        return f"a container name must be specified for pod {name}, choose one of: [{names}]"
    return None

