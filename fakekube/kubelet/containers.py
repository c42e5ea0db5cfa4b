"""One container's life on a simulated kubelet: a small state machine on cluster time.

A :class:`ContainerRun` moves through the stages upstream's kubelet and container runtime
go through, each with the instant of its next step (``due``)::

    WAITING ─begin─▶ PULLING ─▶ STARTING ─▶ RUNNING ─exit/kill─▶ EXITED (no restart)
                       │  ▲                   ▲   │
             pull fails▼  │retry              │   └─exit/kill─▶ BACKOFF ─▶ STARTING (restart)
                    PULL_ERROR ─▶ PULL_BACKOFF

The controller calls :meth:`ContainerRun.step` at (or after) ``due``; a step applies what
happened *at* ``due`` (so timestamps are exact even when a stopped kubelet catches up).
Nothing here reads a clock or the store; back-off curves come from
:mod:`fakekube.kubelet.backoff` and probe timing from :mod:`fakekube.kubelet.probes`.

Simplifications (one line each):
* the image is pulled once per container; restarts reuse it (``IfNotPresent`` semantics);
* ``ErrImagePull`` shows for :data:`PULL_ERROR_SHOWN_S` (until the kubelet's next sync),
  then ``ImagePullBackOff`` until the pull back-off ends;
* while a restart is being created the status keeps showing what it showed before
  (upstream's reason cache), and the restart counts once the new container runs;
* a container killed by a probe or at the end of a grace period exits 137 (SIGKILL); one
  that stops within its grace exits 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Hashable

from fakekube.kubelet.backoff import ImagePullBackoff, RestartBackoff
from fakekube.kubelet.behaviour import ContainerBehaviour
from fakekube.kubelet.probes import ProbePlan, plan_probes

Obj = dict[str, Any]

WAITING = "waiting"
PULLING = "pulling"
PULL_ERROR = "pull-error"
PULL_BACKOFF = "pull-backoff"
STARTING = "starting"
RUNNING = "running"
BACKOFF = "backoff"
EXITED = "exited"

#: How long ErrImagePull shows before the next kubelet sync reports ImagePullBackOff.
PULL_ERROR_SHOWN_S = 1.0
#: Exit code of a process killed with SIGKILL (probe kill, grace period over).
SIGKILL_EXIT_CODE = 137


def seconds_between(earlier: datetime, later: datetime) -> float:
    return (later - earlier).total_seconds()


def after(moment: datetime, seconds: float) -> datetime:
    return moment + timedelta(seconds=seconds)


@dataclass(frozen=True)
class Instance:
    """One started container process; immutable once finished (safe to read from other threads)."""

    container_id: str
    started_at: datetime
    plan: ProbePlan
    finished_at: datetime | None = None
    exit_code: int | None = None

    @property
    def reason(self) -> str:
        """The runtime's termination reason: containerd reports Completed for 0, Error otherwise."""
        return "Completed" if self.exit_code == 0 else "Error"

    def finished(self, at: datetime, exit_code: int) -> Instance:
        return Instance(self.container_id, self.started_at, self.plan, at, exit_code)

    def at_s(self, moment: datetime) -> float:
        return seconds_between(self.started_at, moment)


@dataclass
class RunContext:
    """What a step may use besides the container itself: the pod's identity and the node's state."""

    pod_uid: str
    restart_backoff: RestartBackoff
    pull_backoff: ImagePullBackoff
    #: A fresh ``containerd://…`` id, drawn from the controller's seeded stream.
    new_container_id: Callable[[], str]
    epoch: datetime  # seconds for the back-off module are counted from here


