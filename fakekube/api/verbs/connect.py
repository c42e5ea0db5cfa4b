"""The connect subresources: ``pods/exec``, ``pods/attach``, ``pods/portforward`` and the
``proxy`` of pods, nodes and services.

Upstream's apiserver answers them by opening a stream to the node's kubelet (or proxying to
a pod, node or service). fakekube's kubelets run no processes and listen on no port.

``pods/exec`` is simulated: after upstream's checks (:func:`check_exec`) the pod's kubelet
runs the command in the container model (``api.pod_exec``, wired by the cluster to
kubelet/execs.py; with stdin, a session fed as it arrives: :func:`open_exec`), and
:func:`exec_status` words the outcome as the Status the error stream carries
(fakekube.api.http.execstream speaks the stream protocols).

Each request first goes through the admission chain as a CONNECT (webhooks and policies
may match ``pods/exec``...), its options object (``PodExecOptions``...) standing for the
object, as upstream's connect handler does before it looks the object up.

The ``proxy`` of a pod or a Service is simulated too (:func:`proxy`): the request goes to
the pod's port (a Service's through its Endpoints, as upstream's ``ResourceLocation``
chooses: fakekube/objects/serviceroutes.py) and the pod's kubelet answers from the
container's HTTP behaviour (``api.pod_http``, kubelet/httpmodel.py); a port nothing listens
on is upstream's 503 ``error trying to reach service: dial tcp …: connect: connection
refused``. ``pods/portforward`` and ``pods/attach`` speak their stream protocols in
fakekube.api.http (portforward.py, attach.py) after :func:`check_stream`.

The proxy of a node, after upstream's own checks, is answered with a 400 ``BadRequest``
Status that says it is not simulated, which kubectl prints as ``Error from server
(BadRequest): ...``. Discovery and OpenAPI list the subresources as upstream does.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol, Sequence, cast

from fakekube.api.auth.identity import UserInfo
from fakekube.api.machinery import errors
from fakekube.objects import serviceroutes
from fakekube.api.registry import ATTACH, EXEC, PORTFORWARD, PROXY, ResourceType
from fakekube.api.verbs.apiserver import APIServer

Obj = dict[str, Any]

#: The methods upstream routes for each connect subresource (go-restful's connect routes).
EXEC_METHODS = ("GET", "POST")
PROXY_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")

#: Why an object's connect subresource is not simulated, in the answer's message.
_WHY = {"nodes": "its kubelet is simulated and serves no endpoint"}

#: The options kind a connect request decodes into (the connect storages' ``NewConnectOptions``).
OPTIONS_KINDS = {("pods", EXEC): "PodExecOptions", ("pods", ATTACH): "PodAttachOptions",
                 ("pods", PORTFORWARD): "PodPortForwardOptions", ("pods", PROXY): "PodProxyOptions",
                 ("nodes", PROXY): "NodeProxyOptions", ("services", PROXY): "ServiceProxyOptions"}
#: The reason and cause type of a non-zero exit on the error stream (remotecommand constants).
NON_ZERO_EXIT_CODE = "NonZeroExitCode"
EXIT_CODE_CAUSE = "ExitCode"


# -- proxy ---------------------------------------------------------------------------------

class ProxiedRequest(NamedTuple):
    """What the apiserver's proxy sends on to the pod (``target``: path and query)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


