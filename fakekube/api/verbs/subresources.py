"""Subresources: status, scale, binding, eviction, log and a namespace's finalize.

``status`` reuses the main update path with the status rule (only status changes); so do a
CSR's ``approval`` and a pod's ``ephemeralcontainers`` and ``resize``, each with its own rule
(``Strategy.prepare_subresource``).
``scale`` presents an autoscaling/v1 Scale view of a workload's replicas; writes to it
become ordinary updates of the workload, so resourceVersions and watches stay exact.
``binding`` assigns a pod to a node once; ``token`` issues a service-account token
(``fakekube.api.verbs.tokenrequest``); ``eviction`` deletes a pod unless its PodDisruptionBudget
forbids it (``fakekube.api.verbs.eviction``); ``log`` serves what the simulated kubelet's
container wrote — bytes, or for ``follow=true`` an iterable of chunks the REST layer streams.
``finalize`` (PUT only) replaces a namespace's ``spec.finalizers``; a terminating namespace
whose last finalizer goes is removed.
"""

from __future__ import annotations

import json
from typing import Any, Callable
from urllib.parse import quote_plus

from fakekube.api import selectors
from fakekube.api.auth.identity import UserInfo
from fakekube.api.machinery import errors
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.registry import (
    APPROVAL,
    BINDING,
    EPHEMERAL_CONTAINERS,
    EVICTION,
    FINALIZE,
    LOG,
    RESIZE,
    SCALE,
    STATUS,
    TOKEN,
    ResourceType,
)
from fakekube.api.verbs import binding as binding_rules
from fakekube.api.verbs import eviction as eviction_rules
from fakekube.api.verbs import customresources, tokenrequest
from fakekube.api.verbs.apiserver import APPLY_PATCH, APIServer, WriteOptions, decoding_apply_body, parse_json
from fakekube.api.verbs.connect import container_problem
from fakekube.api.wire import patch as patching

Obj = dict[str, Any]
JSON = "application/json"


