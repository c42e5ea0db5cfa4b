"""The simulated kubelets' pod lifecycle, as one engine controller for every node.

For each pod bound to a simulated node (``spec.nodeName`` names a Node object whose kubelet
is up) the :class:`PodRunner` plays what upstream's kubelet does, on the virtual clock and
with behaviour as data (:class:`~fakekube.kubelet.behaviour.BehaviourCatalog`):

* at the first sync: ``startTime``, ``hostIP``, a ``podIP`` from the node's ``podCIDR``
  (the next free address after the last one handed out, as CNI host-local does), the
  sandbox condition, every container waiting (``ContainerCreating`` / ``PodInitializing``);
* init containers one at a time, in order, each to a zero exit — a sidecar (``restartPolicy:
  Always``) only until it has started, then it keeps running and restarting beside the
  others and is stopped last (:mod:`~fakekube.kubelet.sidecars`); then every regular
  container: pull (or ``ErrImagePull`` → ``ImagePullBackOff`` and retries), create/start,
  Running, Started/Ready from the probe plan, exit or probe kill, restarts by
  ``restartPolicy`` with CrashLoopBackOff (:mod:`~fakekube.kubelet.containers`);
* the phase and conditions upstream computes (:mod:`~fakekube.kubelet.podstatus`);
* graceful deletion: each running container is stopped as upstream's ``killContainer``
  stops it — preStop hook, SIGTERM, SIGKILL when the grace runs out
  (:mod:`~fakekube.kubelet.termination`) — sidecars after the app containers, then the
  terminal status is written and the pod deleted with grace 0;
* images as upstream's image manager gets them (``imagePullPolicy``, the node's images,
  :mod:`~fakekube.kubelet.registry`), and each container's program run at each start on
  that instance's filesystem (kubelet/programs.py, kubelet/podfs.py: what earlier init
  containers wrote is there, its own writes land at their times);
* ``pods/exec`` on the container's files, with stdin as a session (kubelet/execs.py,
  kubelet/execsession.py), and mounted ConfigMaps and Secrets followed at the pod's sync;
* what a pod answers over HTTP (:meth:`PodRunner.http`, port-forward and the proxy) and
  requests made from inside the cluster (:meth:`PodRunner.request`);
* the kubelet's events (source ``kubelet``/node name, reportingInstance the node name,
  ``involvedObject.fieldPath`` ``spec.containers{c}`` / ``spec.initContainers{c}``), with
  upstream's texts (:mod:`fakekube.kubelet.events`), stamped with the instant each step
  happened and correlated like client-go's recorder (:mod:`fakekube.engine.events`).

Writes: the status subresource only when it changed, once per reconcile (and reconciles
happen at the instants something changes: one timer per pod, at its next due instant).

Memory bound: one :class:`PodState` per live pod this runner has started (forgotten when
the pod object goes, or is replaced by one with a new uid); each container keeps only its
current and previous instance. Back-off entries are bounded by
:data:`~fakekube.kubelet.backoff.MAX_BACKOFF_ENTRIES` and dropped with their pod.

A pod on a node with no Node object, or whose kubelet is down (``node_is_up``), is left
alone: its timers fire and do nothing. A new pod (not hostNetwork) waits, untouched, until
its node has a podCIDR. A mirror pod is known by its static pod's config hash
(:func:`~fakekube.kubelet.staticpods.pod_identity`), so a recreated one keeps running.
The key ``node/<name>`` wakes every pod on a node: the runner makes it itself when the
node gets its podCIDR, and the cluster enqueues it when the node's kubelet comes back;
the pods then catch up to the current instant.
"""

from __future__ import annotations

import functools
import ipaddress
import posixpath
import shlex
from datetime import datetime
from typing import Any, Callable, Iterable, Protocol, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import DEFAULT_EPOCH, format_rfc3339
from fakekube.clock import parse_time
from fakekube.engine import Context
from fakekube.engine.events import EventSource, object_reference
from fakekube.kubelet.backoff import ImagePullBackoff, RestartBackoff
from fakekube.kubelet import execs
from fakekube.kubelet.behaviour import BehaviourCatalog
from fakekube.kubelet.execs import ExecResult
from fakekube.kubelet.execsession import ExecSession
from fakekube.kubelet import events as texts
from fakekube.kubelet import hooks, httpmodel, programs
from fakekube.kubelet.httpmodel import HttpAnswer, HttpRequest
from fakekube.kubelet.imageref import familiar_repository
from fakekube.kubelet.behaviour import ContainerBehaviour, Overlay
from fakekube.kubelet.containers import RUNNING, ContainerRun, RunContext
from fakekube.kubelet.events import KUBELET, EventText
from fakekube.kubelet.clusternet import ClusterNetwork
from fakekube.kubelet.fs import Overlay as FsOverlay
from fakekube.kubelet.podfs import Filesystems, Sources
from fakekube.kubelet.programs import program_argv
from fakekube.kubelet.registry import ImageCatalog, pull_error
from fakekube.kubelet.termination import (
    IMAGE_PROGRAMS,
    HookOutcome,
    StopResponse,
    container_shares_pid_namespace,
    declared_response,
    is_known_server,
    signal_overlay,
)
from fakekube.kubelet.logs import PREVIOUS_NOT_FOUND, ContainerLog, LogCursor, PodLogOptions, read_logs
from fakekube.kubelet.logstream import ContainerFollow
from fakekube.kubelet.podstatus import (
    TERMINAL_PHASES,
    container_status,
    observed_generation,
    pod_conditions,
    pod_phase,
)
from fakekube.kubelet import sidecars
from fakekube.kubelet.staticpods import pod_identity
from fakekube.objects.indexes import POD_NODE_NAME, pod_node_name
from fakekube.objects.kinds import (
    CONFIGMAPS, ENDPOINTS, NODES, PERSISTENT_VOLUME_CLAIMS, PODS, SECRETS, SERVICES, Resource)