class ProxiedAnswer(NamedTuple):
    """The pod's answer, as the proxy hands it back to the client."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


#: What a proxy request must not carry on to the pod (hop-by-hop, and the client's credentials).
_NOT_FORWARDED = frozenset({"authorization", "connection", "keep-alive", "proxy-authorization", "te", "trailer",
                            "transfer-encoding", "upgrade", "host", "content-length"})


def proxy(api: APIServer, rt: ResourceType, namespace: str, name: str, method: str, subpath: str, query: str,
          headers: Sequence[tuple[str, str]], body: bytes, user: UserInfo | None = None) -> ProxiedAnswer:
    """``GET /api/v1/namespaces/{ns}/{pods|services}/{name[:port]}/proxy/{subpath}``: the pod's
    answer, or the ApiError upstream gives (405, 404, 400 for an unbound pod or a pod
    without an IP, 503 without endpoints or when nothing listens). Nodes: not simulated."""
    if method not in PROXY_METHODS:
        raise errors.method_not_allowed()
    if rt.key not in (("", "pods"), ("", "services")):
        raise connect(api, rt, namespace, name, PROXY, method, {}, user, subpath)
    api.admit_connect(rt, namespace, name, PROXY, connect_options(rt, PROXY, {}, subpath=subpath), user)
    scheme, object_name, port = _split_scheme_name_port(name)
    if object_name is None:
        raise errors.bad_request(f'invalid {rt.singular} request "{name}"')
    obj = api.get(rt, namespace, object_name)
    target = "/" + subpath + (f"?{query}" if query else "")
    request = ProxiedRequest(method, target, tuple((k, v) for k, v in headers if k.lower() not in _NOT_FORWARDED),
                             body)
    if rt.key == ("", "pods"):
        ip = serviceroutes.pod_ip(obj)
        number = serviceroutes.pod_proxy_port(obj, port)
        if not ip:
            raise errors.bad_request("address not allowed")
        backend: serviceroutes.Backend | serviceroutes.Unreachable = serviceroutes.Backend(
            namespace, object_name, ip, number if number is not None else 0)
    else:
        endpoints = api.store.get(("", "endpoints"), (namespace, object_name))
        if endpoints is None:
            raise errors.not_found("", "endpoints", object_name)
        backend = serviceroutes.service_backend(obj, endpoints, port, requested=name)
    if isinstance(backend, serviceroutes.Unreachable):
        raise errors.ApiError(503, "ServiceUnavailable", backend.message)
    answer = api.pod_http(backend.namespace, backend.pod, backend.port, request) if api.pod_http else None
    if answer is None:
        raise errors.ApiError(503, "ServiceUnavailable", "error trying to reach service: "
                              + serviceroutes.dial_refused(backend.ip, backend.port))
    return answer


def _split_scheme_name_port(text: str) -> tuple[str, str | None, str]:
    """``utilnet.SplitSchemeNamePort``: ``name``, ``name:port`` or ``scheme:name:port``
    (scheme ``http`` or ``https``); (scheme, None, port) when not valid."""
    parts = text.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
        if scheme not in ("http", "https"):
            return scheme, None, port
    else:
        return "", None, ""
    return scheme, (name or None), port


def connect(api: APIServer, rt: ResourceType, namespace: str, name: str, subresource: str, method: str,
            query: dict[str, str], user: UserInfo | None = None, subpath: str = "") -> errors.ApiError:
    """The error a connect request that is not simulated (a node's proxy) ends in, always
    raised by the caller: 405 for a method upstream does not route; admission's refusal;
    404 when the object is missing; else 400 naming what is not simulated."""
    allowed = PROXY_METHODS if subresource == PROXY else EXEC_METHODS
    if method not in allowed:
        return errors.method_not_allowed()
    api.admit_connect(rt, namespace, name, subresource, connect_options(rt, subresource, query, subpath=subpath), user)
    obj = api.get(rt, namespace, name.split(":", 1)[0] if subresource == PROXY else name)
    return errors.bad_request(
        f"{rt.plural}/{subresource} is not simulated by fakekube: {rt.singular} \"{obj['metadata']['name']}\" "
        f"cannot be connected to ({_WHY.get(rt.plural, 'nothing runs behind it')})")


def _pod_problem(pod: Obj, name: str, query: dict[str, str]) -> str | None:
    """Upstream's checks before it dials the kubelet (pod REST's ``streamLocation``)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return f"pod {name} does not have a host assigned"
    return container_problem(pod, name, query.get("container", ""))


def container_problem(pod: Obj, name: str, container: str) -> str | None:
    """Why ``container`` cannot be streamed from (``streamLocation``, ``LogLocation``): a name
    no container, init or ephemeral container of the pod has; or none given while the pod
    has several containers (the message then lists them, then its init containers)."""
    spec = pod.get("spec") or {}
    if container:
        names = [c.get("name") for key in ("initContainers", "containers", "ephemeralContainers")
                 for c in spec.get(key) or []]
        return None if container in names else f"container {container} is not valid for pod {name}"
    containers = spec.get("containers") or []
    if len(containers) <= 1:
        return None
    problem = (f"a container name must be specified for pod {name}, "
               f"choose one of: [{' '.join(c.get('name', '') for c in containers)}]")
    inits = spec.get("initContainers") or []
    if inits:
        problem += f" or one of the init containers: [{' '.join(c.get('name', '') for c in inits)}]"
    return problem


def connect_options(rt: ResourceType, subresource: str, query: dict[str, str], command: Sequence[str] = (),
                    subpath: str = "") -> Obj:
    """The request's options as admission sees them: its ``v1`` options kind, with the fields
    its Go type would marshal (``omitempty``: unset flags and empty strings left out)."""
    body: Obj = {"kind": OPTIONS_KINDS.get((rt.plural, subresource), "PodProxyOptions"), "apiVersion": "v1"}
    if subresource in (EXEC, ATTACH):
        body.update({key: True for key in ("stdin", "stdout", "stderr", "tty")
                     if query.get(key, "").lower() in ("true", "1")})
        if query.get("container"):
            body["container"] = query["container"]
        if subresource == EXEC:
            body["command"] = list(command) or None
    elif subresource == PORTFORWARD:
        ports = [int(port) for port in query.get("ports", "").split(",") if port.strip().isdigit()]
        if ports:
            body["ports"] = ports
    elif subpath or query.get("path"):
        body["path"] = "/" + subpath if subpath else query["path"]
    return body


# -- pods/portforward and pods/attach -------------------------------------------------------

class FollowedOutput(Protocol):
    """A running container's output as it comes (kubelet/logstream.py's follow)."""

    def poll(self, now: Any, max_bytes: int = ...) -> Any: ...


class PodStreams(Protocol):
    """What the kubelet side of port-forward and attach sessions offers (the cluster wires
    the simulated kubelets in as ``api.pod_streams``)."""

    def runs(self, namespace: str, pod: str) -> bool:
        """Does a kubelet run the pod (its sandbox exists)?"""
    def listens(self, namespace: str, pod: str, port: int) -> bool:
        """Does a container of the pod listen on ``port`` now?"""
    def forward_error(self, namespace: str, pod: str, port: int) -> str:
        """The kubelet's error-stream text for a port nothing listens on."""
    def answer(self, namespace: str, pod: str, port: int, request: ProxiedRequest) -> ProxiedAnswer | None:
        """The pod's HTTP answer on ``port`` (None: nothing listens)."""
    def attach(self, namespace: str, pod: str, container: str) -> Any:
        """The container's output from now on (LookupError: it is not running)."""
    def begin_session(self) -> bool:
        """Room for one more long session? (False: at the bound; the caller refuses.)"""
    def end_session(self) -> None: ...
    def stopped(self) -> bool:
        """Has the cluster stopped (sessions end)?"""
    def now(self) -> Any:
        """Cluster time (what an attach reads output up to)."""


def check_stream(api: APIServer, rt: ResourceType, namespace: str, name: str, method: str,
                 query: dict[str, str], container: bool, user: UserInfo | None = None) -> dict[str, Any]:
    """The pod of a ``pods/portforward`` (``container`` False) or ``pods/attach`` request, after
    upstream's checks: 405, admission (a CONNECT), 404, the pod is bound (and, for attach,
    the container is the pod's), the node's kubelet can be dialled (500)."""
    if method not in EXEC_METHODS:
        raise errors.method_not_allowed()
    subresource = ATTACH if container else PORTFORWARD
    api.admit_connect(rt, namespace, name, subresource, connect_options(rt, subresource, query), user)
    pod = api.get(rt, namespace, name)
    problem = _pod_problem(pod, name, query) if container else (
        None if (pod.get("spec") or {}).get("nodeName") else f"pod {name} does not have a host assigned")
    if problem is not None:
        raise errors.bad_request(problem)
    unreachable = api.kubelet_unreachable((pod.get("spec") or {}).get("nodeName") or "")
    if unreachable is not None:
        raise errors.unknown_error(500, f"error dialing backend: {unreachable[1]}")
    return pod


# -- pods/exec ------------------------------------------------------------------------------

class ExecOutcome(Protocol):
    """What the pod's kubelet answers for a command (kubelet/execs.py's ExecResult)."""

    @property
    def stdout(self) -> bytes: ...
    @property
    def stderr(self) -> bytes: ...
    @property
    def exit_code(self) -> int: ...
    @property
    def error(self) -> str | None: ...


