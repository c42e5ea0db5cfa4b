"""The ``fakekube`` fixture's face on a real cluster (``pytest --fakekube-target=kubeconfig:PATH``).

:class:`RealCluster` has the methods a test calls on ``fakekube.Cluster`` — create, get,
list, delete, apply, patch, update, scale, wait_for, logs, exec, events, ``kubeconfig``,
``url``, ``client()`` — implemented over HTTP against the cluster a kubeconfig names (kind,
k3d, a cloud one), through the official client's transport (its kubeconfig loading: TLS,
tokens, client certificates, exec credential plugins). Errors are the server's ``Status``,
raised as fakekube's :class:`~fakekube.api.machinery.errors.ApiError`, so a test's
``except ApiError`` reads the same on both targets.

What needs fakekube's virtual clock or fault injection (``advance``, ``fail_node``,
snapshots, ...) skips the test with the reason: a real cluster has no equivalent that
would make the test mean what it says (:data:`NO_EQUIVALENT`). ``wait_for`` is the one
method with a real equivalent that differs: it polls in real time and takes its timeout
as real seconds. docs/pytest.md has the table.

Isolation: every test gets a namespace of its own (``fakekube-<test>-<suffix>``, the
server picks the suffix) that is the face's default and the default of the kubeconfig the
test's clients get; after the test the namespace is deleted (without waiting: its name is
never reused), and so is every object the face created outside it (cluster-scoped ones:
Namespaces, CRDs, ClusterRoles...).
"""

from __future__ import annotations

import builtins
import json
import re
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, NamedTuple, NoReturn, Sequence

import pytest
import yaml

from fakekube.api.machinery.errors import ApiError
from fakekube.cluster.objectverbs import PATCH_TYPES, ExecResult
from fakekube.cluster import waiting
from fakekube.cluster.checks import seconds as checked_seconds
from fakekube.objects.events import last_seen

Obj = dict[str, Any]

#: ``--fakekube-target``'s prefix for a real cluster.
KUBECONFIG_PREFIX = "kubeconfig:"
#: The namespaces tests get start with this (and a part of the test's name).
NAMESPACE_PREFIX = "fakekube-"
#: How long a name's test part is: the server adds 5 characters, a label holds 63.
NAMESPACE_TEST_CHARS = 40
#: How often ``wait_for`` reads the object again on a real cluster (seconds of real time).
POLL_INTERVAL_S = 0.2
#: How long one request may take before it is an error (connect, read; real seconds).
REQUEST_TIMEOUT_S = (10.0, 60.0)
#: How long a test's new namespace may take to get its ``default`` ServiceAccount (real seconds).
SERVICE_ACCOUNT_WAIT_S = 10.0
#: How long ``exec`` waits for a command to end (real seconds).
EXEC_TIMEOUT_S = 60.0
#: The field manager of the face's writes when the caller names none (``kubectl``'s role).
FIELD_MANAGER = "fakekube-pytest"

#: Cluster methods with no honest equivalent on a real cluster, and what they need.
NO_EQUIVALENT = {
    "advance": "fakekube's virtual clock", "advance_until": "fakekube's virtual clock",
    "now": "fakekube's virtual clock", "observe_time": "fakekube's virtual clock",
    "settle": "fakekube's engine (a real cluster's controllers run on their own)",
    "fail_node": "fakekube's fault injection (cordon and drain is another story: no NotReady, no eviction)",
    "recover_node": "fakekube's fault injection", "partition_node": "fakekube's fault injection",
    "heal_node": "fakekube's fault injection", "restart_kubelet": "fakekube's fault injection",
    "set_node_condition": "fakekube's fault injection (a real kubelet rewrites its node's conditions)",
    "clear_node_condition": "fakekube's fault injection", "kubelet_state": "fakekube's simulated kubelets",
    "snapshot": "fakekube's snapshots", "restore": "fakekube's snapshots", "save": "fakekube's snapshots",
    "reset": "fakekube's snapshots", "populate": "fakekube's virtual clock (it advances until rolled out)",
    "explain_scheduling": "fakekube's scheduler (a real one explains only in FailedScheduling events)",
    "timeline": "fakekube's change log", "report": "fakekube's state (the plugin reports a real cluster itself)",
    "mount": "fakekube's in-process server", "webhook_addresses": "fakekube's in-process server",
    "client_certificate": "fakekube's cluster CA", "store": "fakekube's store", "engine": "fakekube's engine",
    "api": "fakekube's in-process apiserver", "scheduler": "fakekube's scheduler",
    "config": "fakekube's ClusterConfig", "resource": "fakekube's resource registry",
}