from fakekube.objects.serviceroutes import Unreachable, resolve
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]
#: Key prefix that wakes every pod on one node (``node/<name>``).
NODE_KEY = "node/"
#: Key prefix of a ConfigMap or Secret change (``source/<plural>/<namespace>/<name>``): mounted files follow it.
SOURCE_KEY = "source/"
_READABLE = {"configmaps": CONFIGMAPS, "secrets": SECRETS, "persistentvolumeclaims": PERSISTENT_VOLUME_CLAIMS,
             "services": SERVICES, "endpoints": ENDPOINTS, "pods": PODS}

#: Steps one pod may take in one reconcile before the runner calls it a loop (a bug, not a pod).
MAX_STEPS_PER_SYNC = 10_000
#: ``terminationGracePeriodSeconds`` when a pod spec has none (the API defaults it to this).
DEFAULT_TERMINATION_GRACE_S = 30.0
#: Pod IPs start after the network address and the bridge/gateway address (.0 and .1).
FIRST_POD_HOST_INDEX = 1


@functools.lru_cache(maxsize=1024)
def _pod_host_range(cidr: str) -> tuple[int, int]:
    """(first pod address as an int, how many) in ``cidr``: its usable hosts (as
    ``ipaddress`` counts them) after the bridge's; (0, 0) for no or a bad CIDR. Arithmetic,
    not a list of hosts: listing a /24 per pod start was most of starting 150,000 pods."""
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return 0, 0
    first, count = int(network.network_address), network.num_addresses
    if network.version == 4 and count > 2:
        first, count = first + 1, count - 2  # neither the network nor the broadcast address
    elif network.version == 6 and count > 2:
        first, count = first + 1, count - 1  # not the subnet-router anycast address
    return first + FIRST_POD_HOST_INDEX, max(0, count - FIRST_POD_HOST_INDEX)


class PodIPs:
    """Pod IP allocation per node from its ``spec.podCIDR``, like CNI host-local: deterministic,
    round-robin (a freed address is not handed out again until the range wraps)."""

    def __init__(self) -> None:
        self._used: dict[str, set[str]] = {}
        self._last: dict[str, int] = {}

    def allocate(self, node: str, cidr: str) -> str | None:
        """The next free address after the last one given out on ``node``; None when full or no CIDR."""
        first, count = _pod_host_range(cidr)
        used = self._used.setdefault(node, set())
        start = self._last.get(node, -1) + 1
        for offset in range(count):
            index = (start + offset) % count
            address = str(ipaddress.ip_address(first + index))
            if address not in used:
                used.add(address)
                self._last[node] = index
                return address
        return None

    def release(self, node: str, address: str) -> None:
        self._used.get(node, set()).discard(address)


class PodState:
    """The kubelet's memory of one pod: its containers' runs and what it was given. The runs
    are tuples (never edited: an ephemeral container replaces the tuple), so a pod without
    init or ephemeral containers holds the shared empty tuple and a snapshot copies less."""

    __slots__ = ("uid", "node", "label", "restart_policy", "start_time", "host_ip", "pod_ip", "owns_ip", "init_runs",
                 "runs", "terminating", "ephemeral_runs")

    def __init__(self, uid: str, node: str, label: str, restart_policy: str, start_time: datetime, host_ip: str,
                 pod_ip: str | None, owns_ip: bool, init_runs: tuple[ContainerRun, ...],
                 runs: tuple[ContainerRun, ...], terminating: bool = False) -> None:
        self.uid = uid
        self.node = node
        self.label = label  # upstream's format.Pod: name_namespace(uid)
        self.restart_policy = restart_policy
        self.start_time = start_time
        self.host_ip = host_ip
        self.pod_ip = pod_ip
        self.owns_ip = owns_ip
        self.init_runs = init_runs
        self.runs = runs
        self.terminating = terminating
        #: ``kubectl debug``'s containers, in the order they were added to the pod.
        self.ephemeral_runs: tuple[ContainerRun, ...] = ()

    @property
    def all_runs(self) -> tuple[ContainerRun, ...]:
        return self.init_runs + self.runs + self.ephemeral_runs

    def next_due(self) -> datetime | None:
        dues = [run.due for run in self.all_runs if run.due is not None]
        return min(dues) if dues else None

    def finished_terminating(self) -> bool:
        return self.terminating and not any(run.stage == RUNNING for run in self.all_runs)


class ObjectReads(Protocol):
    """Reads of stored objects, for requests that cross the cluster's network."""

    def get(self, resource: Resource, namespace: str, name: str) -> Obj | None: ...
    def list(self, resource: Resource) -> list[Obj]: ...


class _NoObjects:
    def get(self, resource: Resource, namespace: str, name: str) -> Obj | None:
        return None

    def list(self, resource: Resource) -> list[Obj]:
        return []


NO_OBJECTS = _NoObjects()


