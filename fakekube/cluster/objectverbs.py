"""The Python face's writes and pod streams: apply, patch, update, scale, logs and exec.

Each is the HTTP API's verb called in-process (``fakekube/api/verbs``) with the options a
request's query would carry, so a Python caller gets what a client gets over HTTP — the
same defaulting, admission, managedFields, conflicts — and the same errors, raised as
:class:`~fakekube.api.machinery.errors.ApiError` (``code``, ``reason``, ``message``,
``status()`` the ``Status`` body). ``Cluster`` wraps each write in its write ticket, so its
consequences at the current instant have run when the call returns, as for a request.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.registry import SCALE, ResourceType
from fakekube.api.verbs.apiserver import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    APIServer,
    WriteOptions,
)

if TYPE_CHECKING:
    from fakekube.api.verbs import connect

Obj = dict[str, Any]

#: ``Cluster.patch``'s ``patch_type`` names (kubectl patch ``--type``) → the media type sent.
PATCH_TYPES = {"strategic": STRATEGIC_MERGE_PATCH, "merge": MERGE_PATCH, "json": JSON_PATCH}


class ExecResult(NamedTuple):
    """What a command run in a container wrote, and how it ended (like ``subprocess.run``:
    a non-zero exit is a result, not an exception)."""

    stdout: str
    stderr: str
    exit_code: int


def object_key(rt: ResourceType, obj: Any) -> tuple[str, str]:
    """(namespace, name) of a body: its metadata's (the namespace ``default`` when a
    namespaced object names none, as ``Cluster.create`` and kubectl take it)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict) or not meta.get("name"):  # over HTTP the URL names it: a caller's mistake here
        raise ValueError(f"the {rt.kind} needs metadata.name: it names the object to write")
    return scoped(rt, meta.get("namespace") or "default"), meta["name"]


def scoped(rt: ResourceType, namespace: str) -> str:
    """The namespace a request for ``rt`` is about: none for a cluster-scoped type."""
    return namespace if rt.namespaced else ""


def write_options(options_kind: str, field_manager: str = "", force: bool | None = None) -> WriteOptions:
    """The options a write's query would carry, validated as the query is (422 on ``options_kind``)."""
    query = {"fieldManager": field_manager} if field_manager else {}
    if force is not None:
        query["force"] = "true" if force else "false"
    return WriteOptions(**WriteOptions.query_fields(query, options_kind))


def check_subresource(rt: ResourceType, subresource: str) -> None:
    """A subresource the type does not serve: the 404 of a path no route serves."""
    if subresource and subresource not in rt.subresources:
        raise ApiError(404, "NotFound", "the server could not find the requested resource", {})


def require_verb(rt: ResourceType, verb: str) -> None:
    """A verb the type lacks: upstream registers no route, so the answer is a 405."""
    if not rt.supports(verb):
        raise errors.method_not_allowed()


def apply(api: APIServer, rt: ResourceType, obj: Obj, field_manager: str, force: bool, subresource: str) -> Obj:
    """Server-side apply (``PATCH`` with ``application/apply-patch+yaml``) of ``obj``."""
    require_verb(rt, "patch")
    check_subresource(rt, subresource)
    namespace, name = object_key(rt, obj)
    options = write_options("PatchOptions", field_manager, force)
    return api.patch(rt, namespace, name, APPLY_PATCH, json.dumps(obj).encode(), options, subresource).obj


def patch(api: APIServer, rt: ResourceType, namespace: str, name: str, body: Any, patch_type: str,
          field_manager: str, subresource: str) -> Obj:
    """A JSON, merge or strategic merge patch; ``patch_type`` is a name of :data:`PATCH_TYPES`."""
    media = PATCH_TYPES.get(patch_type)
    if media is None:
        raise ValueError(f"patch_type must be one of {', '.join(PATCH_TYPES)}, got {patch_type!r} "
                         "(server-side apply is Cluster.apply)")
    require_verb(rt, "patch")
    check_subresource(rt, subresource)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    options = write_options("PatchOptions", field_manager)
    return api.patch(rt, scoped(rt, namespace), name, media, raw, options, subresource).obj