class Subresources:
    """Dispatch of subresource requests; returns (body, HTTP code, content type). A status
    write's body is its WriteResult, so its warnings (unknown fields) reach the client."""

    def __init__(self, api: APIServer) -> None:
        self.api = api

    def handle(self, method: str, rt: ResourceType, target: Any, query: dict[str, str], raw: bytes,
               media: str, decode: Callable[[], Any], user: UserInfo | None = None,
               user_agent: str = "") -> tuple[Any, int, str]:
        name, namespace, sub = target.name, target.namespace, target.subresource
        kind = "PatchOptions" if method == "PATCH" else "UpdateOptions" if method == "PUT" else "CreateOptions"
        options = WriteOptions.from_query(query, raw, kind, user_agent, user)
        if sub in (STATUS, APPROVAL, EPHEMERAL_CONTAINERS, RESIZE):  # a view of the object, written in part
            return self._status(method, rt, namespace, name, raw, media, decode, options, sub)
        if sub == SCALE:
            return self._scale(method, rt, namespace, name, raw, media, decode, options)
        if sub == BINDING and method == "POST":
            return self.bind(namespace, name, decode(), options), 201, JSON
        if sub == EVICTION and method == "POST":
            return self.evict(namespace, name, decode(), options), 201, JSON
        if sub == TOKEN and method == "POST":
            return self.create_token(namespace, name, decode(), options.manager()), 201, JSON
        if sub == FINALIZE and method == "PUT":
            return self.api.update(rt, namespace, name, decode(), options, FINALIZE).obj, 200, JSON
        if sub == LOG and method == "GET":
            logs = self.log(namespace, name, query)
            return (None, 204, "") if logs is None else (logs, 200, "text/plain")
        raise errors.method_not_allowed()

    def _status(self, method: str, rt: ResourceType, namespace: str, name: str, raw: bytes, media: str,
                decode: Callable[[], Any], options: WriteOptions, sub: str = STATUS) -> tuple[Any, int, str]:
        """GET, PUT and PATCH of a subresource that is the whole object, of which a write
        changes only the part the subresource owns (status, approval conditions, ephemeral
        containers, container resources)."""
        if method == "GET":
            return self.api.get(rt, namespace, name), 200, JSON
        if method == "PUT":
            return self.api.update(rt, namespace, name, decode(), options, sub), 200, JSON
        if method == "PATCH":
            return self.api.patch(rt, namespace, name, media, raw, options, sub), 200, JSON
        raise errors.method_not_allowed()

    # -- scale --------------------------------------------------------------
    def _scale(self, method: str, rt: ResourceType, namespace: str, name: str, raw: bytes, media: str,
               decode: Callable[[], Any], options: WriteOptions) -> tuple[Any, int, str]:
        if method == "GET":
            return scale_of(rt, self.api.get(rt, namespace, name)), 200, JSON
        if method == "PUT":
            return self._write_scale(rt, namespace, name, decode(), options), 200, JSON
        if method == "PATCH":
            if rt.custom is not None:  # the crdHandler's patch types (no strategic merge patch)
                customresources.check_patch_type(rt, media)
            if media == APPLY_PATCH:
                return apply_scale(self.api, rt, namespace, name, raw, options), 200, JSON
            current = scale_of(rt, self.api.get(rt, namespace, name))
            document = parse_json(raw)
            if media == "application/json-patch+json":
                patched = patching.apply_json_patch(current, document)
            elif media in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                patched = patching.apply_merge_patch(current, document)
            else:
                raise errors.unsupported_media_type(media)
            return self._write_scale(rt, namespace, name, patched, options), 200, JSON
        raise errors.method_not_allowed()

    def _write_scale(self, rt: ResourceType, namespace: str, name: str, scale: Any, options: WriteOptions) -> Obj:
        return write_scale(self.api, rt, namespace, name, scale, options)

    # -- pods ----------------------------------------------------------------
    def bind(self, namespace: str, name: str, binding: Any, options: WriteOptions) -> Obj:
        """Assign a pod to a node (fakekube.api.verbs.binding, shared with the scheduler)."""
        binding_rules.bind_pod(self.api, namespace, name, binding, options)
        return success()

    def evict(self, namespace: str, name: str, eviction: Any, options: WriteOptions = WriteOptions()) -> Obj:
        """Evict a pod unless its PodDisruptionBudget forbids it (fakekube.api.verbs.eviction)."""
        return eviction_rules.evict(self.api, namespace, name, eviction, options)

    def create_token(self, namespace: str, name: str, request: Any, manager: str = "") -> Obj:
        """A service-account token (TokenRequest); nothing is stored, so dryRun changes nothing."""
        with self.api.store.lock:
            return tokenrequest.create_token(self.api, self.api.write_context(), namespace, name, request, manager)

    def log(self, namespace: str, name: str, query: dict[str, str]) -> Any:
        """The container's log (text or a stream); None for a pod no node runs yet: upstream's
        ``LogLocation`` finds no location, so the apiserver answers 204 No Content."""
        rt = self.api.registry.lookup("", "v1", "pods")
        pod = self.api.get(rt, namespace, name)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers", [])]
        container = query.get("container", "")
        problem = container_problem(pod, name, container)
        if problem is not None:
            raise errors.bad_request(problem)
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if not node:
            return None
        unreachable = self.api.kubelet_unreachable(node)
        if unreachable is not None:
            address, error = unreachable
            url = f"https://{address}/containerLogs/{namespace}/{name}/{container or containers[0]}{_log_query(query)}"
            raise errors.unknown_error(500, f'Get "{url}": {error}')  # Go's url.Error, as the streamer returns it
        if self.api.pod_logs is None:
            return ""
        return self.api.pod_logs(namespace, name, container or None, query)


#: The PodLogOptions the apiserver passes on to the kubelet's containerLogs URL.
_LOG_FLAGS = ("follow", "previous", "timestamps")
_LOG_NUMBERS = ("limitBytes", "sinceSeconds", "tailLines")


def _log_query(query: dict[str, str]) -> str:
    """``LogLocation``'s query (Go's ``url.Values.Encode``: keys sorted): the options set."""
    params = {key: "true" for key in _LOG_FLAGS if query.get(key, "").lower() in ("true", "1")}
    params.update({key: query[key] for key in _LOG_NUMBERS if query.get(key)})
    if query.get("sinceTime"):
        params["sinceTime"] = query["sinceTime"]
    encoded = "&".join(f"{key}={quote_plus(value, safe='')}" for key, value in sorted(params.items()))
    return f"?{encoded}" if encoded else ""