def needs_fakekube(what: str, needs: str) -> NoReturn:
    """Skip the running test: it called ``what``, which needs ``needs``."""
    pytest.skip(f"needs {needs}: {what} on a real cluster (--fakekube-target=kubeconfig:...)")


class TargetError(ValueError):
    """A ``--fakekube-target`` value that names no cluster (the plugin makes it a usage error)."""


def parse_target(value: str) -> Path | None:
    """The kubeconfig ``--fakekube-target`` names, or None for ``fake`` (TargetError otherwise)."""
    if value == "fake":
        return None
    if not value.startswith(KUBECONFIG_PREFIX) or not value[len(KUBECONFIG_PREFIX):]:
        raise TargetError(f"--fakekube-target: must be 'fake' or 'kubeconfig:PATH' (the kubeconfig of a real "
                          f"cluster: kind, k3d, a cloud one), got {value!r}")
    path = Path(value[len(KUBECONFIG_PREFIX):]).expanduser()
    if not path.is_file():
        raise TargetError(f"--fakekube-target: {value}: no such kubeconfig file")
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise TargetError(f"--fakekube-target: {value}: not a readable kubeconfig ({error})") from None
    if not isinstance(loaded, dict) or not loaded.get("current-context"):
        raise TargetError(f"--fakekube-target: {value}: the kubeconfig names no current-context")
    return path.resolve()


class Resource(NamedTuple):
    """What discovery says of a kind: where its objects live."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str]

    def path(self, namespace: str, name: str = "", subresource: str = "") -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        scope = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        tail = f"/{name}" if name else ""
        return f"{base}{scope}/{self.plural}{tail}{'/' + subresource if subresource else ''}"


class Connection:
    """One real cluster for the session: the official client's transport, and discovery."""

    def __init__(self, kubeconfig: Path) -> None:
        try:
            from kubernetes import config as kube_config
        except ImportError:  # pragma: no cover - depends on the environment
            raise pytest.UsageError("--fakekube-target=kubeconfig:... needs the `kubernetes` package: "
                                    "pip install 'fakekube[client]'") from None
        self.kubeconfig = kubeconfig
        self.client = kube_config.new_client_from_config(config_file=str(kubeconfig))
        self.url: str = self.client.configuration.host
        self._kinds: dict[tuple[str, str], Resource] = {}
        self._discovered: set[str] = set()
        self._version: str | None = None

    def request(self, method: str, path: str, query: dict[str, str] | None = None, body: Any = None,
                content_type: str = "application/json", raw: bool = False) -> Any:
        """One request; the answer's JSON (its text when ``raw``); a non-2xx is an ApiError."""
        headers = {"Accept": "*/*" if raw else "application/json", "User-Agent": FIELD_MANAGER}
        if body is not None:
            headers["Content-Type"] = content_type
        serialized = self.client.param_serialize(method, path, query_params=list((query or {}).items()),
                                                 header_params=headers, body=body, auth_settings=["BearerToken"])
        response = self.client.call_api(*serialized, _request_timeout=REQUEST_TIMEOUT_S)
        data = response.read() or b""
        if not 200 <= response.status < 300:
            raise _api_error(response.status, data)
        if raw:
            return data.decode("utf-8", errors="replace")
        return json.loads(data) if data else None

    def resource(self, api_version: str, kind: str) -> Resource:
        """Where objects of ``kind`` live (KeyError: the cluster serves no such kind)."""
        if api_version not in self._discovered:
            self._discover(api_version)
        found = self._kinds.get((api_version, kind))
        if found is None:
            raise KeyError(f"unknown kind {kind} in {api_version}")
        return found

    def _discover(self, api_version: str) -> None:
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        try:
            listed = self.request("GET", path)["resources"]
        except ApiError as error:
            if error.code != 404:
                raise
            listed = []
        subresources: dict[str, set[str]] = {}
        for entry in listed:
            plural, _, sub = entry["name"].partition("/")
            if sub:
                subresources.setdefault(plural, set()).add(sub)
        for entry in listed:
            if "/" not in entry["name"]:
                self._kinds[(api_version, entry["kind"])] = Resource(
                    api_version, entry["kind"], entry["name"], bool(entry.get("namespaced")),
                    frozenset(subresources.get(entry["name"], ())))
        self._discovered.add(api_version)

    @property
    def version(self) -> str:
        """The server's ``major.minor`` (``/version``)."""
        if self._version is None:
            answer = self.request("GET", "/version")
            self._version = f"{answer['major']}.{str(answer['minor']).rstrip('+')}"
        return self._version

    def schedulable_nodes(self) -> builtins.list[str]:
        """Nodes a plain pod can land on: Ready, not cordoned, no NoSchedule/NoExecute taint
        (kind's control-plane node in a multi-node cluster is not one; a single node is)."""
        names = []
        for node in self.request("GET", "/api/v1/nodes")["items"]:
            spec, status = node.get("spec") or {}, node.get("status") or {}
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            tainted = any(t.get("effect") in ("NoSchedule", "NoExecute") for t in spec.get("taints") or [])
            if ready and not tainted and not spec.get("unschedulable"):
                names.append(node["metadata"]["name"])
        return names