def update(api: APIServer, rt: ResourceType, obj: Obj, field_manager: str, subresource: str) -> Obj:
    """``PUT``: the whole object replaced; a stale ``metadata.resourceVersion`` is a 409."""
    require_verb(rt, "update")
    check_subresource(rt, subresource)
    namespace, name = object_key(rt, obj)
    options = write_options("UpdateOptions", field_manager)
    return api.update(rt, namespace, name, deep_copy(obj), options, subresource).obj


def scale(api: APIServer, rt: ResourceType, namespace: str, name: str, replicas: int, field_manager: str) -> Obj:
    """``PUT <resource>/scale`` with ``spec.replicas``: the new autoscaling/v1 Scale."""
    from fakekube.api.verbs.subresources import write_scale  # the subresources' verbs: loaded at their first use
    check_subresource(rt, SCALE)
    body = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name}, "spec": {"replicas": replicas}}
    return write_scale(api, rt, scoped(rt, namespace), name, body, write_options("UpdateOptions", field_manager))


def logs(api: APIServer, namespace: str, name: str, container: str | None, previous: bool,
         tail_lines: int | None, since_seconds: int | None, timestamps: bool) -> str:
    """``GET pods/<name>/log`` (not followed): the container's log as text ("" before a node runs it)."""
    query: dict[str, str] = {}
    if container:
        query["container"] = container
    for key, flag in (("previous", previous), ("timestamps", timestamps)):
        if flag:
            query[key] = "true"
    for key, number in (("tailLines", tail_lines), ("sinceSeconds", since_seconds)):
        if number is not None:
            query[key] = str(number)
    from fakekube.api.verbs.subresources import Subresources
    text = Subresources(api).log(namespace, name, query)
    if text is None:
        return ""
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else str(text)


def exec_command(api: APIServer, namespace: str, name: str, command: Sequence[str], container: str | None,
                 stdin: str | bytes | None) -> ExecResult:
    """``pods/exec`` with stdout and stderr (and stdin when given), run to its end."""
    if isinstance(command, str) or not command:
        raise ValueError(f"command must be a non-empty list of arguments, e.g. ['sh', '-c', 'date'], got {command!r}")
    from fakekube.api.verbs import connect
    rt = api.registry.lookup("", "v1", "pods")
    query = {"stdout": "true", "stderr": "true", **({"stdin": "true"} if stdin is not None else {}),
             **({"container": container} if container else {})}
    pod, request = connect.check_exec(api, rt, namespace, name, "POST", query, list(command))
    try:
        if stdin is None:
            outcome = connect.run_exec(api, pod, request)
            out, err = outcome.stdout, outcome.stderr
        else:
            outcome, out, err = _with_stdin(connect.open_exec(api, pod, request), stdin)
    except LookupError as exc:  # the container is not running: the kubelet refuses the stream
        raise ApiError(500, "InternalError", f"Internal error occurred: unable to upgrade connection: {exc}") from None
    if outcome.error is not None:
        raise ApiError(500, "InternalError", connect.exec_status(outcome, request.command, True)["message"])
    return ExecResult(out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"), outcome.exit_code)


def _with_stdin(stream: connect.ExecStream, stdin: str | bytes) -> tuple[connect.ExecOutcome, bytes, bytes]:
    """Feed ``stdin`` to a session, close it, and gather what it wrote."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    chunks = [stream.start()]
    if data and chunks[-1].result is None:
        chunks.append(stream.feed(data))
    if chunks[-1].result is None:
        chunks.append(stream.close())
    result = chunks[-1].result
    assert result is not None, "a closed session has ended"
    return result, b"".join(c.stdout for c in chunks), b"".join(c.stderr for c in chunks)