class ContainerRun:
    """The kubelet's view of one container of one pod (init or regular)."""

    def __init__(self, spec: Obj, behaviour: ContainerBehaviour, init: bool, restart_policy: str) -> None:
        self.spec = spec
        #: Init containers restart only on failure, and not at all under the pod's ``Never``.
        self.restart_policy = restart_policy if not init else ("Never" if restart_policy == "Never" else "OnFailure")
        self.name: str = spec["name"]
        self.image: str = str(spec.get("image") or "")
        self.behaviour = behaviour
        self.init = init
        self.stage = WAITING
        self.due: datetime | None = None
        self.pulled = False
        self.pull_attempts = 0
        self.pull_message = ""
        self.current: Instance | None = None
        self.previous: Instance | None = None
        self.instances = 0
        self.stop_at: datetime | None = None
        self.stop_exit_code = 0
        self._retry_at: datetime | None = None
        #: Set while a restart waits out CrashLoopBackOff (and until it runs): the delay it shows.
        self.crash_backoff_s: float | None = None

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

    # -- transitions --------------------------------------------------------------
    def begin(self, now: datetime) -> None:
        """The kubelet starts this container's pull (its turn came)."""
        if self.stage == WAITING:
            self._pull(now)

    def stop(self, at: datetime, exit_code: int = 0) -> None:
        """The pod is terminating: a running process exits at ``at`` with ``exit_code``
        (0: it stopped within its grace; 137: it was killed when the grace ran out).
        Nothing else starts: a pending pull or restart never happens."""
        if self.stage == RUNNING:
            if self.stop_at is None or at < self.stop_at:
                self.stop_at, self.stop_exit_code = at, exit_code
            self.due = min(self.due, self.stop_at) if self.due is not None else self.stop_at
        elif self.stage != EXITED:
            self.due = None  # a pull or a restart that has not happened never will

    def step(self, ctx: RunContext) -> None:
        """Apply what happens at ``self.due``."""
        at = self.due
        assert at is not None, "step() on a container with nothing due"
        handler = {PULLING: self._pull_finished, PULL_ERROR: self._show_pull_backoff,
                   PULL_BACKOFF: self._retry_pull, STARTING: self._started,
                   RUNNING: self._running_event, BACKOFF: self._restart}[self.stage]
        handler(at, ctx)

    def _pull(self, at: datetime) -> None:
        self.pull_attempts += 1
        self.stage, self.due = PULLING, after(at, self.behaviour.pull_delay_s)

    def _pull_finished(self, at: datetime, ctx: RunContext) -> None:
        if self.behaviour.pull_fails(self.pull_attempts):
            retry_s = ctx.pull_backoff.record_failure(self._pull_key(ctx), seconds_between(ctx.epoch, at))
            self.pull_message = self.behaviour.pull_error_message(self.image)
            self.stage, self.due = PULL_ERROR, min(after(at, PULL_ERROR_SHOWN_S), after(ctx.epoch, retry_s))
            self._retry_at = after(ctx.epoch, retry_s)
            return
        self.pulled = True
        self.stage, self.due = STARTING, after(at, self.behaviour.start_delay_s)

    def _show_pull_backoff(self, at: datetime, ctx: RunContext) -> None:
        assert self._retry_at is not None
        if self._retry_at <= at:
            self._pull(at)
        else:
            self.stage, self.due = PULL_BACKOFF, self._retry_at

    def _retry_pull(self, at: datetime, ctx: RunContext) -> None:
        self._pull(at)

    def _pull_key(self, ctx: RunContext) -> Hashable:
        return (ctx.pod_uid, self.image)

    def _started(self, at: datetime, ctx: RunContext) -> None:
        if self.current is not None:
            self.previous = self.current
        self.instances += 1
        self.crash_backoff_s = None
        self.current = Instance(ctx.new_container_id(), at, plan_probes(self.spec, self.behaviour))
        self.stage, self.due = RUNNING, None
        self._schedule_running(at)

    def _schedule_running(self, now: datetime) -> None:
        """The next instant something happens to the running process: a probe flip, an exit, a kill."""
        instance = self.current
        assert instance is not None
        candidates = [after(instance.started_at, t_s) for t_s, _ in instance.plan.ready]
        if instance.plan.started_s is not None:
            candidates.append(after(instance.started_at, instance.plan.started_s))
        for end_s in (self.behaviour.run_for_s, instance.plan.kill_s):
            if end_s is not None:
                candidates.append(after(instance.started_at, end_s))
        if self.stop_at is not None:
            candidates.append(self.stop_at)
        upcoming = [moment for moment in candidates if moment > now]
        self.due = min(upcoming) if upcoming else None

    def _running_event(self, at: datetime, ctx: RunContext) -> None:
        exit_code = self._exit_code_at(at)
        if exit_code is None:
            self._schedule_running(at)  # a probe flip: the status shows it, nothing else changes
            return
        self.current = self.current.finished(at, exit_code) if self.current else None
        if self.stop_at is not None or not self._restarts(exit_code):
            self.stage, self.due = EXITED, None
            return
        restart_s = ctx.restart_backoff.restart_at_s(self.restart_key(ctx), seconds_between(ctx.epoch, at))
        restart_at = after(ctx.epoch, restart_s)
        if restart_at <= at:
            self._restart(at, ctx)  # upstream: the first crash restarts at once
        else:
            self.crash_backoff_s = ctx.restart_backoff.delay_s(self.restart_key(ctx))
            self.stage, self.due = BACKOFF, restart_at

    def _exit_code_at(self, at: datetime) -> int | None:
        """Does the process end at ``at``, and with which code? (None: it keeps running.)"""
        instance = self.current
        assert instance is not None
        if self.stop_at is not None and at >= self.stop_at:
            return self.stop_exit_code
        if instance.plan.kill_s is not None and instance.at_s(at) >= instance.plan.kill_s:
            return SIGKILL_EXIT_CODE
        run_for_s = self.behaviour.run_for_s
        if run_for_s is not None and instance.at_s(at) >= run_for_s:
            return self.behaviour.exit_code
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
        self.stage, self.due = STARTING, after(at, self.behaviour.start_delay_s)


def image_id(normalized: str) -> str:
    """A stable ``repo@sha256:…`` for a normalized image: the same image has one digest everywhere."""
    name = normalized.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    repository = name.rsplit(":", 1)[0] if ":" in last else name
    return f"{repository}@sha256:{hashlib.sha256(normalized.encode()).hexdigest()}"
