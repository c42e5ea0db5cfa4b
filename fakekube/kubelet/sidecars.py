"""When a simulated kubelet stops a pod's sidecars (restartable init containers, KEP-753).

A sidecar runs until the pod ends, so the kubelet stops it in two cases, both from
upstream 1.33's kubelet:

* the pod is finished: under ``restartPolicy`` Never/OnFailure every app container exited
  for good, or a regular init container failed under Never (``computePodActions`` then
  kills the pod: nothing is left to keep it running, :func:`finished_at`);
* the pod is deleted: its app containers stop first (``terminationOrdering`` in
  ``kuberuntime_termination_order.go``).

Either way each sidecar waits for every app container and for the sidecars declared after
it to exit, so they stop in reverse order; a wait ends at the grace period's end at the
latest, and a sidecar then still gets :data:`MIN_GRACE_S` (``killContainer``'s
``minimumGracePeriodInSeconds``). The ``Killing`` events are recorded at the start, for
every sidecar at once, as upstream's parallel ``killContainer`` calls record them before
waiting. Simplification: upstream truncates the wait to whole seconds before taking it
from the grace, so a sidecar may get up to a second more there.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from fakekube.kubelet.containers import RUNNING, SIGKILL_EXIT_CODE, ContainerRun, after

#: ``minimumGracePeriodInSeconds``: what a container gets however long it waited for its turn.
MIN_GRACE_S = 2.0


def finished_at(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun]) -> datetime | None:
    """The instant nothing but sidecars is left to run in the pod (upstream's ``KillPod``):
    a regular init container failed for good, or every app container exited for good.
    None while something may still run, or when the pod has no sidecar."""
    if not any(run.sidecar for run in init_runs):
        return None
    for run in init_runs:
        if not run.sidecar and run.done and not run.succeeded:
            return _exited_at(run)
    if not runs or not all(run.done for run in runs):
        return None
    moments = [moment for moment in map(_exited_at, runs) if moment is not None]
    return max(moments) if moments else None


def stop_in_order(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], now: datetime,
                  deadline: datetime, grace_s: float) -> list[ContainerRun]:
    """Ask the running sidecars to stop after the app containers, last declared first.

    ``now``: when the kubelet (re)considers stopping them; ``deadline``: when the grace
    period of ``grace_s`` that began the stop ends (with no grace there is no ordering:
    they stop as app containers do). Call it after the app containers were asked to stop.
    Idempotent: a container keeps its earliest stop, and a later call plans an earlier one
    only when a container it waits for exited sooner than planned. Returns the sidecars asked to stop for the first time (the caller records
    their ``Killing`` at ``now``).
    """
    cap = max(deadline, now)  # a kubelet catching up stops nothing in the past
    turn = _last_exit(runs, now) if grace_s > 0 else now
    first: list[ContainerRun] = []
    for run in reversed([run for run in init_runs if run.sidecar]):
        turn = min(turn, cap)  # waitForTurn gives up when the grace period ends
        kill_at = max(cap, after(turn, MIN_GRACE_S)) if grace_s > 0 else cap
        stopped = after(turn, run.behaviour.stop_delay_s)
        if run.stop(stopped, 0) if stopped <= kill_at else run.stop(kill_at, SIGKILL_EXIT_CODE):
            first.append(run)
        if grace_s > 0:
            turn = _last_exit([run], turn)
    return first


def _last_exit(runs: Sequence[ContainerRun], since: datetime) -> datetime:
    """When the last of ``runs`` has exited (or will, once asked to stop), and not before ``since``."""
    moments = [since]
    for run in runs:
        if run.stage == RUNNING:
            if run.stop_at is not None:
                moments.append(run.stop_at)
        elif (exited := _exited_at(run)) is not None:
            moments.append(exited)
    return max(moments)


def _exited_at(run: ContainerRun) -> datetime | None:
    instance = run.current
    return instance.finished_at if instance is not None else None