class ExecRequest(NamedTuple):
    """A ``pods/exec`` request's options (upstream's PodExecOptions, from the query)."""

    container: str
    command: tuple[str, ...]
    stdin: bool = False
    stdout: bool = False
    stderr: bool = False
    tty: bool = False


def check_exec(api: APIServer, rt: ResourceType, namespace: str, name: str, method: str, query: dict[str, str],
               command: Sequence[str], user: UserInfo | None = None) -> tuple[dict[str, Any], ExecRequest]:
    """The pod and the request's options, after upstream's checks (405, admission, 404, then
    the 400s of :func:`connect`); ``command`` is the query's repeated ``command`` parameter."""
    if method not in EXEC_METHODS:
        raise errors.method_not_allowed()
    api.admit_connect(rt, namespace, name, EXEC, connect_options(rt, EXEC, query, command), user)
    pod = api.get(rt, namespace, name)
    problem = _pod_problem(pod, name, query)
    if problem is not None:
        raise errors.bad_request(problem)
    container = query.get("container") or ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
    flags = {key: query.get(key, "").lower() in ("true", "1") for key in ("stdin", "stdout", "stderr", "tty")}
    unreachable = api.kubelet_unreachable((pod.get("spec") or {}).get("nodeName") or "")
    if unreachable is not None:  # the upgrade-aware proxy's dial, before any stream opens
        raise errors.unknown_error(500, f"error dialing backend: {unreachable[1]}")
    return pod, ExecRequest(container, tuple(command), **flags)


def run_exec(api: APIServer, pod: dict[str, Any], request: ExecRequest) -> ExecOutcome:
    """The kubelet's answer; LookupError (the kubelet's text) when the container is not running."""
    if api.pod_exec is None:
        raise LookupError(f'container not found ("{request.container}")')
    outcome: ExecOutcome = api.pod_exec(pod, request.container, list(request.command))
    return outcome


class ExecChunk(Protocol):
    """What one step of a streamed exec wrote, and its outcome once it is done."""

    @property
    def stdout(self) -> bytes: ...
    @property
    def stderr(self) -> bytes: ...
    @property
    def result(self) -> ExecOutcome | None: ...


class ExecStream(Protocol):
    """An exec whose stdin is fed while it runs (kubelet/execsession.py, bound to the engine)."""

    def start(self) -> ExecChunk: ...
    def feed(self, data: bytes) -> ExecChunk: ...
    def close(self) -> ExecChunk: ...


def open_exec(api: APIServer, pod: dict[str, Any], request: ExecRequest) -> ExecStream:
    """The kubelet's session for an exec with stdin; LookupError as :func:`run_exec`."""
    if api.pod_exec is None:
        raise LookupError(f'container not found ("{request.container}")')
    pod_exec = cast(Callable[..., Any], api.pod_exec)
    stream: ExecStream = pod_exec(pod, request.container, list(request.command), stream=True)
    return stream


def exec_status(outcome: ExecOutcome, command: Sequence[str], translated: bool) -> dict[str, Any]:
    """The Status the error stream carries at the end of an exec.

    ``translated``: the client speaks ``v5.channel.k8s.io``, which a 1.33 apiserver serves by
    translating to SPDY towards the kubelet (StreamTranslatorHandler): the kubelet's Status
    reaches the client re-worded by client-go's error decoder. Older protocols are proxied
    to the kubelet, whose Status arrives as it wrote it."""
    if outcome.error is not None:
        kubelet = f"error executing command in container: {outcome.error}"
        return internal_error_status(f"Internal error occurred: {kubelet}" if translated else kubelet)
    if outcome.exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    code = outcome.exit_code
    inner = (f"command terminated with exit code {code}" if translated
             else f"error executing command [{' '.join(command)}], exit code {code}")
    return {"metadata": {}, "status": "Failure", "message": f"command terminated with non-zero exit code: {inner}",
            "reason": NON_ZERO_EXIT_CODE, "details": {"causes": [{"reason": EXIT_CODE_CAUSE, "message": str(code)}]}}


def internal_error_status(message: str) -> dict[str, Any]:
    """``apierrors.NewInternalError(err)`` as the stream writes it (no kind or apiVersion)."""
    return {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {message}",
            "reason": "InternalError", "details": {"causes": [{"message": message}]}, "code": 500}