class PodRunner:
    """Runs the pods of every simulated node (see the module docstring)."""

    name = "kubelet-pods"
    resources = (PODS, NODES, CONFIGMAPS, SECRETS)
    #: A node gives a key when it gets its podCIDR, which a heartbeat never moves (engine/routing.py).
    keyless_heartbeats = True
    indexes = ((PODS, POD_NODE_NAME, pod_node_name),)

    def __init__(self, catalog: BehaviourCatalog = BehaviourCatalog(),
                 node_is_up: Callable[[str], bool] = lambda node: True,
                 restart_backoff: RestartBackoff | None = None,
                 pull_backoff: ImagePullBackoff | None = None,
                 image_pulled: Callable[[str, str], None] = lambda node, image: None,
                 image_held: Callable[[str, str], bool] = lambda node, image: False,
                 images: ImageCatalog = ImageCatalog(),
                 observed_generation: bool = True) -> None:
        self.catalog = catalog
        #: Which images pull (kubelet/registry.py), and (node, image): does the node hold it?
        self.images = images
        self._image_held = image_held
        #: PodObservedGenerationTracking (on from 1.34): the status says which pod generation it shows.
        self._observed_generation = observed_generation
        self._node_is_up = node_is_up
        #: (node, image): a container pulled an image there (the node's status lists it).
        self._image_pulled = image_pulled
        self._restart_backoff = restart_backoff or RestartBackoff()
        self._pull_backoff = pull_backoff or ImagePullBackoff()
        self._pods: dict[str, PodState] = {}
        self._ips = PodIPs()
        #: Execs answered so far: each gets its own (derived) exec id.
        self._execs = 0
        #: Every container's files (kubelet/podfs.py): plain data, like the rest of this state.
        self.filesystems = Filesystems()
        #: The cluster's objects as in-cluster requests read them (:meth:`request`); the
        #: cluster plugs in the store (none by default: no Service exists).
        self.reads: ObjectReads = NO_OBJECTS

    def _image_present(self, node: str, image: str) -> bool:
        """Does ``node`` hold ``image``: pulled there, listed in its status, or preloaded by
        kind's node image?"""
        return self._image_held(node, image) or self.images.preloaded_image(image)

    def __len__(self) -> int:
        """Pods this runner currently remembers (the memory bound in the module docstring)."""
        return len(self._pods)

    # -- engine interface -------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        """A bound pod; a node that just got its podCIDR (its waiting pods may start)."""
        if change.resource in (CONFIGMAPS.plural, SECRETS.plural):
            # Only a mounted one matters (a membership test of the runner's map: it names keys, keeps nothing).
            if not self.filesystems.watched(change.resource, change.namespace, change.name):
                return []
            return [f"{SOURCE_KEY}{change.resource}/{change.namespace}/{change.name}"]
        if change.resource == NODES.plural:
            gets_network = change.type not in (ADDED, DELETED) and _pod_cidr(change.obj) and not _pod_cidr(change.prev)
            return [NODE_KEY + change.name] if gets_network else []
        if ((change.obj or {}).get("spec") or {}).get("nodeName"):
            return [f"{change.namespace}/{change.name}"]
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(NODE_KEY):
            self._wake_node(key[len(NODE_KEY):], ctx)
            return
        if key.startswith(SOURCE_KEY):
            self._source_changed(key[len(SOURCE_KEY):], ctx)
            return
        namespace, name = key.split("/", 1)
        pod = ctx.get(PODS, name, namespace)
        state = self._pods.get(key)
        if state is not None and (pod is None or pod_identity(pod) != state.uid):
            self._forget(key, state, ctx)
            state = None
        if pod is None:
            return
        node_name = pod["spec"].get("nodeName") or ""
        node = ctx.get(NODES, node_name)
        if node is None or not self._node_is_up(node_name):
            return
        if state is None:
            if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
                return  # finished before this kubelet knew it: nothing left to run
            if not network_ready(pod, node):
                return  # no podCIDR yet: the sandbox waits for the node's network (node/<name> wakes it)
            state = self._pods[key] = self._admit(pod, node, ctx)
            self.filesystems.admit(key, pod, ctx.now.timestamp(), self._sources(ctx, state.node))
        elif key in self.filesystems.pods:
            self.filesystems.metadata_changed(key, pod, ctx.now.timestamp())
        self._sync(key, pod, state, ctx)
        self.filesystems.pack(key)

    def _wake_node(self, node: str, ctx: Context) -> None:
        """Every pod bound to ``node`` (and every one it ran there) catches up to now."""
        keys = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in ctx.by_index(PODS, POD_NODE_NAME, node)}
        keys |= {key for key, state in self._pods.items() if state.node == node}
        for key in sorted(keys):
            ctx.enqueue(key)

    # -- one pod ------------------------------------------------------------------
    def _admit(self, pod: Obj, node: Obj, ctx: Context) -> PodState:
        """The first sync: what the kubelet decides once for the pod's life."""
        meta, spec = pod["metadata"], pod["spec"]
        node_name = spec["nodeName"]
        host_ip = node_internal_ip(node)
        host_network = bool(spec.get("hostNetwork"))
        pod_ip = host_ip if host_network else self._ips.allocate(node_name, (node.get("spec") or {}).get("podCIDR") or "")
        policy = spec.get("restartPolicy") or "Always"
        start = parse_time((pod.get("status") or {}).get("startTime")) or ctx.now

        def runs(kind: str, init: bool) -> tuple[ContainerRun, ...]:
            return tuple(self._container_run(pod, c, init, policy, ctx.now) for c in spec.get(kind) or [])

        return PodState(uid=pod_identity(pod), node=node_name,
                        label=f"{meta['name']}_{meta['namespace']}({meta.get('uid', '')})",
                        restart_policy=policy, start_time=start, host_ip=host_ip, pod_ip=pod_ip,
                        owns_ip=not host_network and pod_ip is not None,
                        init_runs=runs("initContainers", True), runs=runs("containers", False))

    def _container_run(self, pod: Obj, spec: Obj, init: bool, policy: str, now: datetime,
                       ephemeral: bool = False) -> ContainerRun:
        """A container's run, with the behaviour its image rules and annotation give; its own
        program runs when an instance starts (:meth:`_program_started`), on its filesystem."""
        return ContainerRun(spec, self.catalog.for_container(pod, spec["name"]), init, policy, ephemeral=ephemeral)

    def _sync(self, key: str, pod: Obj, state: PodState, ctx: Context) -> None:
        run_ctx = self._run_context(pod, state, ctx)
        self._note_deletion(pod, state, ctx.now, run_ctx)
        self._start_ephemeral(pod, state, ctx.now, run_ctx)
        self._catch_up(pod, state, ctx, run_ctx)
        status = self._status(pod, state, ctx.now)
        if status != pod.get("status"):
            ctx.client.update_status(PODS, dict(pod, status=status))
        if state.finished_terminating():
            self._delete(key, pod, state, ctx)
            return
        self._schedule(key, state, ctx)

    def _start_ephemeral(self, pod: Obj, state: PodState, now: datetime, run_ctx: RunContext) -> None:
        """``kubectl debug``: a container added to ``spec.ephemeralContainers`` starts at once
        (SyncPod starts them before init containers, so a stuck init does not hold them),
        runs once and is never restarted; none starts in a pod being deleted."""
        if state.terminating or (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
            return
        known = {run.name for run in state.ephemeral_runs}
        for spec in pod["spec"].get("ephemeralContainers") or []:
            if spec.get("name") in known:
                continue
            run = self._container_run(pod, spec, False, "Never", now, ephemeral=True)
            state.ephemeral_runs += (run,)
            run.begin(now, run_ctx)

    def _run_context(self, pod: Obj, state: PodState, ctx: Context) -> RunContext:
        """What the pod's container steps use, with an event sink writing the kubelet's events."""
        reference = object_reference(pod, "Pod", resource_version=True)
        source = EventSource(KUBELET, state.node)

        def record_text(run: ContainerRun, at: datetime, text: EventText) -> None:
            ctx.record(dict(reference, fieldPath=run.field_path), text.type, text.reason, text.message, source, at)

        def others_running(run: ContainerRun) -> bool:
            return any(other is not run and other.stage == RUNNING for other in state.runs)

        def prestop(run: ContainerRun, at: datetime) -> HookOutcome | None:
            return self._prestop(ctx, pod, state, run, at)

        return RunContext(state.uid, self._restart_backoff, self._pull_backoff, lambda: new_container_id(ctx),
                          DEFAULT_EPOCH, record=record_text, pod_label=state.label, pod_ip=state.pod_ip or "",
                          others_running=others_running,
                          image_pulled=lambda image: self._image_pulled(state.node, image),
                          instance_behaviour=lambda run, at, container_id: self._program_started(
                              ctx, pod, state, run, at, container_id),
                          prestop=prestop, stop_response=lambda run, at: stop_response(run, at),
                          image_present=lambda image: self._image_present(state.node, image),
                          pull_error=lambda image: pull_error(image, self.images),
                          after_start=lambda run, at: self._note_first_start(pod, run, at, record_text),
                          start_error=lambda run: self._start_error(pod, run))

    def _note_deletion(self, pod: Obj, state: PodState, now: datetime, run_ctx: RunContext) -> None:
        """A deletionTimestamp stops every container with the pod's ``deletionGracePeriodSeconds``
        from when the kubelet sees it (kubelet/termination.py: preStop hook, SIGTERM, SIGKILL
        when the grace runs out; a shorter second delete kills sooner), sidecars after the
        others (:mod:`~fakekube.kubelet.sidecars`); the kubelet records ``Killing`` for each
        running one when it first asks it to stop."""
        meta = pod["metadata"]
        if parse_time(meta.get("deletionTimestamp")) is None:
            return
        state.terminating = True
        grace_s = float(meta.get("deletionGracePeriodSeconds") or 0)
        for run in state.all_runs:
            if not run.sidecar and run.begin_stop(now, grace_s, run_ctx):
                run_ctx.record(run, now, texts.stopping(run.name))
        for run in sidecars.stop_in_order(state.init_runs, state.runs, now, grace_s, run_ctx):
            run_ctx.record(run, now, texts.stopping(run.name))

    def _catch_up(self, pod: Obj, state: PodState, ctx: Context, run_ctx: RunContext) -> None:
        """Apply every step due by now, in time order (init containers first on ties)."""
        for _ in range(MAX_STEPS_PER_SYNC):
            self._begin_next(pod, state, run_ctx)
            due = [(run.due, index) for index, run in enumerate(state.all_runs)
                   if run.due is not None and run.due <= ctx.now]
            if not due:
                return
            _, index = min(due)
            state.all_runs[index].step(run_ctx)
        raise RuntimeError(f"pod {state.label} took {MAX_STEPS_PER_SYNC} steps at {ctx.now.isoformat()}")

    def _begin_next(self, pod: Obj, state: PodState, run_ctx: RunContext) -> None:
        """Start whatever's turn came: the next init container once the one before completed (a
        sidecar: started), or all regular ones after the last; stop the sidecars when nothing
        else is left to run."""
        if state.terminating:
            return
        self._stop_finished_sidecars(pod, state, run_ctx)
        turn_at = state.start_time
        for run in state.init_runs:
            if run.sidecar:
                run.begin(turn_at, run_ctx)
                if run.first_started_at is None:
                    return
                turn_at = run.first_started_at
                continue
            if not run.succeeded:
                run.begin(turn_at, run_ctx)
                return
            if run.current is not None and run.current.finished_at is not None:
                turn_at = run.current.finished_at
        for run in state.runs:
            run.begin(turn_at, run_ctx)

    def _stop_finished_sidecars(self, pod: Obj, state: PodState, run_ctx: RunContext) -> None:
        """A pod whose app containers are done for good stops its sidecars, with the pod's grace."""
        done_at = sidecars.finished_at(state.init_runs, state.runs)
        if done_at is None:
            return
        grace = pod["spec"].get("terminationGracePeriodSeconds")
        grace_s = DEFAULT_TERMINATION_GRACE_S if grace is None else float(grace)
        for run in sidecars.stop_in_order(state.init_runs, state.runs, done_at, grace_s, run_ctx):
            run_ctx.record(run, done_at, texts.stopping(run.name))

    def _status(self, pod: Obj, state: PodState, now: datetime) -> Obj:
        current = pod.get("status") or {}
        phase = pod_phase(state.init_runs, state.runs, state.restart_policy, state.finished_terminating(), now)
        if current.get("phase") in TERMINAL_PHASES:
            phase = current["phase"]  # a terminal phase is final
        has_init = bool(state.init_runs)
        generation = observed_generation(pod, self._observed_generation)
        status: Obj = {"observedGeneration": generation} if generation else {}
        status.update({"phase": phase,
                       "conditions": pod_conditions(current.get("conditions") or [], state.init_runs,
                                                    state.runs, phase, now, generation),
                       "hostIP": state.host_ip, "hostIPs": [{"ip": state.host_ip}]})
        if state.pod_ip:
            status.update(podIP=state.pod_ip, podIPs=[{"ip": state.pod_ip}])
        status["startTime"] = format_rfc3339(state.start_time)
        if has_init:
            status["initContainerStatuses"] = [container_status(run, state.label, has_init, now)
                                               for run in state.init_runs]
        status["containerStatuses"] = [container_status(run, state.label, has_init, now) for run in state.runs]
        if state.ephemeral_runs:
            status["ephemeralContainerStatuses"] = [container_status(run, state.label, False, now)
                                                    for run in state.ephemeral_runs]
        for name, value in current.items():
            status.setdefault(name, value)  # qosClass and whatever else others own
        return status

    def _schedule(self, key: str, state: PodState, ctx: Context) -> None:
        """Wake the pod at its next due instant (one timer per pod: an earlier one stands)."""
        due = state.next_due()
        if due is not None:
            ctx.enqueue_at(key, due)

    def _delete(self, key: str, pod: Obj, state: PodState, ctx: Context) -> None:
        """Every container stopped: remove the pod object (grace 0), as the kubelet's status manager does."""
        self._forget(key, state, ctx)
        meta = pod["metadata"]
        try:
            ctx.client.delete(PODS, meta["name"], meta["namespace"], grace_period_s=0, uid=state.uid)
        except ApiError as error:
            if error.code not in (404, 409):
                raise  # gone already, or replaced by a new pod of the same name: nothing to do

    def _forget(self, key: str, state: PodState, ctx: Context) -> None:
        self.filesystems.flush(ctx.now.timestamp(), self._ended)  # what its programs wrote on volumes stays
        self._pods.pop(key, None)
        self.filesystems.forget(key)
        ctx.cancel(key)
        if state.owns_ip and state.pod_ip:
            self._ips.release(state.node, state.pod_ip)
        for run in state.all_runs:
            self._restart_backoff.forget((state.uid, run.name))
            self._pull_backoff.forget((state.uid, run.image))

    # -- what readers of the kubelet see (on the engine thread) ----------------------
    def state_of(self, key: str) -> PodState | None:
        """The kubelet's memory of pod ``namespace/name``, if it runs it."""
        return self._pods.get(key)

    def states(self) -> Iterable[PodState]:
        """Every pod this runner remembers, in admission order."""
        return self._pods.values()

    # -- logs -----------------------------------------------------------------------
    def logs(self, namespace: str, name: str, container: str | None, options: PodLogOptions,
             now: datetime) -> bytes:
        """What ``GET pods/{name}/log`` returns, as the kubelet's log reader would.

        LookupError: no such pod on a simulated kubelet; ValueError: a 400 with upstream's text.
        Call it on the engine thread (``engine.run``) so the pod's state is not moving.
        """
        state = self._pods.get(f"{namespace}/{name}")
        if state is None:
            raise LookupError(f'pods "{name}" not found')
        run = _pick_container(state, name, container)
        instance, previous = _log_instances(run, name)
        current = ContainerLog(instance.log_lines, instance.started_at, instance.finished_at)
        earlier = ContainerLog(previous.log_lines, previous.started_at, previous.finished_at) if previous else None
        try:
            return read_logs(current, options, now, earlier)
        except LookupError:
            raise ValueError(PREVIOUS_NOT_FOUND.format(container=run.name, pod=name)) from None


    def follow(self, namespace: str, name: str, container: str | None, options: PodLogOptions,
               now: datetime) -> ContainerFollow:
        """A ``follow=true`` stream's start: the log so far (as :meth:`logs`) and the instance to
        poll for more, from any thread (:mod:`fakekube.kubelet.logstream`). Same errors as
        :meth:`logs`; call it on the engine thread too.
        """
        key = f"{namespace}/{name}"
        state = self._pods.get(key)
        if state is None:
            raise LookupError(f'pods "{name}" not found')
        run = _pick_container(state, name, container)
        instance, previous = _log_instances(run, name)
        followed = previous if options.previous else instance
        if followed is None:
            raise ValueError(PREVIOUS_NOT_FOUND.format(container=run.name, pod=name))
        log = ContainerLog(followed.log_lines, followed.started_at, followed.finished_at)
        cursor = LogCursor(log, options, now)
        first = cursor.first(now)
        return ContainerFollow(run, followed, cursor, first, lambda: self._pods.get(key) is state)

    def http(self, namespace: str, name: str, port: int, request: HttpRequest) -> HttpAnswer | None:
        """What pod ``namespace/name`` answers on ``port`` (kubelet/httpmodel.py): its
        containers share one network namespace, so the first running one that listens there
        answers; None when none does (the connection is refused). LookupError when this
        runner does not run the pod. Call it on the engine thread, as :meth:`logs`."""
        state = self._pods.get(f"{namespace}/{name}")
        if state is None:
            raise LookupError(f'pods "{name}" not found')
        for run in state.all_runs:
            instance = run.current
            if run.stage != RUNNING or instance is None:
                continue
            behaviour = instance.behaviour or run.behaviour
            answer = httpmodel.answer(behaviour.http, run.spec, run.image, port, request, _runs_own_program(run))
            if answer is not None:
                return answer
        return None

    def request(self, client_namespace: str, host: str, port: int, request: HttpRequest) -> HttpAnswer | Unreachable:
        """An HTTP request made from inside the cluster — ``curl``/``wget`` in a container of
        ``client_namespace`` (the shell model's interface) — to ``host:port``: a Service by
        DNS name or cluster IP through its ready endpoints to its ``targetPort``, or a pod by
        IP (objects/serviceroutes.py), answered by that pod's containers (:meth:`http`).
        :class:`~fakekube.objects.serviceroutes.Unreachable` says what the client prints
        when nothing answers (name not resolved, connection refused). Reads the cluster's
        Services and Endpoints through :attr:`reads` (the cluster wires the store in); on
        the engine thread, as :meth:`exec`."""
        reads = self.reads
        by_ip = {state.pod_ip: key for key, state in self._pods.items() if state.pod_ip and state.owns_ip}

        def pod_at(ip: str) -> Obj | None:
            key = by_ip.get(ip)
            if key is None:
                return None
            namespace, name = key.split("/", 1)
            return {"metadata": {"namespace": namespace, "name": name}}

        backend = resolve(host, port, client_namespace, lambda ns, name: reads.get(SERVICES, ns, name),
                          lambda: reads.list(SERVICES), lambda ns, name: reads.get(ENDPOINTS, ns, name), pod_at)
        if isinstance(backend, Unreachable):
            return backend
        try:
            answer = self.http(backend.namespace, backend.pod, backend.port, request)
        except LookupError:
            answer = None
        if answer is None:
            return Unreachable(f"Failed to connect to {host} port {port}: Connection refused", 0)
        return answer

    def listens(self, namespace: str, name: str, port: int) -> bool:
        """Does a running container of the pod listen on ``port`` (port-forward's dial)?"""
        state = self._pods.get(f"{namespace}/{name}")
        if state is None:
            return False
        return any(port in httpmodel.listening_ports((run.current.behaviour or run.behaviour).http, run.spec,
                                                     run.image, _runs_own_program(run))
                   for run in state.all_runs if run.stage == RUNNING and run.current is not None)

    def pod_uid(self, namespace: str, name: str) -> str | None:
        """The uid of the pod this runner runs as ``namespace/name`` (None: it runs none)."""
        state = self._pods.get(f"{namespace}/{name}")
        return state.uid if state is not None else None

    def attach(self, namespace: str, name: str, container: str, now: datetime) -> ContainerFollow:
        """``pods/attach``: the running container's output from ``now`` on (kubelet/logstream.py).
        LookupError with the kubelet's text when it is not running. On the engine thread."""
        state = self._pods.get(f"{namespace}/{name}")
        run = next((r for r in state.all_runs if r.name == container), None) if state is not None else None
        if run is None or run.stage != RUNNING or run.current is None:
            raise LookupError(f'container not found ("{container}")')
        return self.follow(namespace, name, container, PodLogOptions(follow=True, tail_lines=0), now)

    def exec(self, pod: Obj, container: str, argv: Sequence[str], now: datetime | None = None,
             ctx: Context | None = None, stdin: bytes = b"") -> ExecResult:
        """What ``pods/exec`` of ``argv`` in ``container`` answers (kubelet/execs.py), on the
        container's filesystem when ``ctx`` (the runner's read view) is given. LookupError with
        the kubelet's text when the container is not running (its ``findContainer`` sees running
        containers only). Call it on the engine thread, as :meth:`logs`."""
        key, state, run = self._running(pod, container)
        self._execs += 1
        exec_id = execs.exec_id(run.current.container_id, self._execs)  # type: ignore[union-attr]
        if ctx is None or state is None:
            return execs.run(run.behaviour.exec_commands, argv, pod, run.spec, exec_id, now)
        fs = self.container_filesystem(ctx, pod, container)
        return execs.run(run.behaviour.exec_commands, argv, pod, run.spec, exec_id, ctx.now, fs, stdin,
                         self.network(ctx, pod))

    def open_exec(self, ctx: Context, pod: Obj, container: str, argv: Sequence[str]) -> ExecSession:
        """A ``pods/exec`` whose stdin will arrive while it runs (kubelet/execsession.py); its
        steps run with a read view of this runner, each on the engine thread. LookupError as
        :meth:`exec`."""
        _, _, run = self._running(pod, container)
        self._execs += 1
        exec_id = execs.exec_id(run.current.container_id, self._execs)  # type: ignore[union-attr]

        def open_fs(step: Context) -> Any:
            return self.container_filesystem(step, pod, container)

        def context(step: Context) -> dict[str, Any]:
            _, _, current = self._running(pod, container)
            return {"pod": pod, "container": current.spec, "commands": current.behaviour.exec_commands,
                    "network": self.network(step, pod)}

        return ExecSession(list(argv), open_fs, context, exec_id)

    def _running(self, pod: Obj, container: str) -> tuple[str, PodState | None, ContainerRun]:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        state = self._pods.get(key)
        runs = state.all_runs if state is not None and state.uid == meta.get("uid") else []
        run = next((candidate for candidate in runs if candidate.name == container), None)
        if run is None or run.stage != RUNNING or run.current is None:
            raise LookupError(f'container not found ("{container}")')
        return key, state, run

    # -- files (kubelet/podfs.py) --------------------------------------------------------------
    def container_filesystem(self, ctx: Context, pod: Obj, container: str, overlay: bool = False) -> Any:
        """The running ``container``'s filesystem now, its pending writes applied (LookupError
        when it is not running)."""
        key, state, run = self._running(pod, container)
        assert state is not None and run.current is not None
        now_s = ctx.now.timestamp()
        self.filesystems.flush(now_s, self._ended)
        argv = programs.program_argv(pod, run.spec) or rootfs_default_argv(run.spec)
        return self.filesystems.view(key, pod, run.spec, run.current.container_id, now_s,
                                     self._sources(ctx, state.node), argv, overlay)

    def _program_started(self, ctx: Context, pod: Obj, state: PodState, run: ContainerRun, at: datetime,
                         container_id: str) -> ContainerBehaviour:
        """A container instance starts at ``at``: its program runs on its filesystem
        (kubelet/programs.py; its writes land at their times), and the behaviour this instance
        has follows from it and from how the program takes SIGTERM (kubelet/termination.py)."""
        key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        at_s = at.timestamp()
        self.filesystems.flush(at_s, self._ended)
        argv = program_argv(pod, run.spec)
        fs = self.filesystems.view(key, pod, run.spec, container_id, at_s, self._sources(ctx, state.node),
                                   argv or rootfs_default_argv(run.spec), overlay=True)
        result = programs.run_program(pod, run.spec, fs, at, run.behaviour.exec_commands, self.network(ctx, pod))
        operations = fs.access.operations if isinstance(fs.access, FsOverlay) else []
        self.filesystems.push(key, run.name, container_id, at_s, operations)
        run.program = result
        return self.catalog.for_container(pod, run.name, program_layer(pod, run.spec, result))

    def _start_error(self, pod: Obj, run: ContainerRun) -> str | None:
        """containerd's error when the instance's program is missing from its base image
        (kubelet/programs.py) — unless the pod or config declares the container's behaviour:
        then it runs as declared."""
        missing = run.program if run.program is not None else _missing_from_args(run.spec)
        error = programs.start_error(missing)
        if error is None or self.catalog.declares(pod, run.name):
            return None
        return error

    def _note_first_start(self, pod: Obj, run: ContainerRun, at: datetime,
                          record: Callable[[ContainerRun, datetime, EventText], None]) -> None:
        """What the simulation cannot do for a container, said once, at its first start (not at
        its restarts): a command it cannot run, probe outcomes declared for absent probes."""
        if run.instances != 1 or run.ephemeral:
            return
        self._note_unsimulated(pod, run, at, record)
        self._note_unprobed(run, at, record)

    @staticmethod
    def _note_unprobed(run: ContainerRun, at: datetime,
                       record: Callable[[ContainerRun, datetime, EventText], None]) -> None:
        """``ready_after_s`` (or a readiness/liveness/startup timeline) on a container without
        that probe changes nothing, as in Kubernetes; a test relying on it would test nothing."""
        behaviour = run.current.behaviour if run.current is not None and run.current.behaviour else run.behaviour
        if run.init and not run.sidecar:
            return  # an init container has no probes at all
        pairs = (("readiness", "readinessProbe"), ("liveness", "livenessProbe"), ("startup", "startupProbe"))
        missing = [(field, probe) for field, probe in pairs
                   if not getattr(behaviour, field).always_healthy and not run.spec.get(probe)]
        if missing:
            record(run, at, texts.probe_not_defined(run.name, [field for field, _ in missing],
                                                    [probe for _, probe in missing]))

    def _note_unsimulated(self, pod: Obj, run: ContainerRun, at: datetime,
                          record: Callable[[ContainerRun, datetime, EventText], None]) -> None:
        """A container whose command the program model cannot run (``myserver --port 8080``,
        ``python app.py``) runs as its behaviour declares, by default forever: say so, unless its
        behaviour is declared or the program is a server the termination table knows (running
        until stopped is what it does). ``args`` alone are the command in a base image (busybox,
        alpine, debian…: no ENTRYPOINT, so ``kubectl run d --image=busybox -- myserver`` runs
        ``myserver``); in any other image they go to its unknown entrypoint: its own program."""
        argv = program_argv(pod, run.spec) or _base_image_args(run.spec)
        program = run.program
        if not argv or (program is not None and not program.handed_over) or is_known_server(argv):
            return
        if self.catalog.declares(pod, run.name):
            return
        record(run, at, texts.command_not_simulated(run.name, shlex.join(argv)))

    def _prestop(self, ctx: Context, pod: Obj, state: PodState, run: ContainerRun, at: datetime) -> HookOutcome | None:
        """The container's preStop hook runs at ``at`` on the instance's own filesystem, as an
        exec would: its writes land at their times (kubelet/hooks.py)."""
        instance = run.current
        behaviour = instance.behaviour if instance is not None and instance.behaviour else run.behaviour
        if instance is None:
            return hooks.prestop_outcome(pod, run.spec, behaviour, at)
        key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        at_s = at.timestamp()
        self.filesystems.flush(at_s, self._ended)
        argv = program_argv(pod, run.spec) or rootfs_default_argv(run.spec)
        fs = self.filesystems.view(key, pod, run.spec, instance.container_id, at_s, self._sources(ctx, state.node),
                                   argv, overlay=True)
        outcome = hooks.prestop_outcome(pod, run.spec, behaviour, at, fs, self.network(ctx, pod))
        operations = fs.access.operations if isinstance(fs.access, FsOverlay) else []
        self.filesystems.push(key, run.name, instance.container_id, at_s, operations)
        return outcome

    def _ended(self, container_id: str) -> float | None:
        """When an instance stopped (None: it still runs; -inf: it is no longer known)."""
        owner = self.filesystems.owners.get(container_id)
        state = self._pods.get(owner[0]) if owner is not None else None
        if state is None:
            return float("-inf")
        for run in state.all_runs:
            for instance in (run.current, run.previous):
                if instance is None or instance.container_id != container_id:
                    continue
                if instance.finished_at is not None:
                    return instance.finished_at.timestamp()
                if run.stop_at is not None and run.current is instance:
                    return run.stop_at.timestamp()
                return None
        return float("-inf")

    def _sources(self, ctx: Context, node: str) -> Sources:
        def get(kind: str, namespace: str, name: str) -> Obj | None:
            return ctx.get(_READABLE[kind], name, namespace)

        def token(pod: Obj, service_account: str, audience: str, expiration_s: int) -> str:
            return issue_token(ctx, pod, service_account, audience, expiration_s)

        return Sources(get, token, node)

    def network(self, ctx: Context, pod: Obj) -> ClusterNetwork:
        """The cluster as ``pod``'s network clients see it now (kubelet/clusternet.py): DNS from
        the read view, connections through :meth:`request`."""
        namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
        return ClusterNetwork(lambda plural, ns, name: ctx.get(_READABLE[plural], name, ns), namespace, self.request)

    def _source_changed(self, rest: str, ctx: Context) -> None:
        plural, namespace, name = rest.split("/", 2)
        if self.filesystems.watched(plural, namespace, name):
            self.filesystems.source_changed(plural, namespace, name, ctx.get(_READABLE[plural], name, namespace),
                                            ctx.now.timestamp())


def rootfs_default_argv(container: Obj) -> list[str]:
    from fakekube.kubelet.rootfs import default_argv
    return default_argv(str(container.get("image") or ""))


def issue_token(ctx: Context, pod: Obj, service_account: str, audience: str, expiration_s: int) -> str:
    """A TokenRequest for the pod's ServiceAccount, bound to the pod, as the kubelet's token manager
    makes one for a projected ``serviceAccountToken``; "" when it is refused (no such account)."""
    from fakekube.api.verbs.subresources import Subresources
    meta = pod.get("metadata") or {}
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"audiences": [audience] if audience else None, "expirationSeconds": expiration_s,
                        "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": meta.get("name"),
                                           "uid": meta.get("uid")}}}
    try:
        answer = Subresources(ctx.client.api).create_token(meta.get("namespace") or "default", service_account,
                                                            request)
    except ApiError:
        return ""
    return str((answer.get("status") or {}).get("token") or "")


def _runs_own_program(run: ContainerRun) -> bool:
    """Does the container run its image's program (so its image's server answers)? Yes
    without a ``command``, or when the command is that program."""
    command = run.spec.get("command") or []
    if not command:
        return True
    own = IMAGE_PROGRAMS.get(familiar_repository(run.image), "")
    return bool(own) and isinstance(command[0], str) and posixpath.basename(command[0]) == own


def _missing_from_args(spec: Obj) -> programs.ProgramRun | None:
    """``args`` alone in busybox or alpine (no ENTRYPOINT: they are the command) whose first word
    is a name neither image holds: runc cannot find it. A path is left alone (a volume may hold
    it; the program model did not look)."""
    from fakekube.kubelet import rootfs
    args = _base_image_args(spec)
    if not args or "/" in args[0] or not programs.is_missing(args[0], rootfs.family(str(spec.get("image") or "")).name):
        return None
    return programs.ProgramRun(missing=args[0])


def _base_image_args(spec: Obj) -> list[str]:
    """A base image's container given ``args`` alone: they are its command (``[]`` otherwise)."""
    args = spec.get("args") or []
    if spec.get("command") or not args or not all(isinstance(word, str) for word in args):
        return []
    from fakekube.kubelet import rootfs
    return list(args) if rootfs.family(str(spec.get("image") or "")).base else []