def _api_error(code: int, data: bytes) -> ApiError:
    """The server's Status as fakekube's ApiError (a body that is no Status: its text)."""
    try:
        status = json.loads(data)
    except ValueError:
        status = None
    if not isinstance(status, dict) or status.get("kind") != "Status":
        return ApiError(code, "Unknown", data.decode("utf-8", errors="replace").strip())
    details = status.get("details")
    return ApiError(int(status.get("code") or code), status.get("reason") or "Unknown", status.get("message") or "",
                    details if isinstance(details, dict) else None)


def namespace_stem(test_name: str) -> str:
    """``fakekube-<test name made a DNS label>-`` for generateName."""
    slug = re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")[:NAMESPACE_TEST_CHARS].strip("-")
    return f"{NAMESPACE_PREFIX}{slug + '-' if slug else ''}"


def kubeconfig_for_test(original: Path, namespace: str, folder: Path) -> Path:
    """A copy of ``original`` whose current context defaults to ``namespace`` (so kubectl and
    clients that take the context's namespace work in the test's), its relative file paths
    made absolute (they were relative to the original's folder)."""
    loaded = yaml.safe_load(original.read_text(encoding="utf-8"))
    base = original.parent
    for section, keys in (("clusters", ("certificate-authority",)),
                          ("users", ("client-certificate", "client-key", "tokenFile"))):
        for entry in loaded.get(section) or []:
            inner = entry.get(section[:-1]) or {}
            for key in keys:
                if isinstance(inner.get(key), str) and not Path(inner[key]).is_absolute():
                    inner[key] = str(base / inner[key])
    current = loaded["current-context"]
    for entry in loaded.get("contexts") or []:
        if entry.get("name") == current:
            entry.setdefault("context", {})["namespace"] = namespace
    path = folder / f"{namespace}.kubeconfig"
    path.write_text(yaml.safe_dump(loaded, sort_keys=False), encoding="utf-8")
    return path


class RealCluster:
    """The ``fakekube`` fixture's object on a real cluster: ``fakekube.Cluster``'s face for
    objects, pods and waiting, over HTTP, in the test's own namespace (see the module)."""

    def __init__(self, connection: Connection, namespace: str, kubeconfig: Path) -> None:
        self._connection = connection
        #: The test's namespace: where objects go when none is named, and what is deleted after.
        self.namespace = namespace
        self._kubeconfig = kubeconfig
        #: (resource, namespace, name) of what the face made outside its namespace, in order.
        self._made_elsewhere: builtins.list[tuple[Resource, str, str]] = []
        #: Real clusters have none of fakekube's 500s to collect: the fixture's check is empty.
        self.internal_errors: builtins.list[BaseException] = []

    def __getattr__(self, name: str) -> Any:
        """A ``Cluster`` method a real cluster has no equivalent for: the test skips, saying why."""
        if name.startswith("_") or name not in NO_EQUIVALENT:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        needs_fakekube(f"{name}()" if name not in ("now", "config", "store", "engine", "api") else name,
                       NO_EQUIVALENT[name])

    # -- where to reach it -----------------------------------------------------
    @property
    def kubeconfig(self) -> str:
        """The test's kubeconfig: the target's, its context defaulting to the test's namespace."""
        return str(self._kubeconfig)

    @property
    def url(self) -> str:
        return self._connection.url

    def client(self, token: str | None = None) -> Any:
        """A ``kubernetes.client.ApiClient`` for the cluster, as the kubeconfig's user or with
        a bearer ``token``."""
        from kubernetes import client, config as kube_config
        if token is None:
            return kube_config.new_client_from_config(config_file=str(self._kubeconfig))
        configuration = client.Configuration()
        kube_config.load_kube_config(config_file=str(self._kubeconfig), client_configuration=configuration)
        configuration.api_key = {"authorization": f"Bearer {token}"}
        configuration.cert_file = configuration.key_file = None
        return client.ApiClient(configuration)

    # -- objects -----------------------------------------------------------------
    def _where(self, rt: Resource, namespace: str | None) -> str:
        return (namespace or self.namespace) if rt.namespaced else ""

    def _body_key(self, rt: Resource, obj: Obj) -> tuple[str, str]:
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(meta, dict) or not meta.get("name"):
            raise ValueError(f"the {rt.kind} needs metadata.name: it names the object to write")
        return self._where(rt, meta.get("namespace")), meta["name"]

    def _made(self, rt: Resource, namespace: str, obj: Obj) -> Obj:
        """Remember an object made outside the test's namespace, to delete it after the test."""
        if namespace != self.namespace:
            key = (rt, namespace, obj["metadata"]["name"])
            if key not in self._made_elsewhere:
                self._made_elsewhere.append(key)
        return obj

    def create(self, obj: Obj, *, field_manager: str = "") -> Obj:
        """Create ``obj`` (``POST``); in the test's namespace unless it names one."""
        rt = self._connection.resource(obj["apiVersion"], obj["kind"])
        namespace = self._where(rt, (obj.get("metadata") or {}).get("namespace"))
        query = {"fieldManager": field_manager} if field_manager else None
        created = self._connection.request("POST", rt.path(namespace), query, obj)
        return self._made(rt, namespace, created)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        """One object (404: ApiError); in the test's namespace unless one is named."""
        rt = self._connection.resource(api_version, kind)
        return self._connection.request("GET", rt.path(self._where(rt, namespace), name))

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str = "",
             field_selector: str = "") -> builtins.list[Obj]:
        """Objects, each with apiVersion and kind: the test's namespace's unless one is named
        (``namespace=""``: every namespace's, as ``Cluster.list`` lists a fake cluster's)."""
        rt = self._connection.resource(api_version, kind)
        where = (self.namespace if namespace is None else namespace) if rt.namespaced else ""
        query = {key: value for key, value in (("labelSelector", label_selector),
                                               ("fieldSelector", field_selector)) if value}
        items = self._connection.request("GET", rt.path(where), query)["items"]
        return [{"apiVersion": rt.api_version, "kind": rt.kind, **item} for item in items]

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        rt = self._connection.resource(api_version, kind)
        self._connection.request("DELETE", rt.path(self._where(rt, namespace), name))

    def apply(self, obj: Obj, *, field_manager: str, force: bool = False, subresource: str = "") -> Obj:
        """Server-side apply (``PATCH`` ``application/apply-patch+yaml``)."""
        rt = self._connection.resource(obj["apiVersion"], obj["kind"])
        namespace, name = self._body_key(rt, obj)
        query = {"fieldManager": field_manager, **({"force": "true"} if force else {})}
        applied = self._connection.request("PATCH", rt.path(namespace, name, subresource), query, obj,
                                           "application/apply-patch+yaml")
        return self._made(rt, namespace, applied)

    def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str | None = None,
              patch_type: str = "strategic", *, field_manager: str = "", subresource: str = "") -> Obj:
        """``"strategic"``, ``"merge"`` or ``"json"``, as ``kubectl patch --type``."""
        media = PATCH_TYPES.get(patch_type)
        if media is None:
            raise ValueError(f"patch_type must be one of {', '.join(PATCH_TYPES)}, got {patch_type!r} "
                             "(server-side apply is Cluster.apply)")
        rt = self._connection.resource(api_version, kind)
        query = {"fieldManager": field_manager} if field_manager else None
        return self._connection.request("PATCH", rt.path(self._where(rt, namespace), name, subresource),
                                        query, patch, media)

    def update(self, obj: Obj, *, field_manager: str = "", subresource: str = "") -> Obj:
        """``PUT``: ``metadata.resourceVersion`` must be the stored one (else 409)."""
        rt = self._connection.resource(obj["apiVersion"], obj["kind"])
        namespace, name = self._body_key(rt, obj)
        query = {"fieldManager": field_manager} if field_manager else None
        return self._connection.request("PUT", rt.path(namespace, name, subresource), query, obj)

    def scale(self, api_version: str, kind: str, name: str, replicas: int, namespace: str | None = None, *,
              field_manager: str = "") -> Obj:
        """The ``scale`` subresource; returns the autoscaling/v1 Scale."""
        rt = self._connection.resource(api_version, kind)
        where = self._where(rt, namespace)
        body = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name, "namespace": where},
                "spec": {"replicas": replicas}}
        query = {"fieldManager": field_manager} if field_manager else None
        return self._connection.request("PUT", rt.path(where, name, "scale"), query, body)

    def events(self, namespace: str | None = None, involved_name: str | None = None,
               reason: str | None = None) -> builtins.list[Obj]:
        """core/v1 Events (the test's namespace's unless one is named; ``""``: all), oldest
        last write first, filtered as ``Cluster.events`` filters."""
        fields = [f"involvedObject.name={involved_name}"] if involved_name else []
        fields += [f"reason={reason}"] if reason else []
        found = self.list("v1", "Event", self.namespace if namespace is None else namespace,
                          field_selector=",".join(fields))
        return sorted(found, key=_event_time)

    # -- pods ----------------------------------------------------------------------
    def logs(self, pod: str, namespace: str | None = None, container: str | None = None, *, previous: bool = False,
             tail_lines: int | None = None, since_seconds: int | None = None, timestamps: bool = False) -> str:
        """``GET pods/<pod>/log`` as text."""
        query = {key: value for key, value in (("container", container or ""), ("previous", "true" if previous else ""),
                                               ("timestamps", "true" if timestamps else ""),
                                               ("tailLines", "" if tail_lines is None else str(tail_lines)),
                                               ("sinceSeconds", "" if since_seconds is None else str(since_seconds)))
                 if value}
        return self._connection.request("GET", f"/api/v1/namespaces/{namespace or self.namespace}/pods/{pod}/log",
                                        query, raw=True)

    def exec(self, pod: str, command: Sequence[str], namespace: str | None = None, container: str | None = None, *,
             stdin: str | bytes | None = None) -> ExecResult:
        """``pods/exec`` over the official client's WebSocket, run to its end: stdout, stderr
        and the exit code; a failure to start (no such program, a container not running) is
        the server's Status as an ApiError, as ``Cluster.exec`` raises it."""
        if isinstance(command, str) or not command:
            raise ValueError(f"command must be a non-empty list of arguments, e.g. ['sh', '-c', 'date'], got {command!r}")
        from kubernetes import client
        from kubernetes.stream import stream
        options: dict[str, Any] = {"container": container} if container else {}
        try:
            session = stream(client.CoreV1Api(self._connection.client).connect_get_namespaced_pod_exec, pod,
                             namespace or self.namespace, command=list(command), stderr=True, stdout=True, tty=False,
                             stdin=stdin is not None, _preload_content=False, **options)
        except client.ApiException as error:
            raise _api_error(error.status or 500, (error.body or str(error.reason)).encode()
                             if isinstance(error.body or "", str) else error.body) from None
        return _run_session(session, stdin)

    # -- waiting -------------------------------------------------------------------
    def wait_for(self, obj: Obj, condition: waiting.Condition, timeout_virtual_s: float | timedelta,
                 namespace: str | None = None) -> Obj | None:
        """Read the object every :data:`POLL_INTERVAL_S` real seconds until ``condition`` holds
        (the conditions of ``Cluster.wait_for``); the timeout is taken as *real* seconds.
        ``WaitTimeout`` past it, naming the object, the condition and its last status."""
        seconds = checked_seconds(timeout_virtual_s.total_seconds() if isinstance(timeout_virtual_s, timedelta)
                                  else timeout_virtual_s, "timeout_virtual_s")
        predicate = waiting.parse(condition)
        api_version, kind = obj["apiVersion"], obj["kind"]
        meta = obj.get("metadata") or {}
        name = meta.get("name") or obj.get("name")
        if not name:
            raise ValueError("wait_for needs an object with metadata.name or a reference with a name")
        rt = self._connection.resource(api_version, kind)
        where = self._where(rt, namespace or meta.get("namespace") or obj.get("namespace"))
        deadline = time.monotonic() + seconds
        while True:
            seen = self._get_or_none(rt, where, name)
            if predicate.test(seen):
                return seen
            if time.monotonic() >= deadline:
                shown = f"{rt.kind} {where + '/' if where else ''}{name}"
                raise waiting.WaitTimeout(f"{shown}: {predicate.text} did not hold within {seconds:g} real seconds "
                                          f"(a real cluster: timeout_virtual_s is taken as real seconds); last "
                                          f"status: {waiting.last_status(seen)}", seen)
            time.sleep(POLL_INTERVAL_S)

    def _get_or_none(self, rt: Resource, namespace: str, name: str) -> Obj | None:
        try:
            return self._connection.request("GET", rt.path(namespace, name))
        except ApiError as error:
            if error.code == 404:
                return None
            raise

    # -- after the test ------------------------------------------------------------
    def clean_up(self) -> builtins.list[str]:
        """Delete what the test made: the objects made outside its namespace (newest first),
        then the namespace; what could not be deleted is returned as text, never raised."""
        failures = []
        namespaces = self._connection.resource("v1", "Namespace")
        for rt, namespace, name in [*reversed(self._made_elsewhere), (namespaces, "", self.namespace)]:
            try:
                self._connection.request("DELETE", rt.path(namespace, name), {"propagationPolicy": "Background"})
            except ApiError as error:
                if error.code != 404:
                    failures.append(f"{rt.kind} {namespace + '/' if namespace else ''}{name}: {error}")
        return failures


