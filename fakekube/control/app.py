"""``/fakekube/v1/...``: move the clock, settle, reset, snapshots — JSON in and out, usable with curl.

Endpoints (all JSON; errors are Kubernetes ``Status`` objects, like the rest of the server):

* ``GET  /fakekube/v1/clock`` → ``{"now": "<RFC 3339>", "seed": N}``
* ``POST /fakekube/v1/clock/advance`` with ``{"seconds": 90}`` → the new ``clock``
* ``POST /fakekube/v1/settle`` → ``{"reconciles": N, "now": ...}``
* ``POST /fakekube/v1/reset`` → the ``clock`` of the fresh cluster
* ``GET  /fakekube/v1/errors`` → reconciles that failed: ``{"errors": [{"controller", "key",
  "time", "type", "message", "seed"}, ...], "total", "dropped", "kept"}`` — the first
  ``kept`` (1,000) in the order they happened, messages cut at 1,000 characters;
  ``dropped`` counts the later ones not kept (each is still counted in ``total``)
* ``GET  /fakekube/v1/nodes/<name>`` → the node's kubelet: ``{"node", "heartbeats":
  "running"|"stopped"|"partitioned", "conditions": {type: {status, reason, message}}, "now"}``
* ``POST /fakekube/v1/nodes/<name>/fail`` → the node's kubelet stops its heartbeats
* ``POST /fakekube/v1/nodes/<name>/recover`` → heartbeats resume at once
* ``POST /fakekube/v1/nodes/<name>/partition`` → the kubelet runs on but cannot reach the apiserver
* ``POST /fakekube/v1/nodes/<name>/heal`` → the partition ends; the kubelet reports at once
* ``POST /fakekube/v1/nodes/<name>/restart`` → the kubelet process restarts
* ``POST /fakekube/v1/nodes/<name>/conditions`` with ``{"type": "MemoryPressure", "status":
  "True"}`` (``reason``/``message`` optional) → the kubelet reports it at its next status check
* ``DELETE /fakekube/v1/nodes/<name>/conditions/<type>`` → reported healthy again
* ``GET  /fakekube/v1/webhook-addresses`` → where admission webhooks are reached:
  ``{"hooks.default.svc:443": "127.0.0.1:8443", ...}``; ``PUT`` the same mapping to replace it
  (both sides ``host:port``; targets must be loopback addresses unless the cluster config
  sets ``remote_webhook_addresses``; docs/api.md "Admission webhooks and policies")
* ``POST /fakekube/v1/snapshots`` → ``{"id": "1", "time", "resourceVersion"}``: the whole
  cluster's state kept in memory (``Cluster.snapshot``, docs/time-and-faults.md
  "Snapshots"); at most :data:`MAX_SNAPSHOTS` are kept: one more is a 409 until one is deleted.
  ``?save=true`` also writes it to ``fakekube serve --snapshot-out``'s file (``"file"`` in the
  answer; 400 without that flag; docs/snapshots.md)
* ``GET  /fakekube/v1/snapshots`` → ``{"snapshots": [...], "limit": N}``, oldest first
* ``POST /fakekube/v1/snapshots/<id>/restore`` → the ``clock`` of the restored cluster (open
  watches end with 410 Gone; clients relist)
* ``DELETE /fakekube/v1/snapshots/<id>`` → the snapshot's description, forgotten
* ``GET  /fakekube/v1/scheduling/<namespace>/<pod>`` → why the scheduler places the pod
  where it does: per node the filter that rejected it, or each score plugin's score
  (``Cluster.explain_scheduling``, fakekube/scheduler/explain.py)

Every node endpoint answers with the node's kubelet state (as ``GET`` does).

With RBAC on, every endpoint is authenticated and authorized like the Kubernetes API (a
non-resource request: ``post`` on ``/fakekube/v1/clock/advance``): no or bad credentials
are a 401, a user without the ``fakekube:control`` ClusterRole (bound to ``system:masters``)
or another role granting ``/fakekube/*`` a 403 — the REST app checks before this app runs.

Bodies are bounded: at most :data:`MAX_BODY_BYTES` (413 past it) and
:data:`MAX_BODY_DEPTH` levels of nesting (400 past it); anything else that goes wrong
(e.g. an engine that did not go quiet) is a 500 ``Status`` naming it, never a dropped
connection.

It only uses the cluster's public Python API, so everything it can do a Python test can
do too.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable

from werkzeug.wrappers import Request

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.http.response import JsonResponse
from fakekube.clock import format_rfc3339
from fakekube.cluster import checks
from fakekube.cluster.configfile import ConfigError, parse_webhook_addresses, require_loopback_targets
from fakekube.cluster.snapshot import Snapshot
from fakekube.engine.engine import printable

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster

PREFIX = "/fakekube/v1"
#: One advance may move the clock at most this far (a typo of 1e9 would otherwise spin).
MAX_ADVANCE_S = 366 * 24 * 3600
#: Snapshots the control API keeps at once (each holds a copy of the cluster's state).
MAX_SNAPSHOTS = 16
#: The largest control request body (its bodies are a few flat fields): 413 past it.
MAX_BODY_BYTES = 64 * 1024
#: The deepest nesting of ``[``/``{`` a body may have: 400 past it. Upstream's JSON decoder
#: (encoding/json, forked as sigs.k8s.io/json) stops at 10,000; control bodies are flat,
#: and Python's parser recurses, so the bound here is far lower.
MAX_BODY_DEPTH = 32

log = logging.getLogger("fakekube.control")


class ControlApp:
    """A WSGI app over a :class:`~fakekube.cluster.Cluster`."""

    def __init__(self, cluster: "Cluster", snapshot_out: str | None = None) -> None:
        self.cluster = cluster
        #: Where ``POST /snapshots?save=true`` writes (``fakekube serve --snapshot-out``).
        self.snapshot_out = snapshot_out
        self._routes: dict[tuple[str, str], Callable[[Request], dict[str, Any]]] = {
            ("GET", "/clock"): lambda _: self._clock(),
            ("POST", "/clock/advance"): self._advance,
            ("POST", "/settle"): lambda _: self._settle(),
            ("POST", "/reset"): lambda _: self._reset(),
            ("GET", "/errors"): lambda _: self._errors(),
            ("GET", "/webhook-addresses"): lambda _: dict(self.cluster.webhook_addresses),
            ("PUT", "/webhook-addresses"): self._set_webhook_addresses,
            ("GET", "/snapshots"): lambda _: self._snapshot_list(),
            ("POST", "/snapshots"): self._take_snapshot,
        }
        #: Snapshots by id, oldest first; ids count up from 1 and are never reused.
        self._snapshots: dict[str, Snapshot] = {}
        self._snapshots_taken = 0

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        request = Request(environ)
        try:
            response = self._dispatch(request)
        except ApiError as exc:
            response = _status_response(exc)
        except Exception as exc:  # an answer, never a dropped connection
            log.exception("control API %s %s failed", request.method, request.path)
            response = _status_response(ApiError(500, "InternalError",
                                                 f"{type(exc).__name__}: {printable(str(exc))}"))
        return response(environ, start_response)

    def _dispatch(self, request: Request) -> JsonResponse:
        path = request.path[len(PREFIX):] if request.path.startswith(PREFIX) else None
        if path is not None and path.startswith("/nodes/"):
            return JsonResponse(json.dumps(self._node_fault(request, path)).encode() + b"\n")
        if path is not None and path.startswith("/snapshots/"):
            return JsonResponse(json.dumps(self._snapshot_action(request, path)).encode() + b"\n")
        if path is not None and path.startswith("/scheduling/"):
            return JsonResponse(json.dumps(self._explain(request, path)).encode() + b"\n")
        paths = {p for _, p in self._routes}
        if path is None or path not in paths:
            raise ApiError(404, "NotFound", f"no control endpoint {request.path}")
        handler = self._routes.get((request.method, path))
        if handler is None:
            raise ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed on {request.path}")
        return JsonResponse(json.dumps(handler(request)).encode() + b"\n")

    def _node_fault(self, request: Request, path: str) -> dict[str, Any]:
        """``nodes/<name>[/<action>]``: read the kubelet's state, or inject or end a fault."""
        parts = path.split("/")[2:]  # [name] or [name, action] or [name, "conditions", type]
        name = parts[0]
        if len(parts) == 1 and request.method == "GET":
            return self._node_state(name, lambda: None)
        if len(parts) == 2 and parts[1] in self._node_actions():
            _require_method(request, "POST")
            return self._node_state(name, lambda: self._node_actions()[parts[1]](name))
        if len(parts) == 2 and parts[1] == "conditions":
            _require_method(request, "POST")
            condition = _condition_body(_json_body(request))
            return self._node_state(name, lambda: self.cluster.set_node_condition(name, **condition))
        if len(parts) == 3 and parts[1] == "conditions" and parts[2]:
            _require_method(request, "DELETE")
            return self._node_state(name, lambda: self.cluster.clear_node_condition(name, parts[2]))
        raise ApiError(404, "NotFound", f"no control endpoint {request.path}")

    def _explain(self, request: Request, path: str) -> dict[str, Any]:
        """``scheduling/<namespace>/<pod>``: the scheduler's explanation of that pod."""
        parts = path.split("/")[2:]
        if len(parts) != 2 or not all(parts):
            raise ApiError(404, "NotFound", f"no control endpoint {request.path}")
        _require_method(request, "GET")
        try:
            return self.cluster.explain_scheduling(parts[1], parts[0])
        except KeyError:
            raise errors.not_found("", "pods", parts[1]) from None
        except LookupError as exc:
            raise errors.bad_request(str(exc)) from None

    def _node_actions(self) -> dict[str, Callable[[str], None]]:
        return {"fail": self.cluster.fail_node, "recover": self.cluster.recover_node,
                "partition": self.cluster.partition_node, "heal": self.cluster.heal_node,
                "restart": self.cluster.restart_kubelet}

    def _node_state(self, name: str, action: Callable[[], None]) -> dict[str, Any]:
        try:
            action()
            state = self.cluster.kubelet_state(name)
        except KeyError:
            raise errors.not_found("", "nodes", name) from None
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None
        return {"node": name, **state, "now": format_rfc3339(self.cluster.now)}

    def _clock(self) -> dict[str, Any]:
        return {"now": format_rfc3339(self.cluster.now), "seed": self.cluster.config.seed}

    def _advance(self, request: Request) -> dict[str, Any]:
        body = _json_body(request)
        seconds = body.get("seconds") if isinstance(body, dict) else None
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise errors.bad_request('body must be {"seconds": <number>}')
        try:
            checks.seconds(seconds, "seconds")  # what Cluster.advance says of NaN or a negative number
        except checks.ConfigError as exc:
            raise errors.bad_request(str(exc)) from None
        if seconds > MAX_ADVANCE_S:
            raise errors.bad_request(f"seconds must be between 0 and {MAX_ADVANCE_S} (time never goes back)")
        self.cluster.advance(seconds)
        return self._clock()

    def _settle(self) -> dict[str, Any]:
        reconciles = self.cluster.settle()
        return {"reconciles": reconciles, "now": format_rfc3339(self.cluster.now)}

    def _errors(self) -> dict[str, Any]:
        """The engine's recorded reconcile failures (bounded: see the module docstring)."""
        engine = self.cluster.engine
        errors = [{"controller": e.controller, "key": e.key, "time": format_rfc3339(e.at),
                   "type": type(e.error).__name__, "message": printable(str(e.error)), "seed": engine.seed}
                  for e in list(engine.errors)]
        return {"errors": errors, "total": len(errors) + engine.errors_dropped, "dropped": engine.errors_dropped,
                "kept": engine.max_errors_kept}

    def _set_webhook_addresses(self, request: Request) -> dict[str, Any]:
        try:
            addresses = parse_webhook_addresses(_json_body(request), "body")
            if not self.cluster.config.remote_webhook_addresses:
                require_loopback_targets(addresses, "body")
        except ConfigError as exc:
            raise errors.bad_request(str(exc)) from None
        self.cluster.webhook_addresses.clear()
        self.cluster.webhook_addresses.update(addresses)
        return dict(addresses)

    # -- snapshots ----------------------------------------------------------------------------
    def _take_snapshot(self, request: Request) -> dict[str, Any]:
        """A snapshot kept in memory; with ``?save=true`` also written to the ``--snapshot-out``
        file (``"file"`` in the answer), as a SIGTERM would."""
        save = request.args.get("save", "false")
        if save not in ("true", "false"):
            raise errors.bad_request(f'save: "{save}" is not true or false')
        if save == "true" and self.snapshot_out is None:
            raise errors.bad_request("save=true needs a file: start fakekube serve with --snapshot-out FILE")
        if len(self._snapshots) >= MAX_SNAPSHOTS:
            raise ApiError(409, "Conflict", f"at most {MAX_SNAPSHOTS} snapshots are kept: "
                                            "DELETE /fakekube/v1/snapshots/<id> one first")
        snapshot = self.cluster.snapshot()
        described: dict[str, Any] = {}
        if save == "true":
            assert self.snapshot_out is not None
            described["file"] = self._save(snapshot, self.snapshot_out)
        self._snapshots_taken += 1
        snapshot_id = str(self._snapshots_taken)
        self._snapshots[snapshot_id] = snapshot
        return {**_describe(snapshot_id, snapshot), **described}

    def _save(self, snapshot: Snapshot, path: str) -> str:
        """Write ``snapshot`` to ``path`` (500 naming what could not be written)."""
        from fakekube.cluster import snapfile
        try:
            snapfile.save(path, snapfile.dumps_cluster(self.cluster, snapshot))
        except (OSError, TypeError) as exc:
            raise ApiError(500, "InternalError", f"the snapshot was not written to {path}: {exc}") from None
        return path

    def _snapshot_list(self) -> dict[str, Any]:
        return {"snapshots": [_describe(key, snap) for key, snap in self._snapshots.items()], "limit": MAX_SNAPSHOTS}

    def _snapshot_action(self, request: Request, path: str) -> dict[str, Any]:
        """``snapshots/<id>/restore`` (POST) or ``snapshots/<id>`` (DELETE)."""
        parts = path.split("/")[2:]
        snapshot = self._snapshots.get(parts[0]) if parts and parts[0] else None
        if len(parts) == 2 and parts[1] == "restore":
            _require_method(request, "POST")
        elif len(parts) == 1 and parts[0]:
            _require_method(request, "DELETE")
        else:
            raise ApiError(404, "NotFound", f"no control endpoint {request.path}")
        if snapshot is None:
            raise ApiError(404, "NotFound", f'snapshot "{parts[0]}" not found')
        if len(parts) == 1:
            del self._snapshots[parts[0]]
            return _describe(parts[0], snapshot)
        self.cluster.restore(snapshot)
        return self._clock()

    def _reset(self) -> dict[str, Any]:
        self.cluster.reset()
        return self._clock()