def program_layer(pod: Obj, spec: Obj, program: programs.ProgramRun | None) -> Overlay:
    """The behaviour fields the container's own program decided (``program``: its run, None
    when it runs the image's own) and how it takes SIGTERM (kubelet/termination.py)."""
    fields = program.overlay() if program is not None else ()
    signals = signal_overlay(program_argv(pod, spec), str(spec.get("image") or ""),
                             container_shares_pid_namespace(pod))
    if not signals:
        return fields
    return tuple(sorted(dict(fields + signals).items()))


def stop_response(run: ContainerRun, at: datetime) -> StopResponse:
    """What the running container does with SIGTERM at ``at``: a script's ``trap`` answers for
    itself (kubelet/programs.py), anything else as its behaviour declares."""
    instance = run.current
    behaviour = instance.behaviour if instance is not None and instance.behaviour else run.behaviour
    if instance is not None:
        answer = programs.stop_response(run.program, instance.at_s(at))
        if answer is not None:
            return answer
    return declared_response(behaviour.handles_sigterm, behaviour.stop_delay_s, behaviour.stop_exit_code)


def _pick_container(state: PodState, pod_name: str, container: str | None) -> ContainerRun:
    runs = {run.name: run for run in state.all_runs}
    if container is None:
        if len(state.runs) == 1:
            return state.runs[0]
        names = " ".join(run.name for run in state.runs)
        raise ValueError(f"a container name must be specified for pod {pod_name}, choose one of: [{names}]")
    if container not in runs:
        raise ValueError(f"container {container} is not valid for pod {pod_name}")
    return runs[container]