def _event_time(event: Obj) -> str:
    return last_seen(event) or ""


def _run_session(session: Any, stdin: str | bytes | None) -> ExecResult:
    """Feed ``stdin`` (then close it: v5.channel.k8s.io), wait for the end, read what came."""
    if stdin is not None:
        session.write_stdin(stdin if isinstance(stdin, str) else stdin.decode("utf-8", errors="replace"))
        session.close_channel(0)
    session.run_forever(timeout=EXEC_TIMEOUT_S)
    out, err = session.read_stdout() or "", session.read_stderr() or ""
    error = session.read_channel(3)
    status = json.loads(error) if error else {"status": "Success"}
    if status.get("status") == "Success":
        return ExecResult(out, err, 0)
    if status.get("reason") == "NonZeroExitCode":
        return ExecResult(out, err, _exit_code(status))
    details = status.get("details")
    raise ApiError(int(status.get("code") or 500), status.get("reason") or "InternalError",
                   status.get("message") or "", details if isinstance(details, dict) else None)


def _exit_code(status: Obj) -> int:
    """The exit code a NonZeroExitCode Status carries (its ``ExitCode`` cause), as kubectl reads it."""
    causes = (status.get("details") or {}).get("causes") or []
    code = next((cause.get("message") for cause in causes if cause.get("reason") == "ExitCode"), None)
    return int(code) if code is not None and str(code).isdigit() else 1


def open_face(connection: Connection, test_name: str, folder: Path) -> RealCluster:
    """A new namespace for the test (the server completes its name) and the face over it."""
    made = connection.request("POST", "/api/v1/namespaces", None, {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"generateName": namespace_stem(test_name),
                     "labels": {"app.kubernetes.io/managed-by": "pytest-fakekube"}}})
    namespace = made["metadata"]["name"]
    _await_service_account(connection, namespace)
    return RealCluster(connection, namespace, kubeconfig_for_test(connection.kubeconfig, namespace, folder))


def _await_service_account(connection: Connection, namespace: str) -> None:
    """Wait (real time, at most :data:`SERVICE_ACCOUNT_WAIT_S`) for the controller to make the
    namespace's ``default`` ServiceAccount: until then the ServiceAccount admission plugin
    refuses every pod there (403 "serviceaccount \"default\" not found"), a race a test
    creating a pod at once would lose. Past the wait the test goes on and meets the server's
    answer (a bare apiserver has no such controller)."""
    deadline = time.monotonic() + SERVICE_ACCOUNT_WAIT_S
    while True:
        try:
            connection.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
            return
        except ApiError as error:
            if error.code != 404 or time.monotonic() >= deadline:
                return
        time.sleep(POLL_INTERVAL_S)


#: Settings a real cluster meets without being configured: ignored there (the seed decides
#: fakekube's names and UIDs, which a real cluster draws itself; the guard checks fakekube's store).
IGNORED_SETTINGS = ("seed", "immutability_guard")


def unmet_setting(connection: Connection, explicit: dict[str, tuple[Any, str]]) -> str | None:
    """Why the real cluster cannot be the one these settings (field → (value, where it came
    from)) ask for, or None: ``nodes`` must be the count of schedulable nodes, the release
    the server's; anything else configures fakekube and has no equivalent."""
    for field, (value, source) in explicit.items():
        if field in IGNORED_SETTINGS:
            continue
        if field == "nodes" and isinstance(value, int):
            nodes = connection.schedulable_nodes()
            if len(nodes) != value:
                return (f"needs {value} schedulable node(s) (nodes={value}, {source}); the real cluster has "
                        f"{len(nodes)} (Ready, not cordoned, no NoSchedule/NoExecute taint)")
        elif field == "kubernetes_version":
            wanted = str(value).lstrip("v")
            if wanted != connection.version:
                return (f"needs Kubernetes {wanted} (kubernetes_version={value!r}, {source}); "
                        f"the real cluster serves {connection.version}")
        else:
            return (f"needs fakekube's configuration: {field}={value!r} ({source}) has no equivalent on a real "
                    "cluster, which is configured by whoever made it")
    return None


def real_report(face: RealCluster, target: str, replay: str) -> str:
    """The failure report's text for a test that ran on a real cluster: what it is, the
    test namespace's events and pods, the nodes, why Pending pods wait (their PodScheduled
    condition), the command that runs the test again there. No seed or cluster time: a real
    cluster has neither to replay."""
    from fakekube.cluster.report import build_real_report
    header = (f"a real cluster ({target}, {face.url}), namespace {face.namespace}: no virtual clock, no seed "
              f"(the timings are the cluster's own)")
    connection = face._connection
    return build_real_report(header, face.events(), connection.request("GET", "/api/v1/nodes")["items"],
                             face.list("v1", "Pod"), replay)

