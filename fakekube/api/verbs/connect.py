"""The connect subresources: ``pods/exec``, ``pods/attach``, ``pods/portforward`` and the
``proxy`` of pods, nodes and services.

Upstream's apiserver answers them by opening a stream to the node's kubelet (or proxying to
a pod, node or service). fakekube's kubelets run no processes and listen on no port.

``pods/exec`` is simulated: after upstream's checks (:func:`check_exec`) the pod's kubelet
runs the command in the container model (``api.pod_exec``, wired by the cluster to
kubelet/execs.py; with stdin, a session fed as it arrives: :func:`open_exec`), and
:func:`exec_status` words the outcome as the Status the error stream carries
(fakekube.api.http.execstream speaks the stream protocols).

The others, after upstream's own checks (the object exists; a pod is bound to a node; a
named container is the pod's), are answered with a 400 ``BadRequest`` Status that says what
is not simulated, which kubectl prints as ``Error from server (BadRequest): ...``.
Discovery and OpenAPI list the subresources as upstream does, so clients find them.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol, Sequence, cast

from fakekube.api.machinery import errors
from fakekube.api.registry import ATTACH, EXEC, PORTFORWARD, PROXY, ResourceType
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
#: What a pod's connect subresource would need that a simulated container lacks.
_POD_WHY = {
    ATTACH: "a simulated container has no running process to attach to "
            "(kubectl exec of a command declared in the container's behaviour works)",
    PORTFORWARD: "a simulated container listens on no port",
    PROXY: "a simulated container serves no traffic",
}

#: The reason and cause type of a non-zero exit on the error stream (remotecommand constants).
NON_ZERO_EXIT_CODE = "NonZeroExitCode"
EXIT_CODE_CAUSE = "ExitCode"


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
    why = _POD_WHY.get(subresource) if rt.key == ("", "pods") else None
    return errors.bad_request(
        f"{rt.plural}/{subresource} is not simulated by fakekube: {rt.singular} \"{obj['metadata']['name']}\" "
        f"cannot be connected to ({why or _WHY.get(rt.plural, 'nothing runs behind it')})")


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
               command: Sequence[str]) -> tuple[dict[str, Any], ExecRequest]:
    """The pod and the request's options, after upstream's checks (405, 404, then the 400s of
    :func:`connect`); ``command`` is the query's repeated ``command`` parameter."""
    if method not in EXEC_METHODS:
        raise errors.method_not_allowed()
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