def _log_instances(run: ContainerRun, pod_name: str) -> tuple[Any, Any]:
    """(the instance a plain read shows, the one ``previous`` shows)."""
    if run.current is None:
        raise ValueError(f'container "{run.name}" in pod "{pod_name}" is waiting to start: '
                         f'{_waiting_reason(run)}')
    # In CrashLoopBackOff the exited instance is the status's lastState, so ``previous`` reads it too.
    return run.current, run.current if run.crash_backoff_s is not None else run.previous


def _waiting_reason(run: ContainerRun) -> str:
    if run.stage == "pull-error":
        return "image can't be pulled"
    if run.stage == "pull-backoff" or run.pull_failing:
        return "trying and failing to pull image"
    return "ContainerCreating"


def _pod_cidr(node: Obj | None) -> bool:
    return bool(((node or {}).get("spec") or {}).get("podCIDR"))


def network_ready(pod: Obj, node: Obj) -> bool:
    """Host-network pods need no pod network; others wait until the node has a podCIDR."""
    return bool(pod["spec"].get("hostNetwork")) or bool((node.get("spec") or {}).get("podCIDR"))


def node_internal_ip(node: Obj) -> str:
    addresses = (node.get("status") or {}).get("addresses") or []
    for address in addresses:
        if address.get("type") == "InternalIP":
            return str(address.get("address"))
    return ""


def new_container_id(ctx: Context) -> str:
    """``containerd://`` and 64 hex digits from the controller's seeded stream."""
    return f"containerd://{ctx.rng.randrange(0, 1 << 256):064x}"
