"""``POST serviceaccounts/<name>/token``: a TokenRequest answered with a fresh token.

Follows upstream's ``TokenREST.Create`` (``pkg/registry/core/serviceaccount/storage/
token.go``) step by step: name/namespace must match the URL, the service account must
exist (404), defaults (audiences, 1 h), static validation (422, naming no object), the
bound object lookup (pod, secret or node; 404/400/409), then the token. Nothing is
stored: the answer is the request with its status filled in.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fakekube.api.auth import identity, tokens
from fakekube.api.machinery import errors
from fakekube.api.registry import WriteContext
from fakekube.api.verbs.apiserver import APIServer
from fakekube.api.wire import apply as ssa
from fakekube.api.wire import decoding, gojson
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

GROUP, VERSION, KIND = "authentication.k8s.io", "v1", "TokenRequest"
#: ``SetDefaults_TokenRequestSpec``: one hour.
DEFAULT_EXPIRATION_S = 3600
MIN_EXPIRATION_S = 10 * 60
MAX_EXPIRATION_S = 1 << 32


def _decoded(api: APIServer, body: Any) -> Obj:
    """The body as a TokenRequest, refused as upstream's decoder refuses it (400)."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"Object '{KIND}' is not a JSON object")
    problem, _ = decoding.decode_and_find_unknown(body, api.schemas, GROUP, VERSION, KIND)
    if problem:
        raise errors.bad_request(f'{KIND} in version "{VERSION}" cannot be handled as a {KIND}: {problem}')
    return body


def _check_names(meta: Obj, namespace: str, name: str) -> None:
    """The body may name the service account and namespace, but only as the URL does."""
    if meta.get("name") and meta["name"] != name:
        raise errors.invalid_object(GROUP, KIND, name, [errors.invalid(
            "metadata.name", meta["name"], "must match the service account name if specified")])
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.invalid_object(GROUP, KIND, name, [errors.invalid(
            "metadata.namespace", meta["namespace"], "must match the service account namespace if specified")])


def _validate(expiration_s: int) -> None:
    """``ValidateTokenRequest``."""
    problems = []
    if expiration_s < MIN_EXPIRATION_S:
        problems.append(errors.invalid("spec.expirationSeconds", expiration_s,
                                       "may not specify a duration less than 10 minutes"))
    if expiration_s > MAX_EXPIRATION_S:
        problems.append(errors.invalid("spec.expirationSeconds", expiration_s, "may not specify a duration larger than 2^32 seconds"))
    if problems:
        raise errors.invalid_object(GROUP, KIND, "", problems)


def _lookup(api: APIServer, plural: str, namespace: str, name: str) -> Obj:
    rt = api.registry.lookup("", "v1", plural)
    return api.get(rt, namespace if rt.namespaced else "", name)


def _binding(api: APIServer, ref: Obj, namespace: str, sa_name: str) -> tokens.Binding:
    """The bound object's claims; upstream's errors when it is missing, mismatched or unsupported."""
    api_version, kind, name = ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or ""
    group, _, version = api_version.rpartition("/")
    if group == "" and kind == "Pod":
        pod = _lookup(api, "pods", namespace, name)
        if (pod.get("spec") or {}).get("serviceAccountName") != sa_name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{sa_name}" to pod running with different serviceaccount name.')
        found = tokens.Binding("Pod", name, pod["metadata"]["uid"], _node_of(api, pod))
    elif group == "" and kind in ("Secret", "Node"):
        obj = _lookup(api, "secrets" if kind == "Secret" else "nodes", namespace, name)
        found = tokens.Binding(kind, name, obj["metadata"]["uid"])
    else:
        raise errors.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    if ref.get("uid") and ref["uid"] != found.uid:
        raise errors.conflict("", kind, name, f"the UID in the bound object reference ({ref['uid']}) does not match "
                                              "the UID in record. The object might have been deleted and then recreated")
    return found


def _node_of(api: APIServer, pod: Obj) -> Obj | None:
    """ServiceAccountTokenPodNodeInfo: a bound pod's node, by name alone if it is gone."""
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        return None
    node = api.store.get(("", "nodes"), ("", node_name))
    return {"name": node_name, "uid": node["metadata"]["uid"]} if node is not None else {"name": node_name}


def _managed_fields(api: APIServer, request: Obj, manager: str, now: str) -> list[Obj]:
    """The create handler's field manager, run on the request as decoded and defaulted (its
    ``expirationSeconds``), before the REST fills in audiences: an entry of the token
    subresource (upstream answers it, nothing is stored)."""
    message = gojson.message_name(GROUP, VERSION, KIND)
    typed = gojson.for_version(api.kubernetes_version).typed(message, request) if message else request
    try:
        fields = ssa.create_fields(typed, ssa.builtin_root(api.schemas, GROUP, VERSION, KIND), None)
    except ssa.TypedError:
        return []
    if not fields:
        return []
    (entry,) = ssa.managers.created_entry(manager, f"{GROUP}/{VERSION}", fields, now)
    return [dict(entry, subresource="token")]


def create_token(api: APIServer, ctx: WriteContext, namespace: str, name: str, body: Any, manager: str = "") -> Obj:
    """Answer one TokenRequest for service account ``namespace/name`` (under the store lock);
    with ``manager``, its managedFields as the create handler's field manager records them."""
    request = _decoded(api, body)
    raw_meta, raw_spec = request.get("metadata"), request.get("spec")
    meta: Obj = raw_meta if isinstance(raw_meta, dict) else {}
    _check_names(meta, namespace, name)
    sa = _lookup(api, "serviceaccounts", namespace, name)
    sa_uid = sa["metadata"]["uid"]
    uid_checked = ctx.release.token_request_uid
    if uid_checked and meta.get("uid") and meta["uid"] != sa_uid:
        raise errors.conflict(GROUP, KIND, name, f"the UID in the token request ({meta['uid']}) does not match "
                                                 f"the UID of the service account ({sa_uid})")
    spec: Obj = raw_spec if isinstance(raw_spec, dict) else {}
    audiences = list(spec.get("audiences") or identity.API_AUDIENCES)
    expiration_s = spec.get("expirationSeconds")
    expiration_s = DEFAULT_EXPIRATION_S if expiration_s is None else expiration_s
    _validate(expiration_s)
    ref = spec.get("boundObjectRef")
    binding = _binding(api, ref, namespace, name) if isinstance(ref, dict) else None
    token = tokens.issue(ctx, sa, expiration_s, audiences, binding)
    expires = ctx.now + timedelta(seconds=expiration_s)
    answer_meta: Obj = {"name": name, "namespace": namespace, **({"uid": sa_uid} if uid_checked else {}),
                        "creationTimestamp": format_rfc3339(ctx.now)}
    defaulted = {"spec": dict(spec, expirationSeconds=expiration_s), **{k: v for k, v in request.items() if k != "spec"}}
    managed = _managed_fields(api, defaulted, manager, format_rfc3339(ctx.now)) if manager else []
    if managed:
        answer_meta["managedFields"] = managed
    return {
        "kind": KIND, "apiVersion": f"{GROUP}/{VERSION}",
        "metadata": answer_meta,
        "spec": {"audiences": audiences, "expirationSeconds": expiration_s, "boundObjectRef": ref},
        "status": {"token": token, "expirationTimestamp": format_rfc3339(expires)},
    }