def attach(cluster: "Cluster", snapshot_out: str | None = None) -> ControlApp:
    """Serve the control API on ``cluster``'s URL under ``/fakekube/v1`` (``snapshot_out``:
    the file ``POST /snapshots?save=true`` writes)."""
    app = ControlApp(cluster, snapshot_out)
    cluster.mount(app)
    return app


def _describe(snapshot_id: str, snapshot: Snapshot) -> dict[str, Any]:
    return {"id": snapshot_id, "time": format_rfc3339(snapshot.time), "resourceVersion": str(snapshot.resource_version)}


def _require_method(request: Request, method: str) -> None:
    if request.method != method:
        raise ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed on {request.path}")


def _condition_body(body: Any) -> dict[str, str]:
    """``{"type": ..., "status": ..., "reason"?: ..., "message"?: ...}`` as keyword arguments."""
    fields = {"type": "condition_type", "status": "status", "reason": "reason", "message": "message"}
    if not isinstance(body, dict) or not {"type", "status"} <= set(body) or not set(body) <= set(fields):
        raise errors.bad_request('body must be {"type": ..., "status": ..., "reason"?: ..., "message"?: ...}')
    if not all(isinstance(value, str) for value in body.values()):
        raise errors.bad_request("condition fields must be strings")
    return {fields[key]: value for key, value in body.items()}


def _status_response(error: ApiError) -> JsonResponse:
    return JsonResponse(json.dumps(error.status()).encode() + b"\n", error.code)


def _json_body(request: Request) -> Any:
    """The request's JSON body, bounded in size and depth (400/413 as a ``Status``)."""
    if (request.content_length or 0) > MAX_BODY_BYTES:
        raise _too_large()
    raw = request.stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise _too_large()
    if json_depth(raw) > MAX_BODY_DEPTH:
        raise errors.bad_request(f"the body is nested too deeply (at most {MAX_BODY_DEPTH} levels)")
    try:
        return json.loads(raw) if raw.strip() else {}
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise errors.bad_request("the body is not valid JSON") from None


def _too_large() -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"the body is too large (at most {MAX_BODY_BYTES} bytes)")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in ``raw`` (strings skipped), in one pass
    and without recursion, so a hostile body is measured before any parser sees it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest
