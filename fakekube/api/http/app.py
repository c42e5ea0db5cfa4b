"""The WSGI application: Kubernetes REST over :class:`~fakekube.api.verbs.apiserver.APIServer`.

One generic handler set serves every resource type in the registry (STYLE.md: one
registry, no route file per kind). Errors of any kind leave as ``Status`` objects:
an :class:`ApiError` with its upstream code, anything unexpected as a 500 Status —
never a traceback — and it is recorded so the test that caused it can see it.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from itertools import repeat
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol, Union

from werkzeug.wrappers import Request, Response

from fakekube.api import table
from fakekube.api.auth.attributes import request_attributes
from fakekube.api.auth.authn import Authenticator, unauthorized
from fakekube.api.auth.authorizer import RBAC, authorize, forbidden
from fakekube.api.auth.identity import ADMIN, ANONYMOUS, API_AUDIENCES, ISSUER, UserInfo
from fakekube.api.auth import impersonation, tokens
from fakekube.api.http import metrics as server_metrics
from fakekube.api.http import negotiation, routing
from fakekube.api.http.negotiation import Representation
from fakekube.api.http.request import RequestView
from fakekube.api.http.response import JsonResponse, status_line
from fakekube.api.http.server import CLIENT_CERT_USER, CLIENT_GONE, HEADER_LINES
from fakekube.api.http.watch import DISCONNECTED, POLL_INTERVAL_S, Watch, WatchRequest
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.params import query_bool
from fakekube.api.machinery.warning import WarningRecorder
from fakekube.api.registry import (
    APPROVAL,
    ATTACH,
    BINDING,
    CONNECT_SUBRESOURCES,
    EPHEMERAL_CONTAINERS,
    EVICTION,
    EXEC,
    FINALIZE,
    LOG,
    PORTFORWARD,
    PROXY,
    RESIZE,
    SCALE,
    STATUS,
    TOKEN,
    Registry,
    RegistryView,
    ResourceType,
)
from fakekube.api.verbs import deletion, discovery, encoding, objectmeta
from fakekube.api.verbs.apiserver import PATCH_TYPES, APIServer, WriteOptions, WriteResult
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.objects.syntax import go_quote
from fakekube.api.verbs.listing import ListOptions
from fakekube.api.wire import decoding, fieldvalidation, schema

# The OpenAPI documents' builders, the subresources' verbs and the connect verbs load with
# the first request that needs them: a server's first answers do not (docs/performance.md
# "Lazy apiserver imports").
if TYPE_CHECKING:
    from fakekube.api.verbs import openapi_v2
    from fakekube.api.verbs.openapi import OpenAPIV3
    from fakekube.api.verbs.openapi_custom import CustomDocuments
    from fakekube.api.verbs.subresources import Subresources

Obj = dict[str, Any]
WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


class WriteTracker(Protocol):
    """Who runs a write's consequences before it is answered (the cluster's engine: see
    fakekube/engine/tickets.py). ``begin_write`` runs on the request's thread before the
    write, ``end_write`` with what it returned after it, before the response leaves."""

    def begin_write(self) -> object: ...

    def end_write(self, write: Any) -> None: ...

#: What handlers return: werkzeug's Response, or the lean one for finished JSON bytes.
AnyResponse = Union[Response, JsonResponse]

#: Upstream's limit on a request body (apiserver MaxRequestBodyBytes): 3 MiB.
MAX_BODY_BYTES = 3 * 1024 * 1024
#: Concurrent watch streams served at once; the next one gets 429 TooManyRequests. A slot
#: is freed when its stream ends: timeout, a failed write, or a client seen to have gone
#: (polled every ``watch_check_interval_s`` of wall clock while the watch waits).
MAX_WATCHES = 1000

#: The core ``bindings`` resource: a POST binds the pod the Binding names (upstream's BindingREST).
BINDINGS = ("", "bindings")
WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
#: The methods of each built-in subresource's routes (no route for another: 405).
_SUBRESOURCE_METHODS = {
    STATUS: ("GET", "PUT", "PATCH"), SCALE: ("GET", "PUT", "PATCH"), APPROVAL: ("GET", "PUT", "PATCH"),
    EPHEMERAL_CONTAINERS: ("GET", "PUT", "PATCH"), RESIZE: ("GET", "PUT", "PATCH"), FINALIZE: ("PUT",),
    BINDING: ("POST",), EVICTION: ("POST",), TOKEN: ("POST",), LOG: ("GET",),
}
HEALTH_PATHS = ("/healthz", "/readyz", "/livez")
#: ServiceAccountIssuerDiscovery's paths, and what the keys are served as.
OIDC_CONFIGURATION_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
JWKS_CONTENT_TYPE = "application/jwk-set+json"
#: Where the control API (``fakekube/control``, mounted as the fallback app) is served.
CONTROL_PREFIX = "/fakekube/"
#: Where the request's user (after authentication and impersonation) waits for the handlers.
USER_KEY = "fakekube.user"
#: The request's warning recorder, made by its first warning (upstream keeps one in each
#: request's context): every warning passes it, so the headers are deduplicated and bounded.
WARNINGS_KEY = "fakekube.warnings"
#: How ``/metrics`` counts the request (a :class:`server_metrics.RequestInfo`), set by the
#: handler upstream instruments; absent: not counted (unknown paths, refused requests).
METRICS_KEY = "fakekube.metrics"

#: The checks ``?verbose`` lists (a subset of upstream's: the ones that mean something here).
HEALTH_CHECKS = {"healthz": ("ping", "log", "etcd"), "livez": ("ping", "log", "etcd"),
                 "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", "shutdown")}


class RestApp:
    """Kubernetes REST semantics as a WSGI callable."""

    def __init__(self, apiserver: APIServer, fallback: WSGIApp | None = None,
                 max_body_bytes: int = MAX_BODY_BYTES, max_watches: int = MAX_WATCHES,
                 writes: WriteTracker | None = None) -> None:
        self.api = apiserver
        self.registry = apiserver.registry
        self.fallback = fallback
        #: Opened before every write request and closed before its response leaves (the
        #: cluster's engine runs the write's consequences, so a client's next call sees them).
        self.writes = writes
        self.max_body_bytes = max_body_bytes
        self.stopping = threading.Event()
        self.internal_errors: list[BaseException] = []
        self.max_watches = max_watches
        #: How often a waiting watch checks that its client is still there (wall seconds).
        self.watch_check_interval_s = POLL_INTERVAL_S
        self._watches_open = 0
        self._watch_lock = threading.Lock()
        self._subresource_verbs: Subresources | None = None
        self._custom_openapi: CustomDocuments | None = None
        self._aggregated_discovery = discovery.AggregatedDiscovery()
        #: Who requests are (docs/api.md "Authentication and authorization"); the cluster sets it.
        self.authenticator = Authenticator()
        #: ``GET /metrics``'s series (the cluster adds its engine's queues).
        self.server_metrics = server_metrics.ServerMetrics(lambda: self.api.kubernetes_version,
                                                           lambda: self.registry.pinned(), lambda: self.api.store)

    @property
    def _subresources(self) -> Subresources:
        """The subresources' verbs over the apiserver served now, made at the first
        subresource request (a race makes two alike: either serves)."""
        verbs = self._subresource_verbs
        if verbs is None or verbs.api is not self.api:
            from fakekube.api.verbs.subresources import Subresources
            verbs = self._subresource_verbs = Subresources(self.api)
        return verbs

    @property
    def watches_open(self) -> int:
        """Watch streams holding a slot right now."""
        with self._watch_lock:
            return self._watches_open

    def rebind(self, apiserver: APIServer) -> None:
        """Serve another APIServer from now on (a cluster reset builds a fresh one; a restored
        snapshot brings its own registry, whose generations may repeat numbers the old one
        used, so what is cached by generation starts again)."""
        self.api = apiserver
        if apiserver.registry is not self.registry:  # a restore (a reset keeps the registry)
            self.registry = apiserver.registry
            self._aggregated_discovery = discovery.AggregatedDiscovery()
            self._custom_openapi = None
        self.server_metrics.reset()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        request = RequestView(environ)
        if request.path.startswith(CONTROL_PREFIX) and self.fallback is not None:
            refused = self._control_refusal(request)
            if refused is None:
                return self.fallback(environ, start_response)
            return refused(environ, start_response)
        writes = self.writes if request.method in WRITE_VERBS else None
        metrics = self.server_metrics
        inflight = metrics.begin(request.method)
        started = time.perf_counter()
        write: object = None
        try:
            if writes is not None:  # inside: a cluster that cannot track writes answers a 500
                write = writes.begin_write()
            with errors.emulating(self.api.release):
                response = self.dispatch(request)
        except ApiError as exc:
            response = status_response(exc)
        except Exception as exc:  # a bug of ours: answer like upstream, never a traceback
            self.internal_errors.append(exc)
            response = status_response(errors.internal_error(f"{type(exc).__name__}: {exc}"))
        finally:
            if writes is not None and write is not None:
                self._end_write(writes, write)
            metrics.end(inflight)
        info = environ.get(METRICS_KEY)
        if info is not None:
            metrics.observe(info, response.status_code, time.perf_counter() - started)
        _as_go_serves(response)
        return response(environ, start_response)

    def _end_write(self, writes: WriteTracker, write: object) -> None:
        try:
            writes.end_write(write)
        except Exception as exc:  # e.g. EngineStuck: the test must hear of it; the request stands
            self.internal_errors.append(exc)

    def _control_refusal(self, request: RequestView) -> AnyResponse | None:
        """The answer refusing a control API request (``/fakekube/``), or None to serve it.

        The control API moves the clock, fails nodes and deletes everything, so with RBAC on
        it is authenticated and authorized like every other path (a non-resource request:
        ``post`` on ``/fakekube/v1/clock/advance``), and anonymous callers are refused with
        401 rather than judged: only ``system:masters`` and users bound to a role granting
        those paths (``fakekube:control``, bound to admins by default) get through."""
        try:
            self.authenticated_user(request, anonymous_allowed=False)
        except impersonation.ImpersonationError as exc:
            return _internal_error_text(request, exc)
        except ApiError as exc:
            response = status_response(exc)
            _as_go_serves(response)
            return response
        return None

    # -- who asks -----------------------------------------------------------
    def authenticated_user(self, request: RequestView, anonymous_allowed: bool = True) -> UserInfo:
        """Authentication, impersonation and authorization, in upstream's filter order.

        With authorization off (``AlwaysAllow``) and no static tokens, a request without valid
        credentials is the admin (fakekube's convenience, docs/api.md); a valid token or
        certificate still names its user (for ``kubectl auth whoami`` and the users admission
        sees). With static tokens (``--token-auth-file``) authentication is upstream's: bad
        credentials are a 401, and so is no credential at all, since kube-apiserver turns
        anonymous authentication off under AlwaysAllow. With RBAC and ``anonymous_allowed``
        false, a request without credentials is a 401."""
        mode = self.api.authorization_mode
        cert_user = request.environ.get(CLIENT_CERT_USER)
        strict = mode == RBAC or bool(self.authenticator.static_tokens)
        try:
            user = self.authenticator.authenticate(request.headers.get("Authorization"), cert_user,
                                                   self._service_account_user)
        except ApiError:
            if strict:
                raise
            user = ADMIN
        if mode != RBAC and user is ANONYMOUS:
            if strict:
                raise unauthorized()
            user = ADMIN
        # Impersonate-* headers (any of them: upstream refuses extras without a user); the
        # scan runs in C, as it runs on every request.
        if any(map(str.startswith, request.environ, repeat("HTTP_IMPERSONATE_"))):
            # Each header line is one value: fakekube's server keeps them apart (another WSGI
            # server has joined repeated ones with commas, as WSGI does).
            pairs = request.environ.get(HEADER_LINES) or list(request.headers.items())
            asked = request_attributes(user, request.method, request.path, request.query) if mode == RBAC else None
            user = impersonation.impersonate(user, pairs, self._authorizer(), forbidden, asked)
        if mode == RBAC and not anonymous_allowed and user.username == ANONYMOUS.username:
            raise unauthorized()
        if mode == RBAC:
            attrs = request_attributes(user, request.method, request.path, request.query)
            decision = authorize(mode, self.api.view, attrs)
            if not decision.allowed:
                raise forbidden(attrs, decision.reason)
        return user

    def _authorizer(self) -> Callable[[Any], Any]:
        mode, view = self.api.authorization_mode, self.api.view
        return lambda attrs: authorize(mode, view, attrs)

    def _service_account_user(self, token: str) -> UserInfo | None:
        with self.api.store.lock:
            found = self.api.token_cache.authenticate(self.api.write_context(), token, list(API_AUDIENCES))
        return UserInfo.from_json(found[0]) if found is not None else None

    # -- routing ------------------------------------------------------------
    def dispatch(self, request: RequestView) -> AnyResponse:
        try:
            request.environ[USER_KEY] = self.authenticated_user(request)
        except impersonation.ImpersonationError as exc:
            return _internal_error_text(request, exc)
        path = request.path
        if path == "/version" or path == "/version/":
            if request.method != "GET":  # a go-restful GET route, as discovery's
                raise errors.method_not_allowed()
            negotiation.check_route_accepts(request.headers.get("Accept"), (negotiation.JSON,))
            return json_response(discovery.version_info(self.api.release, self.api.patch_version))
        if path.split("/")[1:2] and "/" + path.split("/")[1] in HEALTH_PATHS:
            if path in HEALTH_PATHS:  # upstream instruments the endpoints, not each check
                request.environ[METRICS_KEY] = server_metrics.path_info(request, path, "")
            return _health(path, request.args)
        if path.startswith("/openapi/"):
            return self._openapi_response(request)
        if path == "/metrics":  # any method, as upstream's handler
            return Response(self.server_metrics.render(), content_type=server_metrics.CONTENT_TYPE)
        if path in (OIDC_CONFIGURATION_PATH, JWKS_PATH):
            return self._service_account_issuer_discovery(request, path)
        target = routing.parse(path)
        if isinstance(target, routing.DiscoveryPath):
            return self._discovery(request, target)
        if isinstance(target, routing.ResourcePath):
            return self._resource(request, target)
        if path.startswith("/api/"):  # under the core group's routes: go-restful's Status
            raise _not_found_path()
        return _not_found_page()

    def _service_account_issuer_discovery(self, request: RequestView, path: str) -> AnyResponse:
        """ServiceAccountIssuerDiscovery's two go-restful GET routes: the OpenID provider
        configuration (JSON) and the signing keys (``application/jwk-set+json`` only), both
        cacheable for an hour. ``jwks_uri`` is this server's own address, as upstream's
        default (the external address) is."""
        if request.method != "GET":
            raise errors.method_not_allowed()
        headers = {"Cache-Control": "public, max-age=3600"}
        if path == JWKS_PATH:
            negotiation.check_route_accepts(request.headers.get("Accept"), (JWKS_CONTENT_TYPE,))
            with self.api.store.lock:
                keys = tokens.jwks(self.api.write_context())
            return json_response(keys, content_type=JWKS_CONTENT_TYPE, headers=headers)
        negotiation.check_route_accepts(request.headers.get("Accept"), (negotiation.JSON,))
        return json_response({"issuer": ISSUER, "jwks_uri": _server_url(request.environ) + JWKS_PATH,
                              "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                              "id_token_signing_alg_values_supported": ["RS256"]}, headers=headers)

    def _discovery(self, request: RequestView, target: routing.DiscoveryPath) -> AnyResponse:
        if request.method != "GET":
            raise errors.method_not_allowed()
        if target.core or target.version:  # go-restful's routes (/apis and a group's are plain handlers)
            negotiation.check_route_accepts(request.headers.get("Accept"), negotiation.ROUTE_MEDIA_TYPES)
        aggregated = discovery.negotiate_discovery(request.headers.get("Accept", ""))
        if aggregated and not target.group and not target.version:
            request.environ[METRICS_KEY] = server_metrics.path_info(request, "api" if target.core else "apis",
                                                                    "apiserver")
            return self._aggregated(request, target.core, aggregated)
        # The legacy documents' serializer takes no conversion (as=Table, an aggregated
        # version nobody serves): without a plain clause besides, 406.
        negotiation.choose(request.headers.get("Accept"), allow_as=False)
        if target.core and not target.version:
            return json_response(discovery.core_api_versions())
        if target.core:
            return self._resource_list(target.group, target.version, "v1")
        if not target.group:
            return json_response(discovery.api_group_list(self.registry.pinned()))
        if not self.registry.group_types(target.group):
            return _not_found_page()  # no group's routes: the apiserver's NotFoundHandler
        if not target.version:
            body = discovery.api_group(self.registry, target.group)
            if body is None:
                raise _not_found_path()
            return json_response(body)
        if self._custom_group(target.group) and not self.registry.group_version_types(target.group, target.version):
            return _not_found_page()  # the crdHandler hands a version it does not serve on
        return self._resource_list(target.group, target.version, target.version)

    def _custom_group(self, group: str) -> bool:
        """Whether only CRDs serve ``group``: its paths go to the crdHandler, which hands what
        it does not serve (a version, a resource, a path of the wrong scope) to the
        apiserver's NotFoundHandler, Go's plain ``404 page not found``."""
        types = self.registry.group_types(group)
        return bool(types) and all(t.custom is not None for t in types)

    def _aggregated(self, request: RequestView, core: bool, api_version: str) -> AnyResponse:
        """Aggregated discovery: the whole API surface in one document (kubectl's first call)."""
        body, etag_value = self._aggregated_discovery.body(self.registry.pinned(), core, api_version)
        etag = f'"{etag_value}"'
        headers = {"ETag": etag, "Vary": "Accept", "Cache-Control": "public"}
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers=headers)
        return Response(body, content_type=discovery.aggregated_content_type(api_version), headers=headers)

    def _resource_list(self, group: str, version: str, _: str) -> AnyResponse:
        doc = discovery.api_resource_list(self.registry, group, version)
        if doc is None:  # no resources in that group version
            raise _not_found_path()
        if not group:  # the core group's list is written without its apiVersion (upstream's legacy handler)
            doc = {key: value for key, value in doc.items() if key != "apiVersion"}
        return json_response(doc)

    def _openapi_response(self, request: RequestView) -> AnyResponse:
        rest = request.path[len("/openapi/"):].strip("/")
        if request.path == "/openapi/v3" or request.path.startswith("/openapi/v3/"):  # kube-aggregator's handlers
            request.environ[METRICS_KEY] = server_metrics.path_info(request, request.path[1:12], "")
        registry = self.registry.pinned()
        openapi = shared_openapi(self.registry, self.api.kubernetes_version)
        custom = self._custom_documents()
        if rest == "v3" and request.path != "/openapi/v3/":  # that is the prefix of a group-version, none named
            # kube-aggregator writes the index without a Content-Type (Go sniffs plain text)
            # and without json.Encoder's newline
            index = encoding.dumps(self._openapi_index(registry, openapi, custom))
            return JsonResponse(index, content_type="text/plain; charset=utf-8")
        if rest == "v2":
            return self._openapi_v2(request, registry, openapi, custom)
        if not rest.startswith("v3/"):
            raise _not_found_path()
        path = rest[len("v3/"):].strip("/")
        found = custom.document(registry, path) or openapi.document(path)
        if found is None:
            return _bare(404)  # the aggregator's v3 handler: no body, no Content-Type
        body, etag = found
        wanted_hash = request.args.get("hash")
        if wanted_hash is not None and wanted_hash != etag:
            # kube-openapi sets the JSON Content-Type before it redirects with no body
            return _bare(301, {"Content-Type": "application/json", "ETag": f'"{etag}"',
                               "Location": f"/openapi/v3/{path}?hash={etag}", "Vary": "Accept"})
        headers = {"ETag": f'"{etag}"', "Vary": "Accept"}
        headers["Cache-Control"] = "public, immutable" if wanted_hash else "no-cache, private"
        return Response(body, content_type="application/json", headers=headers)

    def _openapi_v2(self, request: RequestView, registry: RegistryView, openapi: OpenAPIV3,
                    custom: CustomDocuments) -> AnyResponse:
        """``/openapi/v2`` as kube-openapi serves it: protobuf when asked for first, else JSON;
        a quoted ETag and ``304`` for a matching ``If-None-Match``. The document is spliced
        from cached pieces (``openapi_v2.OpenAPIV2``: each path and definition converted once)."""
        from fakekube.api.verbs import openapi_v2
        if request.method != "GET":
            raise errors.method_not_allowed()
        served, data = _shared_openapi_v2().document(self.api.kubernetes_version, _v2_sources(registry, openapi, custom))
        etag = f'"{served.etag}"'
        headers = {"ETag": etag, "Vary": "Accept", "Cache-Control": "no-cache, private"}
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers=headers)
        form = openapi_v2.accepted_form(request.headers.get("Accept", ""))
        if form is None:
            return _bare(406, {"Vary": "Accept"})
        if form == "protobuf":
            return JsonResponse(served.protobuf(), content_type=openapi_v2.PROTOBUF_CONTENT_TYPE, headers=headers)
        return JsonResponse(data if data is not None else served.json(), content_type="application/json",
                            headers=headers)

    def _custom_documents(self) -> CustomDocuments:
        if self._custom_openapi is None:
            from fakekube.api.verbs.openapi_custom import CustomDocuments
            version = self.api.kubernetes_version
            self._custom_openapi = CustomDocuments(schema.load(version), version)
        return self._custom_openapi

    def _openapi_index(self, registry: RegistryView, openapi: OpenAPIV3, custom: CustomDocuments) -> Obj:
        """The built-in group-versions' index with this cluster's custom ones added."""
        index = openapi.index()
        extra = {path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={etag}"}
                 for path, etag in custom.etags(registry)}
        if not extra:
            return index
        return {"paths": dict(sorted({**index["paths"], **extra}.items()))}

    # -- resources ----------------------------------------------------------
    def _resource(self, request: RequestView, target: routing.ResourcePath) -> AnyResponse:
        rt = self.registry.find(target.group, target.version, target.plural)
        if rt is None:
            if target.group and (not self.registry.group_types(target.group) or self._custom_group(target.group)):
                return _not_found_page()  # no group's routes: the apiserver's NotFoundHandler
            raise _not_found_path()
        if rt.custom is not None and (target.namespace if not rt.namespaced else target.name and not target.namespace):
            return _not_found_page()  # a path of the other scope: the crdHandler finds no resource
        request.environ[METRICS_KEY] = server_metrics.resource_info(request, rt, target)
        warning = rt.deprecation_warning(self.api.kubernetes_version)
        # A deprecated type's warning goes first, with every answer, errors included
        # (upstream records it before the handler runs) — but go-restful's 405 for a
        # method the type has no route for: no handler ran, so nothing warns.
        if warning is not None:
            _record_warnings(request, [warning])
        try:
            response = self._serve_resource(request, rt, target)
        except ApiError as exc:
            if warning is None and not exc.warnings:
                raise
            response = status_response(exc)
            if errors.is_no_route(exc):
                return response
            _record_warnings(request, exc.warnings)  # what admission earned before the refusal
        recorder: WarningRecorder | None = request.environ.get(WARNINGS_KEY)
        if recorder is not None:
            for value in recorder.headers:
                response.headers.add("Warning", value)
        return response

    def _serve_resource(self, request: RequestView, rt: ResourceType, target: routing.ResourcePath) -> AnyResponse:
        if rt.namespaced is False and target.namespace:
            raise _not_found_path()
        query = request.query
        if target.legacy_watch:
            # Upstream routes ``/watch/`` for GET of a collection or one object only: a
            # subresource has no route there (404), another method is not allowed (405).
            if target.subresource:
                raise _not_found_path()
            if request.method != "GET":
                raise errors.method_not_allowed()
        if target.subresource:
            return self._subresource(request, rt, target, query)
        # ``watch=`` turns a collection GET into a watch (upstream's RequestInfo and
        # ListResource); a named GET ignores it and returns the object, as GetResource does.
        if target.legacy_watch or (request.method == "GET" and not target.name and query_bool(query.get("watch"))):
            return self._watch(request, rt, target, query)
        if request.method == "GET":
            return self._read(request, rt, target, query)
        return self._write(request, rt, target, query)

    def _read(self, request: RequestView, rt: ResourceType, target: routing.ResourcePath, query: dict[str, str]) -> AnyResponse:
        _check_route(request, rt, negotiation.ROUTE_MEDIA_TYPES if target.name else negotiation.LIST_MEDIA_TYPES)
        representation = negotiation.choose(request.headers.get("Accept"), offered=_offered(rt))
        if target.name:
            obj = self.api.get(rt, target.namespace, target.name)
            return self._render(representation, rt, [obj], query, single=obj)
        self._require_verb(rt, "list")
        result = self.api.list(rt, target.namespace, ListOptions.from_query(query))
        return self._render(representation, rt, result["items"], query, listing=result)

    def _render(self, representation: Representation, rt: ResourceType, objects: list[Obj], query: dict[str, str],
                single: Obj | None = None, listing: Obj | None = None) -> AnyResponse:
        as_kind = representation.as_kind
        if as_kind == "Table":
            options = negotiation.TableOptions.from_query(query)
            if options.include_object == "Object":  # rows carry whole objects, with their kind (upstream)
                objects = [objectmeta.with_type_meta(rt, obj) for obj in objects]
            elif listing is not None and representation.media_type == negotiation.JSON:  # kubectl get: rows reused
                return JsonResponse(self.api.encoded.table_parts(rt, objects, listing["metadata"], self.api.clock.now(),
                                                                 options.include_object, options.no_headers,
                                                                 self.api.kubernetes_version) + [b"\n"])
            body = table.to_table(rt, objects, self.api.clock.now(), options.include_object,
                                  (listing or {}).get("metadata"), options.no_headers, self.api.kubernetes_version)
        elif as_kind.startswith("PartialObjectMetadata"):
            _check_partial_metadata(rt, as_kind, single is None)
            body = _partial_metadata(rt, objects, single is not None, listing, self.api.kubernetes_version)
        elif representation.media_type == negotiation.JSON:
            if single is not None:
                return JsonResponse(self.api.encoded.typed(rt, single) + b"\n")
            assert listing is not None, "a GET renders its object, a LIST its listing"
            return JsonResponse(self.api.encoded.listing_parts(rt, listing) + [b"\n"])
        else:
            whole = single if single is not None else listing
            assert whole is not None, "a GET renders its object, a LIST its listing"
            body = whole
        return encode_response(body, representation.media_type)

    def _write(self, request: RequestView, rt: ResourceType, target: routing.ResourcePath, query: dict[str, str]) -> AnyResponse:
        verb = WRITE_VERBS.get(request.method)
        if verb is None:
            raise errors.method_not_allowed()
        if verb == "delete" and not target.name:
            verb = "deletecollection"
        if (verb == "create" and target.name) or (verb in ("update", "patch") and not target.name):
            raise errors.method_not_allowed()  # no such route, as go-restful answers
        self._require_verb(rt, verb)
        _check_route(request, rt, negotiation.ROUTE_MEDIA_TYPES, consumes=PATCH_TYPES if verb == "patch" else None)
        # Upstream's handlers negotiate the answer's type before reading or writing anything.
        representation = negotiation.choose(request.headers.get("Accept"), allow_as=False, offered=_offered(rt))
        if verb == "create":
            negotiation.body_format(request.headers.get("Content-Type"))  # upstream's 415 precedes its 413
        raw = self._body(request)
        user = _user(request)
        if verb == "patch":
            options = WriteOptions.from_query(query, raw, "PatchOptions", _user_agent(request), user)
            result = self.api.patch(rt, target.namespace, target.name, _media(request), raw, options)
            _record_warnings(request, result.warnings)
            return self._written(representation, result.obj, 201 if result.created else 200,
                                 _cacheable(rt, options, result))
        if verb in ("delete", "deletecollection"):
            return self._delete(request, representation, rt, target, query, raw, verb)
        if verb == "create":
            body, options = _decoded_write(request, rt, query, raw, "CreateOptions", user)
            if rt.key == BINDINGS:  # the pods/binding rule, for the pod the Binding names
                name = (body.get("metadata") or {}).get("name") or ""
                return self._written(representation, self._subresources.bind(target.namespace, name, body, options), 201)
            result = self.api.create(rt, target.namespace, body, options)
            _record_warnings(request, result.warnings)
            return self._written(representation, result.obj, 201, _cacheable(rt, options))
        body, options = _decoded_write(request, rt, query, raw, "UpdateOptions", user)
        result = self.api.update(rt, target.namespace, target.name, body, options)
        _record_warnings(request, result.warnings)
        return self._written(representation, result.obj, 201 if result.created else 200,
                             _cacheable(rt, options, result))

    def _delete(self, request: RequestView, representation: Representation, rt: ResourceType, target: routing.ResourcePath, query: dict[str, str],
                raw: bytes, verb: str) -> AnyResponse:
        parsed = DeleteOptions.parse(decode_body(request, raw) if raw.strip() else None, query)
        options = parsed._replace(user=_user(request))
        warnings = deletion.delete_warnings(rt, options)
        try:
            if verb == "deletecollection":
                body = self.api.delete_collection(rt, target.namespace, ListOptions.from_query(query), options)
                code = 200
            else:
                body, code = self.api.delete(rt, target.namespace, target.name, options)
        except ApiError as refused:
            refused.warnings = warnings + refused.warnings
            raise
        _record_warnings(request, warnings)
        return self._written(representation, body, code)

    def _written(self, representation: Representation, obj: Obj, code: int,
                 rt: ResourceType | None = None) -> AnyResponse:
        """The answer to a write; with ``rt``, ``obj`` is the version now stored (a dry run's
        result keeps the stored resourceVersion, so its bytes must not come from the cache)."""
        if rt is not None and obj.get("kind") == rt.kind and representation.media_type == negotiation.JSON:
            # The stored version's bytes: encoded once, then shared with every watcher.
            return JsonResponse(self.api.encoded.typed(rt, obj) + b"\n", status=code)
        return encode_response(obj, representation.media_type, code)

    def _subresource(self, request: RequestView, rt: ResourceType, target: routing.ResourcePath, query: dict[str, str]) -> AnyResponse:
        if target.subresource not in rt.subresources or not target.name:
            raise _not_found_path()
        if target.subresource in CONNECT_SUBRESOURCES:  # exec, attach, portforward, proxy
            raw = self._body(request) if request.content_length else b""
            if target.subresource == EXEC and rt.key == ("", "pods"):
                # A rare, long request: the session reads the upgrade headers through werkzeug's.
                from fakekube.api.http import execstream  # exec streams load with the first exec (cold start)
                return execstream.exec_response(self.api, rt, target.namespace, target.name, Request(request.environ),
                                                _user(request))
            if target.subresource in (PORTFORWARD, ATTACH) and rt.key == ("", "pods"):
                from fakekube.api.http import attach, portforward  # loaded with the first such session
                handler = portforward.portforward_response if target.subresource == PORTFORWARD else attach.attach_response
                return handler(self.api, rt, target.namespace, target.name, Request(request.environ), _user(request))
            from fakekube.api.verbs import connect
            if target.subresource == PROXY and rt.key in (("", "pods"), ("", "services")):
                answer = connect.proxy(self.api, rt, target.namespace, target.name, request.method, target.subpath,
                                       request.query_string, _proxied_headers(request.environ), raw, _user(request))
                return Response(answer.body, status=answer.status, headers=list(answer.headers))
            raise connect.connect(self.api, rt, target.namespace, target.name, target.subresource, request.method,
                                  query, _user(request), target.subpath)
        if rt.custom is None:  # a built-in subresource's go-restful routes
            if request.method not in _SUBRESOURCE_METHODS.get(target.subresource, ()):
                raise errors.method_not_allowed()
            produces = (("text/plain",) if target.subresource == LOG else ()) + negotiation.ROUTE_MEDIA_TYPES
            _check_route(request, rt, produces, consumes=PATCH_TYPES if request.method == "PATCH" else None)
        if request.method != "GET":  # a write: refuse an unreadable answer before writing (upstream)
            negotiation.choose(request.headers.get("Accept"), allow_as=False, offered=_offered(rt))
        raw = self._body(request) if request.method in ("POST", "PUT", "PATCH") else b""
        body, code, content_type = self._subresources.handle(request.method, rt, target, query, raw, _media(request),
                                                             lambda: decode_body(request, raw), _user(request), _user_agent(request))
        if isinstance(body, WriteResult):  # a status write: its object, with its warnings
            _record_warnings(request, body.warnings)
            return encode_response(body.obj, negotiation.choose(request.headers.get("Accept"), allow_as=False).media_type, code)
        if code == 204:  # no content, and no Content-Type (a log of a pod no node runs)
            empty = Response(status=204)
            del empty.headers["Content-Type"]
            return empty
        if content_type != negotiation.JSON:
            if not isinstance(body, (bytes, str)):  # a stream (pods/log follow): chunked, until the client goes
                return Response(_WhileConnected(body, request.environ.get(CLIENT_GONE)), status=code,
                                content_type=content_type, direct_passthrough=True)
            return Response(body, status=code, content_type=content_type)
        return encode_response(body, negotiation.choose(request.headers.get("Accept"), allow_as=False).media_type, code)

    def _watch(self, request: RequestView, rt: ResourceType, target: routing.ResourcePath, query: dict[str, str]) -> AnyResponse:
        self._require_verb(rt, "watch")
        _check_route(request, rt, negotiation.LIST_MEDIA_TYPES)
        representation = negotiation.choose(request.headers.get("Accept"), offered=_offered(rt))
        watch_request = WatchRequest.from_query(rt, target.namespace, query, target.name, representation,
                                                self.api.release.enabled("WatchList"))
        disconnected = request.environ.get(DISCONNECTED) or request.environ.get(CLIENT_GONE)
        with self._watch_lock:
            if self._watches_open >= self.max_watches:
                raise errors.too_many_requests("too many watches open; limit is reached")
            self._watches_open += 1
        stream = Watch(self.api, watch_request, self.stopping, disconnected, self.watch_check_interval_s)
        # Counted when it ends, as upstream counts a watch; open, it is a long-running request.
        info = request.environ.pop(METRICS_KEY, None)
        if info is not None:
            self.server_metrics.watch_started(info)
        release = partial(self._release_watch, info, time.perf_counter())
        return Response(_SlotHeld(iter(stream), release), status=200,
                        content_type="application/json", direct_passthrough=True)

    def _release_watch(self, info: server_metrics.RequestInfo | None = None, started: float = 0.0) -> None:
        with self._watch_lock:
            self._watches_open -= 1
        if info is not None:
            self.server_metrics.watch_ended(info, time.perf_counter() - started)

    def _require_verb(self, rt: ResourceType, verb: str) -> None:
        if not rt.supports(verb):
            # Upstream registers no route for a verb a type lacks; watch alone is refused by its
            # handler, which exists where the type can be listed (a create-only review has none).
            if verb == "watch" and rt.supports("list"):
                raise errors.method_not_supported(rt.group, rt.plural, verb)
            raise errors.method_not_allowed()

    def _body(self, request: RequestView) -> bytes:
        """The request body, at most ``max_body_bytes`` (413 past it).

        Read from ``wsgi.input`` itself: our server's input never reads past the body
        (PEP 3333 ``wsgi.input_terminated``), and werkzeug's extra wrapping costs ~5 % of
        a create.
        """
        length = request.content_length
        if length is not None and length > self.max_body_bytes:
            raise errors.request_entity_too_large(f"limit is {self.max_body_bytes}")
        stream = request.environ["wsgi.input"]
        raw = stream.read(length) if length is not None else stream.read(self.max_body_bytes + 1)
        if len(raw) > self.max_body_bytes:
            raise errors.request_entity_too_large(f"limit is {self.max_body_bytes}")
        return raw


_openapi_cache: dict[str, OpenAPIV3] = {}
#: ``/openapi/v2`` documents, shared by every cluster in the process (keyed by content):
#: made at the first ``/openapi/v2`` request.
_openapi_v2_documents: list[openapi_v2.OpenAPIV2] = []
_openapi_lock = threading.Lock()


def _shared_openapi_v2() -> openapi_v2.OpenAPIV2:
    with _openapi_lock:
        if not _openapi_v2_documents:
            from fakekube.api.verbs.openapi_v2 import OpenAPIV2
            _openapi_v2_documents.append(OpenAPIV2())
        return _openapi_v2_documents[0]


def _v2_sources(registry: RegistryView, openapi: OpenAPIV3, custom: CustomDocuments) -> list[openapi_v2.Source]:
    """Every served group-version's v3 document as ``/openapi/v2`` is made of: (path, ETag,
    its bytes when needed); a group-version with custom types is its custom document."""
    sources: list[openapi_v2.Source] = []
    custom_etags = custom.etags(registry)
    custom_paths = {path for path, _ in custom_etags}
    for path in openapi.paths():
        built = openapi.document(path)
        source = openapi.v2_source(path)
        if path not in custom_paths and built is not None and source is not None:
            sources.append((path, built[1], partial(_bytes_of, source)))
    for path, etag in custom_etags:
        sources.append((path, etag, partial(_custom_bytes, custom, registry, path)))
    return sources


def _bytes_of(data: bytes) -> bytes:
    return data


def _custom_bytes(custom: CustomDocuments, registry: RegistryView, path: str) -> bytes:
    built = custom.document(registry, path)
    if built is None:  # the path came from this very registry state: it is served
        raise RuntimeError(f"custom OpenAPI document {path} vanished")
    return built[0]


def shared_openapi(registry: Registry, kubernetes_version: str) -> OpenAPIV3:
    """One OpenAPI builder per Kubernetes version per process: the documents are immutable
    and take a while to build, so every cluster in the process shares them."""
    with _openapi_lock:
        openapi = _openapi_cache.get(kubernetes_version)
        if openapi is None:
            from fakekube.api.verbs.openapi import OpenAPIV3
            openapi = OpenAPIV3(registry, schema.load(kubernetes_version), kubernetes_version)
            _openapi_cache[kubernetes_version] = openapi
        return openapi


class _SlotHeld:
    """A watch stream that gives its slot back exactly once, however it ends: its own end, an
    error, or ``close()`` by the server (after a failed write, or before it ever iterated)."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None]) -> None:
        self._chunks = chunks
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> "_SlotHeld":
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        release, self._release = self._release, None
        if release is not None:
            release()


class _WhileConnected:
    """A streamed body that stops when the client has gone: checked at every chunk (an idle
    stream yields empty chunks so that it is checked). ``close`` reaches the stream always."""

    def __init__(self, stream: Iterable[bytes], client_gone: Callable[[], bool] | None) -> None:
        self._stream = stream
        self._chunks = iter(stream)
        self._client_gone = client_gone

    def __iter__(self) -> "_WhileConnected":
        return self

    def __next__(self) -> bytes:
        chunk = next(self._chunks)
        if self._client_gone is not None and self._client_gone():
            self.close()
            raise StopIteration
        return chunk

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


def _cacheable(rt: ResourceType, options: WriteOptions, result: WriteResult | None = None) -> ResourceType | None:
    """A dry run's answer keeps the stored resourceVersion but not its content, and so does
    an update that emptied a deleting object's finalizers: never answer them from (or put
    them in) the per-version encoding cache."""
    return None if options.dry_run or (result is not None and not result.stored) else rt


def _record_warnings(request: RequestView, texts: list[str]) -> None:
    """Give a request's warnings to its recorder; ``_resource`` writes the headers."""
    if not texts:
        return
    recorder = request.environ.get(WARNINGS_KEY)
    if recorder is None:
        recorder = request.environ[WARNINGS_KEY] = WarningRecorder()
    recorder.add_all(texts)


def _user(request: RequestView) -> UserInfo | None:
    """The request's user, as authentication left it (None: not through ``dispatch``)."""
    user = request.environ.get(USER_KEY)
    return user if isinstance(user, UserInfo) else None


def _user_agent(request: RequestView) -> str:
    """The User-Agent as Go reads it: its bytes as UTF-8 (WSGI hands headers over as latin-1)."""
    value = request.headers.get("User-Agent") or ""
    try:
        return value.encode("latin-1").decode("utf-8", errors="replace")
    except UnicodeEncodeError:  # not from a server's bytes (a hand-built environ): as given
        return value


def _check_route(request: RequestView, rt: ResourceType, produces: tuple[str, ...],
                 consumes: tuple[str, ...] | None = None) -> None:
    """What go-restful checks of a built-in type's route before its handler runs: the
    Content-Type of a route that declares what it consumes (415), then the Accept header
    (406). A custom resource's requests go to a plain handler, which checks neither."""
    if rt.custom is not None:
        return
    if consumes is not None:
        negotiation.check_route_consumes(request.headers.get("Content-Type"), consumes)
    negotiation.check_route_accepts(request.headers.get("Accept"), produces)


def _media(request: RequestView) -> str:
    return (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()


def decode_body(request: RequestView, raw: bytes, kind: str = "", api_version: str = "") -> Any:
    """Parse a JSON, YAML or protobuf request body; malformed input is a 400, never a 500.

    With ``kind`` (a create or update of that kind, ``api_version`` its group/version) the
    body must be an object and errors are worded as upstream's decoder words them (see
    :mod:`fakekube.api.wire.decoding`).
    """
    fmt = negotiation.body_format(request.headers.get("Content-Type"))
    if kind:
        return decoding.decode_body(raw, fmt, kind, api_version)
    try:
        return decoding.parse_untyped(raw, fmt)
    except decoding.SyntaxFailure as exc:
        raise errors.bad_request(f"the object provided is unrecognized or malformed: {exc}") from None


def _decoded_write(request: RequestView, rt: ResourceType, query: dict[str, str], raw: bytes, options_kind: str,
                   user: UserInfo | None) -> tuple[Any, WriteOptions]:
    """The body and options of a create or update. The options are checked first (upstream
    validates them before it decodes the body); a JSON body's key count, taken before
    anything edits it, rides along (``WriteOptions.body_keys``)."""
    fields = WriteOptions.query_fields(query, options_kind)
    fmt = negotiation.body_format(request.headers.get("Content-Type"))
    body = decoding.decode_body(raw, fmt, rt.kind, rt.api_version)
    body_keys = fieldvalidation.key_count(body) if fmt == "json" else None
    return body, WriteOptions(raw_body=raw, user_agent=_user_agent(request), user=user, body_keys=body_keys, **fields)


def _offered(rt: ResourceType) -> tuple[str, ...]:
    """The media types a 406 names: a built-in type's serializers, or a custom resource's."""
    return negotiation.CUSTOM_MEDIA_TYPES if rt.custom is not None else negotiation.BUILTIN_MEDIA_TYPES


def _internal_type(rt: ResourceType, list_kind: bool) -> str:
    """The Go type (``%T``) upstream's handler holds for ``rt``: the internal package's
    type (``*core.PodList``, ``*apps.Deployment``), an unstructured one for a custom resource."""
    if rt.custom is not None:
        return "*unstructured.UnstructuredList" if list_kind else "*unstructured.Unstructured"
    package = _INTERNAL_PACKAGES.get(rt.group, rt.group.split(".")[0])
    return f"*{package}.{rt.list_kind if list_kind else rt.kind}"


#: Groups whose internal Go package is not the group's first label.
_INTERNAL_PACKAGES = {"": "core", "events.k8s.io": "core", "internal.apiserver.k8s.io": "apiserverinternal"}


def _check_partial_metadata(rt: ResourceType, as_kind: str, is_list: bool) -> None:
    """PartialObjectMetadata is one object's, PartialObjectMetadataList a list's: asking
    for the other is 406 (upstream's transformObject)."""
    if as_kind == "PartialObjectMetadata" and is_list:
        raise errors.ApiError(406, "NotAcceptable", "you requested PartialObjectMetadata, but the requested object "
                                                    f"is a list ({_internal_type(rt, True)})")
    if as_kind == "PartialObjectMetadataList" and not is_list:
        raise errors.ApiError(406, "NotAcceptable", "you requested PartialObjectMetadataList, but the requested "
                                                    f"object is not a list ({_internal_type(rt, False)})")


def _partial_metadata(rt: ResourceType, objects: list[Obj], single: bool, listing: Obj | None,
                      kubernetes_version: str) -> Obj:
    hidden = table.table_spec(rt, kubernetes_version).internal_annotations
    items = [table.partial_object_metadata(o, hidden) for o in objects]
    if single:
        return items[0]
    # A typed ListMeta (no empty continue) and Go's nil slice when nothing matched: "items": null.
    list_meta = {k: v for k, v in ((listing or {}).get("metadata") or {}).items() if v != "" or k != "continue"}
    return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
            "items": items or None}


def _health(path: str, args: Any) -> AnyResponse:
    """``/healthz``, ``/livez``, ``/readyz`` and ``/<endpoint>/<check>``: always healthy.

    Upstream registers exactly these paths on its non-go-restful mux; any other path under
    them (``/livez/bogus``, ``/healthz/``, ``/healthz/..``) falls through to the not-found
    handler, which answers Go's plain ``http.NotFound``. ``?verbose`` lists each check as
    ``[+]name ok`` and ends ``<endpoint> check passed``; ``?exclude=`` marks checks excluded
    (healthz.go ``handleRootHealth``).
    """
    endpoint, slash, check = path[1:].partition("/")
    checks = HEALTH_CHECKS[endpoint]
    if slash and check not in checks:
        return _plain("404 page not found\n", 404)
    if check:
        return _plain("ok")
    excluded = args.getlist("exclude")
    lines = [f"[+]{name} excluded: ok" if name in excluded else f"[+]{name} ok" for name in checks]
    unknown = sorted(set(excluded) - set(checks))
    if unknown:
        names = ",".join(f'"{name}"' for name in unknown)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {names}")
    if "verbose" not in args:
        return _plain("ok")
    return _plain("\n".join(lines + [f"{endpoint} check passed"]) + "\n")


def _internal_error_text(request: RequestView, exc: Exception) -> AnyResponse:
    """``responsewriters.InternalError``'s plain text: ``Internal Server Error: %q: %v``."""
    return _plain(f"Internal Server Error: {go_quote(request.full_path.rstrip('?'))}: {exc}\n", 500)


def _plain(text: str, code: int = 200) -> AnyResponse:
    """Text as Go's handlers send it (``http.Error`` and the health handlers set both headers)."""
    return Response(text, status=code, content_type="text/plain; charset=utf-8",
                    headers={"X-Content-Type-Options": "nosniff"})


def _as_go_serves(response: AnyResponse) -> None:
    """Status line and default headers as the apiserver's Go server sends them.

    Go's reason phrases are title case ("404 Not Found"; werkzeug says "404 NOT FOUND"),
    and clients show them (the Python client's ``ApiException`` prints ``Reason:``).
    Every response the apiserver's filters pass carries ``Cache-Control: no-cache,
    private`` unless the handler chose a policy (discovery, OpenAPI).
    """
    if isinstance(response, Response):  # a JsonResponse writes its status line itself
        response.status = status_line(response.status_code)
    response.headers.setdefault("Cache-Control", "no-cache, private")


def _proxied_headers(environ: dict[str, Any]) -> list[tuple[str, str]]:
    """The request's headers as the proxy sends them on (WSGI's ``HTTP_X_Y`` as ``X-Y``)."""
    headers = [(key[5:].replace("_", "-").title(), str(value)) for key, value in environ.items()
               if key.startswith("HTTP_")]
    if environ.get("CONTENT_TYPE"):
        headers.append(("Content-Type", str(environ["CONTENT_TYPE"])))
    return headers


def _not_found_path() -> ApiError:
    """go-restful's 404 under a served group: ``NewGenericServerResponse``, ``"details":{}``."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def _server_url(environ: dict) -> str:
    """``scheme://host[:port]`` the client reached this server at (the Host header, else
    the listening address)."""
    host = environ.get("HTTP_HOST") or f"{environ.get('SERVER_NAME', '127.0.0.1')}:{environ.get('SERVER_PORT', '80')}"
    return f"{environ.get('wsgi.url_scheme', 'http')}://{host}"


def _bare(status: int, headers: dict[str, str] | None = None) -> AnyResponse:
    """A status with no body and only the given headers (no Content-Type unless given):
    what Go's handlers answer when they write a status code alone."""
    response = JsonResponse(b"", status=status, headers=headers)
    given = {name.lower() for name in headers or {}}
    if "content-type" not in given:
        response.headers.items = [(k, v) for k, v in response.headers.items if k != "Content-Type"]
    else:
        response.headers.items = response.headers.items[1:]  # the given one follows
    return response


def _not_found_page() -> AnyResponse:
    """A path outside every API group's routes (``/foo``, ``/apis/<group nobody serves>``):
    the apiserver's NotFoundHandler answers Go's ``http.NotFound``, plain text."""
    return _plain("404 page not found\n", 404)


def json_response(body: Obj, code: int = 200, content_type: str = "application/json",
                  headers: dict[str, str] | None = None) -> AnyResponse:
    data = encoding.dumps(body) + b"\n"
    return JsonResponse(data, status=code, content_type=content_type, headers=headers)


def encode_response(body: Obj, media_type: str, code: int = 200) -> AnyResponse:
    if media_type == negotiation.YAML:
        import yaml  # PyYAML loads on first use, not with the package (cold start)
        return Response(yaml.safe_dump(body, sort_keys=False), status=code, content_type=negotiation.YAML)
    return json_response(body, code)


def status_response(error: ApiError) -> AnyResponse:
    response = json_response(error.status(), error.code)
    for key, value in error.headers.items():
        response.headers[key] = value
    return response
