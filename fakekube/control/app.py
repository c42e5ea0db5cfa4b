"""``/fakekube/v1/...``: move the clock, settle, reset, snapshots — JSON in and out, usable with curl.

Endpoints are declared once, in :meth:`ControlApp._declare_routes` — method, path template,
one-line summary, body schema — and that table is the router, the index (``GET
/fakekube/v1/``, JSON or text) and the OpenAPI document (``GET /fakekube/v1/openapi.json``);
README.md lists them too (a test checks all three against the routes). All answers are
JSON; errors are Kubernetes ``Status`` objects, like the rest of the server. Details:

* ``GET /errors`` lists the first ``kept`` (1,000) failed reconciles in the order they
  happened (``{"controller", "key", "time", "type", "message", "seed"}``, messages cut at
  1,000 characters), ``dropped`` counts the later ones (each still in ``total``).
* ``PUT /webhook-addresses`` takes ``host:port`` on both sides; targets must be loopback
  addresses unless the cluster config sets ``remote_webhook_addresses`` (docs/api.md
  "Admission webhooks and policies").
* ``POST /snapshots`` keeps at most :data:`MAX_SNAPSHOTS`: one more is a 409 until one is
  deleted; ``?save=true`` also writes ``fakekube serve --snapshot-out``'s file (400 without
  that flag; docs/snapshots.md).

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

from werkzeug.wrappers import Request, Response

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.http.response import JsonResponse
from fakekube.clock import format_rfc3339
from fakekube.control import index, routes
from fakekube.control.routes import Route
from fakekube.cluster import checks
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


#: JSON Schemas of the bodies the control API reads (its OpenAPI document shows them).
ADVANCE_BODY = {"type": "object", "required": ["seconds"], "properties": {"seconds": {"type": "number", "minimum": 0}}}
CONDITION_BODY = {"type": "object", "required": ["type", "status"],
                  "properties": {key: {"type": "string"} for key in ("type", "status", "reason", "message")}}
ADDRESSES_BODY = {"type": "object", "additionalProperties": {"type": "string"},
                  "description": "host:port the apiserver would dial -> host:port it reaches"}


class ControlApp:
    """A WSGI app over a :class:`~fakekube.cluster.Cluster`."""

    def __init__(self, cluster: "Cluster", snapshot_out: str | None = None) -> None:
        self.cluster = cluster
        #: Where ``POST /snapshots?save=true`` writes (``fakekube serve --snapshot-out``).
        self.snapshot_out = snapshot_out
        #: Every endpoint, in the order the index lists them (fakekube/control/routes.py).
        self.routes: tuple[Route, ...] = self._declare_routes()
        #: Snapshots by id, oldest first; ids count up from 1 and are never reused.
        self._snapshots: dict[str, Snapshot] = {}
        self._snapshots_taken = 0

    def _declare_routes(self) -> tuple[Route, ...]:
        node_actions = (("fail", "the node's kubelet stops: no Lease renewals, no status"),
                        ("recover", "the stopped kubelet is back: heartbeats resume at once"),
                        ("partition", "the kubelet runs on but cannot reach the apiserver"),
                        ("heal", "the partition ends: the kubelet reports at once"),
                        ("restart", "the kubelet process restarts (its containers keep running)"))
        return (
            Route("GET", "/", "this index (JSON; text/plain when the client asks for text)", self._index),
            Route("GET", index.OPENAPI_PATH, "the control API's OpenAPI 3.0 document", self._openapi),
            Route("GET", "/clock", 'cluster time and seed: {"now", "seed"}', lambda *_: self._clock()),
            Route("POST", "/clock/advance", 'move cluster time forward {"seconds": N}, running what is due',
                  lambda request, _: self._advance(request), ADVANCE_BODY),
            Route("POST", "/settle", "run every reaction due now: {reconciles, now}", lambda *_: self._settle()),
            Route("POST", "/reset", "back to the initial state (open watches end)", lambda *_: self._reset()),
            Route("GET", "/errors", "reconciles that failed (first 1,000 kept, the rest counted)",
                  lambda *_: self._errors()),
            Route("GET", "/webhook-addresses", "where admission webhooks are reached: host:port -> host:port",
                  lambda *_: dict(self.cluster.webhook_addresses)),
            Route("PUT", "/webhook-addresses", "replace that mapping (loopback targets unless the config allows more)",
                  lambda request, _: self._set_webhook_addresses(request), ADDRESSES_BODY),
            Route("GET", "/nodes/{name}", "the node's kubelet: heartbeats and reported conditions",
                  lambda _, p: self._node_state(p["name"], lambda: None)),
            *(Route("POST", f"/nodes/{{name}}/{action}", summary,
                    lambda _, p, action=action: self._node_state(p["name"], lambda: self._node_actions()[action](p["name"])))
              for action, summary in node_actions),
            Route("POST", "/nodes/{name}/conditions", "the kubelet reports a condition at its next status check",
                  self._set_condition, CONDITION_BODY),
            Route("DELETE", "/nodes/{name}/conditions/{type}", "the kubelet reports that condition healthy again",
                  lambda _, p: self._node_state(p["name"], lambda: self.cluster.clear_node_condition(p["name"], p["type"]))),
            Route("GET", "/snapshots", "the snapshots kept in memory, oldest first", lambda *_: self._snapshot_list()),
            Route("POST", "/snapshots", "snapshot the whole cluster (?save=true: also to --snapshot-out's file)",
                  lambda request, _: self._take_snapshot(request)),
            Route("POST", "/snapshots/{id}/restore", "put a snapshot's state back (open watches end with 410)",
                  lambda _, p: self._restore(p["id"])),
            Route("DELETE", "/snapshots/{id}", "forget a snapshot", lambda _, p: self._forget(p["id"])),
            Route("GET", "/scheduling/{namespace}/{pod}", "why the scheduler places the pod where it does",
                  lambda _, p: self._explain(p["namespace"], p["pod"])),
            Route("GET", "/timeline", "the cluster's story over cluster time: one self-contained HTML page (SVG)",
                  lambda *_: Response(self.cluster.timeline(), content_type="text/html; charset=utf-8"),
                  produces="text/html"),
        )

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

    def _dispatch(self, request: Request) -> JsonResponse | Response:
        if request.path != PREFIX and not request.path.startswith(PREFIX + "/"):
            raise ApiError(404, "NotFound", f"no control endpoint {request.path}")
        found = routes.match(self.routes, request.method, request.path[len(PREFIX):])
        if found.route is None and found.allowed:
            raise ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed on {request.path}")
        if found.route is None:
            raise ApiError(404, "NotFound", f"no control endpoint {request.path}")
        answer = found.route.handler(request, found.params)
        if isinstance(answer, Response):
            return answer
        return JsonResponse(json.dumps(answer).encode() + b"\n")

    def _index(self, request: Request, _: dict[str, str]) -> Any:
        """JSON by default (curl's ``*/*``); text for a client that prefers text (a browser, ``Accept: text/plain``)."""
        best = request.accept_mimetypes.best_match(["application/json", "text/plain", "text/html"])
        if best in ("text/plain", "text/html"):
            return Response(index.index_text(self.routes, PREFIX), content_type="text/plain; charset=utf-8")
        return index.index(self.routes, PREFIX)

    def _openapi(self, *_: Any) -> dict[str, Any]:
        from fakekube import __version__
        return index.openapi(self.routes, PREFIX, __version__)

    def _set_condition(self, request: Request, params: dict[str, str]) -> dict[str, Any]:
        name = params["name"]
        condition = _condition_body(_json_body(request))
        return self._node_state(name, lambda: self.cluster.set_node_condition(name, **condition))

    def _explain(self, namespace: str, pod: str) -> dict[str, Any]:
        """The scheduler's explanation of that pod."""
        try:
            return self.cluster.explain_scheduling(pod, namespace)
        except KeyError:
            raise errors.not_found("", "pods", pod) from None
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
        from fakekube.cluster.configfile import parse_webhook_addresses, require_loopback_targets  # this endpoint only
        try:
            addresses = parse_webhook_addresses(_json_body(request), "body")
            if not self.cluster.config.remote_webhook_addresses:
                require_loopback_targets(addresses, "body")
        except checks.ConfigError as exc:
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

    def _kept(self, snapshot_id: str) -> Snapshot:
        snapshot = self._snapshots.get(snapshot_id)
        if snapshot is None:
            raise ApiError(404, "NotFound", f'snapshot "{snapshot_id}" not found')
        return snapshot

    def _restore(self, snapshot_id: str) -> dict[str, Any]:
        self.cluster.restore(self._kept(snapshot_id))
        return self._clock()

    def _forget(self, snapshot_id: str) -> dict[str, Any]:
        snapshot = self._kept(snapshot_id)
        del self._snapshots[snapshot_id]
        return _describe(snapshot_id, snapshot)

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
