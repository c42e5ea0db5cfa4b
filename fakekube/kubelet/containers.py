"""One container's life on a simulated kubelet: a small state machine on cluster time.

A :class:`ContainerRun` moves through the stages upstream's kubelet and container runtime
go through, each with the instant of its next step (``due``)::

    WAITING ─begin─▶ PULLING ─▶ STARTING ─▶ RUNNING ─exit/kill─▶ EXITED (no restart)
                       │  ▲                   ▲   │
             pull fails▼  │retry              │   └─exit/kill─▶ BACKOFF ─▶ STARTING (restart)
                    PULL_ERROR ─▶ PULL_BACKOFF

A sidecar (an init container with ``restartPolicy: Always``) restarts whenever it exits,
whatever the pod's policy; :attr:`ContainerRun.first_started_at` tells the pod when its
turn as an init container is over.

The controller calls :meth:`ContainerRun.step` at (or after) ``due``; a step applies what
happened *at* ``due`` (so timestamps are exact even when a stopped kubelet catches up).
Nothing here reads a clock or the store; back-off curves come from
:mod:`fakekube.kubelet.backoff` and probe timing from :mod:`fakekube.kubelet.probes`.

Simplifications (one line each):
* the image is had as upstream's image manager has it at every start and restart
  (``imagePullPolicy``, the node's images, kubelet/registry.py's verdict), and a pull takes
  ``pull_delay_s`` however large the image;
* ``ErrImagePull`` shows for :data:`PULL_ERROR_SHOWN_S` (until the kubelet's next sync),
  then ``ImagePullBackOff`` until the pull back-off ends;
* while a restart is being created the status keeps showing what it showed before
  (upstream's reason cache), and the restart counts once the new container runs;
* a container killed by a probe exits 137 (SIGKILL); a stop (:meth:`ContainerRun.begin_stop`)
  follows kubelet/termination.py's plan: the program's own answer to SIGTERM, or 137 when
  the grace runs out.

Events (upstream's texts, :mod:`fakekube.kubelet.events`) are recorded through
``RunContext.record`` at the instant each step happens: Pulling/Pulled (a restart reuses
the image: ``already present``), Failed + ``Error: ErrImagePull``, and while a back-off
holds a pull or a restart, BackOff (+ ``Error: ImagePullBackOff``) at the step and again
every :data:`~fakekube.kubelet.events.POD_RESYNC_AFTER_ERROR_S` (the pod worker's re-sync);
Created + Started when the process runs; Unhealthy for every failed probe
(:mod:`fakekube.kubelet.probefailures`) and Killing for a probe kill.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from typing import Any, Callable, Hashable, NamedTuple

from fakekube.kubelet import events as texts
from fakekube.kubelet.backoff import ImagePullBackoff, RestartBackoff
from fakekube.kubelet.behaviour import ERR_IMAGE_PULL, IMAGE_PULL_BACKOFF, ContainerBehaviour, LogLine
from fakekube.kubelet.events import POD_RESYNC_AFTER_ERROR_S, EventText
from fakekube.kubelet.imageref import kubelet_parse_error
from fakekube.kubelet.probefailures import EPSILON_S, ProbeFailures
from fakekube.kubelet.probes import KILLED_BY_LIVENESS, ProbePlan, plan_probes
from fakekube.kubelet.termination import (
    MIN_GRACE_S as MIN_STOP_GRACE_S,
    NEVER,
    SIGKILL_EXIT_CODE,
    HookOutcome,
    StopPlan,
    StopResponse,
    after,
    declared_response,
    plan_stop,
)
from fakekube.objects.pods import is_restartable_init_container

Obj = dict[str, Any]

WAITING = "waiting"
PULLING = "pulling"
PULL_ERROR = "pull-error"
PULL_BACKOFF = "pull-backoff"
STARTING = "starting"
RUNNING = "running"
BACKOFF = "backoff"
EXITED = "exited"
#: The image cannot be had: its reference does not parse, or it is absent under ``Never``.
INVALID_IMAGE = "invalid-image"
NEVER_PULL = "never-pull"

#: ``imagePullPolicy`` values.
PULL_ALWAYS, PULL_IF_NOT_PRESENT, PULL_NEVER = "Always", "IfNotPresent", "Never"
#: Upstream's waiting reasons for those two (``images/types.go``).
INVALID_IMAGE_NAME = "InvalidImageName"
ERR_IMAGE_NEVER_PULL = "ErrImageNeverPull"

#: The kubelet's reason and exit code for a container whose process the runtime could not
#: start (``kuberuntime_container.go``: a failed StartContainer is recorded as terminated).
START_ERROR = "StartError"
START_ERROR_EXIT_CODE = 128

#: How long ErrImagePull shows before the next kubelet sync reports ImagePullBackOff.
PULL_ERROR_SHOWN_S = 1.0

__all__ = ["NEVER", "SIGKILL_EXIT_CODE", "after"]  # re-exported: termination.py defines them


def seconds_between(earlier: datetime, later: datetime) -> float:
    return (later - earlier).total_seconds()


class Instance(NamedTuple):
    """One started container process; immutable (a change makes a new one), so other
    threads (log streams) read it safely.

    ``behaviour``: what this run of the program does (its run time, exit code and log lines:
    a program's output may depend on when it started); ``stop_lines``: once the kubelet
    sent SIGTERM at ``stop_from_s`` (seconds since start) to a program whose handler the
    model runs (a shell ``trap``), what it writes from then on, instead of its own lines."""

    container_id: str
    started_at: datetime
    plan: ProbePlan
    finished_at: datetime | None = None
    exit_code: int | None = None
    behaviour: ContainerBehaviour | None = None
    stop_lines: tuple[LogLine, ...] = ()
    stop_from_s: float | None = None
    #: The runtime's error when the process could not start (its program is missing): the
    #: instance ended as it began, reason StartError, exit code 128.
    start_error: str | None = None

    @property
    def reason(self) -> str:
        """The runtime's termination reason: containerd reports Completed for 0, Error otherwise;
        the kubelet's StartError for a process that never started."""
        if self.start_error is not None:
            return START_ERROR
        return "Completed" if self.exit_code == 0 else "Error"

    @property
    def log_lines(self) -> tuple[LogLine, ...]:
        """Every line this run writes (or would, left alone), in time order."""
        lines = self.behaviour.log_lines if self.behaviour is not None else ()
        if self.stop_from_s is None:
            return lines
        cut = self.stop_from_s
        return tuple(line for line in lines if line.at_s < cut) + self.stop_lines

    @property
    def run_for_s(self) -> float | None:
        return self.behaviour.run_for_s if self.behaviour is not None else None

    def finished(self, at: datetime, exit_code: int) -> Instance:
        return self._replace(finished_at=at, exit_code=exit_code)

    def at_s(self, moment: datetime) -> float:
        return seconds_between(self.started_at, moment)


def _no_events(run: "ContainerRun", at: datetime, text: EventText) -> None:
    """The default event sink: steps run without recording (unit tests of the state machine)."""


class RunContext:
    """What a step may use besides the container itself: the pod's identity and the node's state."""

    __slots__ = ("pod_uid", "restart_backoff", "pull_backoff", "new_container_id", "epoch", "record", "pod_label",
                 "pod_ip", "others_running", "image_pulled", "instance_behaviour", "prestop", "stop_response",
                 "image_present", "pull_error", "after_start", "start_error")

    def __init__(self, pod_uid: str, restart_backoff: RestartBackoff, pull_backoff: ImagePullBackoff,
                 new_container_id: Callable[[], str], epoch: datetime,
                 record: Callable[["ContainerRun", datetime, EventText], None] = _no_events, pod_label: str = "",
                 pod_ip: str = "", others_running: Callable[["ContainerRun"], bool] = lambda run: False,
                 image_pulled: Callable[[str], None] = lambda image: None,
                 instance_behaviour: Callable[["ContainerRun", datetime, str], ContainerBehaviour] | None = None,
                 prestop: Callable[["ContainerRun", datetime], HookOutcome | None] = lambda run, at: None,
                 stop_response: Callable[["ContainerRun", datetime], StopResponse] | None = None,
                 image_present: Callable[[str], bool] = lambda image: False,
                 pull_error: Callable[[str], str | None] = lambda image: None,
                 after_start: Callable[["ContainerRun", datetime], None] = lambda run, at: None,
                 start_error: Callable[["ContainerRun"], str | None] = lambda run: None) -> None:
        self.pod_uid = pod_uid
        self.restart_backoff = restart_backoff
        self.pull_backoff = pull_backoff
        #: A fresh ``containerd://…`` id, drawn from the controller's seeded stream.
        self.new_container_id = new_container_id
        self.epoch = epoch  # seconds for the back-off module are counted from here
        #: Where events go: ``record(run, at, text)`` (the pod runner correlates and writes them).
        self.record = record
        #: Upstream's ``format.Pod`` of the pod (``name_namespace(uid)``), for BackOff messages.
        self.pod_label = pod_label
        #: The pod's IP, which a failing tcpSocket probe names.
        self.pod_ip = pod_ip
        #: Does another regular container of the pod still run? (decides a probe kill's message)
        self.others_running = others_running
        #: The node now holds this image (it shows in the node's ``status.images``).
        self.image_pulled = image_pulled
        #: What the run of the container's program that starts at an instant as a new
        #: instance (its container id) does: the runner runs it then, on the instance's
        #: filesystem (kubelet/programs.py); default: the run's behaviour as it is.
        self.instance_behaviour = instance_behaviour or (lambda run, at, container_id: run.behaviour)
        #: How the container's preStop hook runs when the kubelet stops it at an instant
        #: (None: it has none; kubelet/hooks.py).
        self.prestop = prestop
        #: What the running program does with SIGTERM at an instant (default: what its
        #: behaviour declares; a shell ``trap`` answers for itself, kubelet/programs.py).
        self.stop_response = stop_response or _declared_stop_response
        #: Does the node hold this image already (a pull, or kind's node image, put it there)?
        self.image_present = image_present
        #: The registry's answer to a pull of this image: containerd's error, or None when it
        #: pulls (kubelet/registry.py).
        self.pull_error = pull_error
        #: Called once an instance has started and its Created/Started events are recorded
        #: (the runner adds its own notes then: a command it cannot simulate, kubelet/pods.py).
        self.after_start = after_start
        #: The runtime's error when the instance just made cannot start (its program is missing
        #: from a base image: kubelet/programs.py), or None.
        self.start_error = start_error


def _declared_stop_response(run: "ContainerRun", at: datetime) -> StopResponse:
    behaviour = run.current.behaviour if run.current is not None and run.current.behaviour else run.behaviour
    return declared_response(behaviour.handles_sigterm, behaviour.stop_delay_s, behaviour.stop_exit_code)


class ContainerRun:
    """The kubelet's view of one container of one pod (init or regular). Slotted: one per
    container of every running pod, so its size and a snapshot's copy of it count."""

    __slots__ = ("spec", "ephemeral", "sidecar", "restart_policy", "name", "image", "behaviour", "init", "stage", "due",
                 "pulled", "pull_attempts", "pull_failing", "pull_message", "current", "previous", "instances",
                 "stop_at", "stop_exit_code", "stop_plan", "stop_grace_s", "_pending", "_retry_at", "_restart_at",
                 "crash_backoff_s", "_failures", "_probed_s", "program", "first_started_at")

    def __init__(self, spec: Obj, behaviour: ContainerBehaviour, init: bool, restart_policy: str,
                 ephemeral: bool = False) -> None:
        self.spec = spec
        #: An ephemeral container (``kubectl debug``): runs once, never restarted.
        self.ephemeral = ephemeral
        #: A sidecar (an init container with its own ``restartPolicy: Always``, KEP-753) keeps
        #: running beside the app containers and restarts whenever it exits.
        self.sidecar = init and is_restartable_init_container(spec)
        #: Init containers restart only on failure, and not at all under the pod's ``Never``.
        self.restart_policy = restart_policy if not init else ("Never" if restart_policy == "Never" else "OnFailure")
        if self.sidecar:
            self.restart_policy = "Always"
        self.name: str = spec["name"]
        self.image: str = str(spec.get("image") or "")
        self.behaviour = behaviour
        self.init = init
        self.stage = WAITING
        self.due: datetime | None = None
        self.pulled = False
        self.pull_attempts = 0
        #: A pull failed since the last start (the status says ImagePullBackOff until the
        #: container runs: upstream's reason cache).
        self.pull_failing = False
        self.pull_message = ""
        self.current: Instance | None = None
        self.previous: Instance | None = None
        self.instances = 0
        self.stop_at: datetime | None = None
        self.stop_exit_code = 0
        #: The stop the kubelet began (preStop, SIGTERM, kill), and the grace it began with.
        self.stop_plan: StopPlan | None = None
        self.stop_grace_s: float | None = None
        #: Events due later in the running instance's life (a preStop hook's failure); a
        #: tuple, replaced on change: most runs have none, and an empty one costs a snapshot nothing.
        self._pending: tuple[tuple[datetime, EventText], ...] = ()
        self._retry_at: datetime | None = None
        self._restart_at: datetime | None = None
        #: Set while a restart waits out CrashLoopBackOff (and until it runs): the delay it shows.
        self.crash_backoff_s: float | None = None
        #: The running instance's failing probes, and the last probe instant already recorded.
        self._failures: ProbeFailures | None = None
        self._probed_s = -math.inf
        #: What the latest instance's own program does (a ``programs.ProgramRun``, set by the
        #: runner when the instance starts; None: it runs the image's program): its SIGTERM
        #: ``trap`` answers for it when the kubelet stops it (kubelet/pods.py).
        self.program: Any = None
        #: When an instance of this container first counted as started (a sidecar's turn is
        #: over then, and the next init container starts); None until it has.
        self.first_started_at: datetime | None = None

    # -- what the pod needs to know ---------------------------------------------
    @property
    def restart_count(self) -> int:
        return max(0, self.instances - 1)

    @property
    def succeeded(self) -> bool:
        return self.stage == EXITED and self.current is not None and self.current.exit_code == 0

    @property
    def done(self) -> bool:
        """Exited for good: no restart will follow."""
        return self.stage == EXITED

    def restart_key(self, ctx: RunContext) -> Hashable:
        return (ctx.pod_uid, self.name)

    @property
    def field_path(self) -> str:
        """Where the container sits in the pod spec, as event references name it."""
        kind = "initContainers" if self.init else "ephemeralContainers" if self.ephemeral else "containers"
        return f"spec.{kind}{{{self.name}}}"

    # -- transitions --------------------------------------------------------------
    def begin(self, now: datetime, ctx: RunContext | None = None) -> None:
        """The kubelet makes sure of this container's image (its turn came): pulls it, or
        finds it on the node, or cannot (:meth:`_ensure_image`); ``ctx`` records the events."""
        if self.stage == WAITING:
            if ctx is None:
                self._pull(now, ctx)
            else:
                self._ensure_image(now, ctx)

    @property
    def pull_policy(self) -> str:
        """``imagePullPolicy`` (the API defaults it: Always for ``:latest`` or no tag, else IfNotPresent)."""
        policy = self.spec.get("imagePullPolicy")
        if policy in (PULL_ALWAYS, PULL_IF_NOT_PRESENT, PULL_NEVER):
            return str(policy)
        return default_pull_policy(self.image)

    def _ensure_image(self, at: datetime, ctx: RunContext) -> None:
        """Upstream's ``EnsureImageExists`` at a start or restart: a reference that does not
        parse is InvalidImageName; an image the node holds starts at once unless the policy
        is Always; under Never a missing one is ErrImageNeverPull; otherwise it is pulled.
        The two refusals are retried at every pod re-sync (10 s)."""
        problem = kubelet_parse_error(self.image)
        if problem is not None:
            self._refuse(INVALID_IMAGE, problem, at, ctx, texts.inspect_failed(problem), INVALID_IMAGE_NAME)
            return
        policy = self.pull_policy
        if policy != PULL_ALWAYS and (self.pulled or ctx.image_present(self.image)):  # no image GC: it stays
            self.stage, self.due = STARTING, after(at, self.behaviour.start_delay_s)
            ctx.record(self, at, texts.already_present(self.image))
            return
        if policy == PULL_NEVER:
            message = texts.never_pull_message(self.image)
            self._refuse(NEVER_PULL, message, at, ctx, texts.never_pull(message), ERR_IMAGE_NEVER_PULL)
            return
        self._pull(at, ctx)

    def _refuse(self, stage: str, message: str, at: datetime, ctx: RunContext, event: EventText, reason: str) -> None:
        self.pull_message = message
        self.stage, self.due = stage, after(at, POD_RESYNC_AFTER_ERROR_S)
        ctx.record(self, at, event)
        ctx.record(self, at, texts.start_error(reason))

    def stop(self, at: datetime, exit_code: int = 0) -> bool:
        """The pod is terminating: a running process exits at ``at`` with ``exit_code``
        (0: it stopped within its grace; 137: it was killed when the grace ran out).
        Nothing else starts: a pending pull or restart never happens.

        Returns True when this asked a running process to stop for the first time (the
        kubelet's ``Killing`` moment)."""
        first = False
        if self.stage == RUNNING:
            first = self.stop_at is None
            if self.stop_at is None or at < self.stop_at:
                self.stop_at, self.stop_exit_code = at, exit_code
            self.due = min(self.due, self.stop_at) if self.due is not None else self.stop_at
        elif self.stage != EXITED:
            self.due = None  # a pull or a restart that has not happened never will
        return first

    def begin_stop(self, now: datetime, grace_s: float, ctx: RunContext, turn_at: datetime | None = None) -> bool:
        """The kubelet stops this container at ``now`` with ``grace_s`` of grace (its
        ``killContainer``: preStop hook, then SIGTERM, then SIGKILL when the grace runs out;
        kubelet/termination.py). ``turn_at``: a sidecar's turn (it gets SIGTERM no earlier).
        A container not running just never starts. Once begun, a stop only comes earlier: a
        second delete with a shorter grace kills by ``now + grace`` (at least 2 s).

        Returns True when this began the stop of a running process (the ``Killing`` moment)."""
        if self.stage != RUNNING or self.current is None:
            self.stop(now)
            return False
        if self.stop_plan is not None:
            if self.stop_grace_s is not None and grace_s < self.stop_grace_s:
                self.stop_grace_s = grace_s
                deadline = after(now, max(grace_s, MIN_STOP_GRACE_S))
                if deadline < self.stop_plan.exit_at:
                    self.stop_plan = self.stop_plan._replace(exit_at=deadline, exit_code=SIGKILL_EXIT_CODE)
                    self.stop(deadline, SIGKILL_EXIT_CODE)
            return False
        instance = self.current
        if instance.plan.kill_s is not None and after(instance.started_at, instance.plan.kill_s) > now:
            # A deleted pod's liveness and startup probes stop (prober worker: "Pod deletion requested").
            instance = self.current = instance._replace(plan=instance.plan._replace(kill_s=None, kill_reason=None))
        plan = plan_stop(now, grace_s, ctx.prestop(self, now), turn_at, lambda at: ctx.stop_response(self, at),
                         instance.started_at)
        self.stop_plan, self.stop_grace_s = plan, grace_s
        if plan.log_lines is not None:
            self.current = instance._replace(stop_lines=plan.log_lines,
                                             stop_from_s=instance.at_s(plan.signal_at))
        if plan.hook_failed_at is not None:
            self._pending += ((plan.hook_failed_at, texts.prestop_failed()),)
        self.stop(plan.exit_at, plan.exit_code)
        self._schedule_running(now)
        return True

    @property
    def expected_exit_at(self) -> datetime | None:
        """When the running process ends as things stand: its own end, a probe kill or the
        stop the kubelet began, whichever comes first (None: not running, or never)."""
        instance = self.current
        if self.stage != RUNNING or instance is None:
            return None
        ends = [after(instance.started_at, end_s) for end_s in (instance.run_for_s, instance.plan.kill_s)
                if end_s is not None]
        if self.stop_at is not None:
            ends.append(self.stop_at)
        return min(ends) if ends else None

    def step(self, ctx: RunContext) -> None:
        """Apply what happens at ``self.due``."""
        at = self.due
        assert at is not None, "step() on a container with nothing due"
        handler = {PULLING: self._pull_finished, PULL_ERROR: self._show_pull_backoff,
                   PULL_BACKOFF: self._show_pull_backoff, STARTING: self._started,
                   RUNNING: self._running_event, BACKOFF: self._backoff_sync,
                   INVALID_IMAGE: self._ensure_image, NEVER_PULL: self._ensure_image}[self.stage]
        handler(at, ctx)

    def _pull(self, at: datetime, ctx: RunContext | None = None) -> None:
        self.pull_attempts += 1
        self.stage, self.due = PULLING, after(at, self.behaviour.pull_delay_s)
        if ctx is not None:
            ctx.record(self, at, texts.pulling(self.image))

    def _pull_finished(self, at: datetime, ctx: RunContext) -> None:
        registry_error = ctx.pull_error(self.image)
        if self.behaviour.pull_fails(self.pull_attempts) or registry_error is not None:
            retry_s = ctx.pull_backoff.record_failure(self._pull_key(ctx), seconds_between(ctx.epoch, at))
            declared = self.behaviour.pull_fails(self.pull_attempts)
            self.pull_message = self.behaviour.pull_error_message(self.image) if declared else str(registry_error)
            self.pull_failing = True
            self.stage, self.due = PULL_ERROR, min(after(at, PULL_ERROR_SHOWN_S), after(ctx.epoch, retry_s))
            self._retry_at = after(ctx.epoch, retry_s)
            ctx.record(self, at, texts.pull_failed(self.image, self.pull_message))
            ctx.record(self, at, texts.start_error(ERR_IMAGE_PULL))
            return
        self.pulled = True
        ctx.image_pulled(self.image)
        self.stage, self.due = STARTING, after(at, self.behaviour.start_delay_s)
        ctx.record(self, at, texts.pulled(self.image, self.behaviour.pull_delay_s))

    def _show_pull_backoff(self, at: datetime, ctx: RunContext) -> None:
        """A kubelet sync while the pull back-off runs: BackOff events, or the retry when it ended."""
        assert self._retry_at is not None
        if self._retry_at <= at:
            self._ensure_image(at, ctx)
            return
        self.stage, self.due = PULL_BACKOFF, min(self._retry_at, after(at, POD_RESYNC_AFTER_ERROR_S))
        ctx.record(self, at, texts.pull_backoff(self.image))
        ctx.record(self, at, texts.start_error(IMAGE_PULL_BACKOFF))

    def _pull_key(self, ctx: RunContext) -> Hashable:
        return (ctx.pod_uid, self.image)

    def _started(self, at: datetime, ctx: RunContext) -> None:
        if self.current is not None:
            self.previous = self.current
        self.instances += 1
        self.crash_backoff_s = None
        self.pull_failing = False
        container_id = ctx.new_container_id()
        behaviour = ctx.instance_behaviour(self, at, container_id)
        error = ctx.start_error(self)
        self.current = Instance(container_id, at, plan_probes(self.spec, behaviour), behaviour=behaviour,
                                start_error=error)
        self.stage, self.due = RUNNING, None
        ctx.record(self, at, texts.created(self.name))
        if error is not None:  # created, not started: "Error: ..." and the exit, no Started event
            ctx.record(self, at, texts.start_error(error))
            self._exited(at, ctx, START_ERROR_EXIT_CODE)
            return
        ctx.record(self, at, texts.started(self.name))
        ctx.after_start(self, at)
        self._failures = ProbeFailures(self.spec, behaviour, self.current.plan)
        self._probed_s = -math.inf
        self._record_probe_failures(at, ctx)
        self._note_started(at)
        self._schedule_running(at)

    def _note_started(self, at: datetime) -> None:
        """Latch the instant the running instance became started (its startup probe passed, or
        at once without one), if that is by ``at``."""
        instance = self.current
        if self.first_started_at is not None or instance is None or instance.plan.started_s is None:
            return
        if instance.at_s(at) >= instance.plan.started_s:
            self.first_started_at = after(instance.started_at, instance.plan.started_s)

    def _record_probe_failures(self, at: datetime, ctx: RunContext) -> None:
        """An ``Unhealthy`` event for every probe that failed since the last call, up to ``at``."""
        instance = self.current
        if instance is None or self._failures is None:
            return
        limit_s = instance.at_s(at) + EPSILON_S
        while (failure := self._failures.next_after(self._probed_s)) is not None and failure[0] <= limit_s:
            t_s, kinds = failure
            for kind in kinds:
                probe = self.spec.get(f"{kind.lower()}Probe") or {}
                output = texts.probe_failure_output(probe, self.spec, ctx.pod_ip)
                ctx.record(self, after(instance.started_at, t_s), texts.unhealthy(kind, output))
            self._probed_s = t_s

    def _next_probe_failure(self) -> datetime | None:
        if self.current is None or self._failures is None:
            return None
        failure = self._failures.next_after(self._probed_s)
        return after(self.current.started_at, failure[0]) if failure is not None else None

    def _schedule_running(self, now: datetime) -> None:
        """The next instant something happens to the running process: a probe flip, an exit, a kill."""
        instance = self.current
        assert instance is not None
        candidates = [after(instance.started_at, t_s) for t_s, _ in instance.plan.ready]
        if instance.plan.started_s is not None:
            candidates.append(after(instance.started_at, instance.plan.started_s))
        failure_at = self._next_probe_failure()
        if failure_at is not None:
            candidates.append(failure_at)
        # An end due now still happens (run_for_s 0, a kill by the very first probe): it is not past.
        ends = [after(instance.started_at, end_s) for end_s in (instance.run_for_s, instance.plan.kill_s)
                if end_s is not None]
        ends += [at for at, _ in self._pending]
        if self.stop_at is not None:
            ends.append(self.stop_at)
        upcoming = [moment for moment in candidates if moment > now] + [moment for moment in ends if moment >= now]
        self.due = min(upcoming) if upcoming else None

    def _running_event(self, at: datetime, ctx: RunContext) -> None:
        for when, text in [event for event in self._pending if event[0] <= at]:
            ctx.record(self, when, text)
        self._pending = tuple(event for event in self._pending if event[0] > at)
        exit_code = self._exit_code_at(at)
        probe_kill = exit_code is not None and self._killed_by_probe(at)
        if exit_code is None or probe_kill:
            self._record_probe_failures(at, ctx)
        if exit_code is None:
            self._note_started(at)
            self._schedule_running(at)  # a probe flip or failure: the status shows it, nothing else changes
            return
        if probe_kill:
            ctx.record(self, at, self._probe_kill_text(ctx))
        self._exited(at, ctx, exit_code)

    def _exited(self, at: datetime, ctx: RunContext, exit_code: int) -> None:
        """The process ended at ``at``: restart it (at once, or after CrashLoopBackOff) as the
        restart policy says, or leave it exited."""
        self.current = self.current.finished(at, exit_code) if self.current else None
        self._failures = None
        self._pending = ()  # a hook still running dies with its container
        if self.stop_at is not None or not self._restarts(exit_code):
            self.stage, self.due = EXITED, None
            return
        restart_s = ctx.restart_backoff.restart_at_s(self.restart_key(ctx), seconds_between(ctx.epoch, at))
        restart_at = after(ctx.epoch, restart_s)
        if restart_at <= at:
            self._restart(at, ctx)  # upstream: the first crash restarts at once
        else:
            self.crash_backoff_s = ctx.restart_backoff.delay_s(self.restart_key(ctx))
            self._restart_at = restart_at
            self.stage = BACKOFF
            self._backoff_sync(at, ctx)

    def _killed_by_probe(self, at: datetime) -> bool:
        """Is the process ending at ``at`` because a probe killed it (not a stop, not its own exit)?"""
        instance = self.current
        if instance is None or instance.plan.kill_s is None or instance.at_s(at) < instance.plan.kill_s:
            return False
        return self.stop_at is None or at < self.stop_at

    def _probe_kill_text(self, ctx: RunContext) -> EventText:
        """``computePodActions``: restart → "…, will be restarted"; else the container alone, or
        the whole pod (no container left to keep) → "Stopping container"."""
        assert self.current is not None
        probe = "liveness" if self.current.plan.kill_reason == KILLED_BY_LIVENESS else "startup"
        if self.sidecar:
            return texts.init_probe_kill(self.name, probe)
        restart = self.restart_policy != "Never"
        if not restart and not ctx.others_running(self):
            return texts.stopping(self.name)
        return texts.probe_kill(self.name, probe, restart)

    def _backoff_sync(self, at: datetime, ctx: RunContext) -> None:
        """A kubelet sync while CrashLoopBackOff holds the restart: BackOff, or the restart when due."""
        assert self._restart_at is not None
        if self._restart_at <= at:
            self._restart(at, ctx)
            return
        self.due = min(self._restart_at, after(at, POD_RESYNC_AFTER_ERROR_S))
        ctx.record(self, at, texts.restart_backoff(self.name, ctx.pod_label))

    def _exit_code_at(self, at: datetime) -> int | None:
        """Does the process end at ``at``, and with which code? (None: it keeps running.)"""
        instance = self.current
        assert instance is not None
        if self.stop_at is not None and at >= self.stop_at:
            return self.stop_exit_code
        if instance.plan.kill_s is not None and instance.at_s(at) >= instance.plan.kill_s:
            return SIGKILL_EXIT_CODE
        run_for_s = instance.run_for_s
        if run_for_s is not None and instance.at_s(at) >= run_for_s:
            return instance.behaviour.exit_code if instance.behaviour is not None else self.behaviour.exit_code
        return None

    def _restarts(self, exit_code: int) -> bool:
        """Upstream's ShouldContainerBeRestarted for a container that exited."""
        if self.restart_policy == "Always":
            return True
        return self.restart_policy == "OnFailure" and exit_code != 0

    def _restart(self, at: datetime, ctx: RunContext) -> None:
        finished = self.current.finished_at if self.current else at
        ctx.restart_backoff.record_restart(self.restart_key(ctx), seconds_between(ctx.epoch, finished or at),
                                           seconds_between(ctx.epoch, at))
        self._restart_at = None
        self._ensure_image(at, ctx)  # the image again, by the pull policy (Always pulls again)


def default_pull_policy(image: str) -> str:
    """The API's default ``imagePullPolicy``: Always for ``:latest`` or no tag (no digest), else IfNotPresent."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    if "@" in image:
        return PULL_IF_NOT_PRESENT
    if ":" not in last or last.rsplit(":", 1)[1] == "latest":
        return PULL_ALWAYS
    return PULL_IF_NOT_PRESENT


def image_id(normalized: str) -> str:
    """A stable ``repo@sha256:…`` for a normalized image: the same image has one digest everywhere."""
    name = normalized.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    repository = name.rsplit(":", 1)[0] if ":" in last else name
    return f"{repository}@sha256:{hashlib.sha256(normalized.encode()).hexdigest()}"