def _set_replicas(rt: ResourceType, obj: Obj, replicas: int) -> None:
    """Put the Scale's replicas where the type keeps them (a CRD's ``specReplicasPath``)."""
    scale = rt.custom.scale if rt.custom is not None else None
    parts = scale.spec_replicas_path.strip(".").split(".") if scale is not None else ["spec", "replicas"]
    level = obj
    for part in parts[:-1]:
        if not isinstance(level.get(part), dict):
            level[part] = {}
        level = level[part]
    level[parts[-1]] = replicas


def write_scale(api: APIServer, rt: ResourceType, namespace: str, name: str, scale: Any, options: WriteOptions) -> Obj:
    """PUT ``<resource>/scale``: the Scale's replicas written where the type keeps them (a
    ``resourceVersion`` in the Scale is a precondition); returns the new Scale."""
    if not isinstance(scale, dict):
        raise errors.bad_request("the object provided is unrecognized or malformed")
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        problem = errors.invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        raise errors.invalid_object("autoscaling", "Scale", name, [problem])
    with api.store.lock:
        obj = deep_copy(api.get(rt, namespace, name))
        wanted_rv = (scale.get("metadata") or {}).get("resourceVersion")
        if wanted_rv and wanted_rv != obj["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.group, rt.plural, name, errors.STALE_OBJECT)
        _set_replicas(rt, obj, replicas)  # keeps the object's resourceVersion: a custom resource needs one
        scale_options = WriteOptions(dry_run=options.dry_run, field_manager=options.field_manager,
                                     user_agent=options.user_agent, managed_subresource=SCALE)
        updated = api.update(rt, namespace, name, obj, scale_options).obj
    return scale_of(rt, updated)


def apply_scale(api: APIServer, rt: ResourceType, namespace: str, name: str, body: bytes, options: WriteOptions) -> Obj:
    """Server-side apply to ``<resource>/scale``: the Scale's replicas applied to the parent
    where the type keeps them, owned by the manager with subresource ``scale`` (upstream's
    ScaleHandler); a conflict names the owner as the Scale sees it. Returns the new Scale."""
    config = decoding_apply_body(body)
    replicas = (config.get("spec") or {}).get("replicas") if isinstance(config.get("spec"), dict) else None
    if replicas is not None and (not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0):
        problem = errors.invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        raise errors.invalid_object("autoscaling", "Scale", name, [problem])
    parent: Obj = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": name}}
    if replicas is not None:
        _set_replicas(rt, parent, replicas)
    applied = api.patch(rt, namespace, name, APPLY_PATCH, json.dumps(parent).encode(),
                        options._replace(managed_subresource=SCALE))
    return scale_of(rt, applied.obj)


def _custom_scale(rt: ResourceType, obj: Obj, scale_meta: Obj) -> Obj:
    """``scaleFromCustomResource``: replicas and selector read from the CRD's scale paths
    (0 when absent; the selector only when it is a string)."""
    paths = rt.custom.scale if rt.custom is not None else None
    assert paths is not None, "only a custom type with a scale subresource gets here"
    spec_replicas = _at(obj, paths.spec_replicas_path)
    status: Obj = {"replicas": _at(obj, paths.status_replicas_path) or 0}
    selector = _at(obj, paths.label_selector_path) if paths.label_selector_path else None
    if isinstance(selector, str) and selector:
        status["selector"] = selector
    spec = {"replicas": spec_replicas} if spec_replicas else {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec, "status": status}


def _at(obj: Obj, path: str) -> Any:
    value: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def scale_of(rt: ResourceType, obj: Obj) -> Obj:
    """The autoscaling/v1 Scale view of a workload."""
    meta = obj.get("metadata") or {}
    if rt.custom is not None:
        scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
        return _custom_scale(rt, obj, scale_meta)
    spec = obj.get("spec") or {}
    selector = spec.get("selector") or {}
    if rt.key == ("", "replicationcontrollers"):
        selector_text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    else:
        selector_text = selectors.selector_to_string(selector)
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": selector_text},
    }


def success() -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
