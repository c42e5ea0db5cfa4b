"""When a simulated kubelet stops a pod's sidecars (restartable init containers, KEP-753).

A sidecar runs until the pod ends, so the kubelet stops it in two cases, both from
upstream 1.33's kubelet:

* the pod is finished: under ``restartPolicy`` Never/OnFailure every app container exited
  for good, or a regular init container failed under Never (``computePodActions`` then
  kills the pod: nothing is left to keep it running, :func:`finished_at`);
* the pod is deleted: its app containers stop first (``terminationOrdering`` in
  ``kuberuntime_termination_order.go``).

Either way each sidecar waits for every app container and for the sidecars declared after
it to exit, so they stop in reverse order: its preStop hook runs at once, then it waits for
its turn, at most what is left of the grace period (taken in whole seconds, as upstream's
``waitForTurn`` result is truncated), and still gets :data:`MIN_GRACE_S` after it
(``killContainer``'s ``minimumGracePeriodInSeconds``; kubelet/termination.py plans it). The
``Killing`` events are recorded at the start, for every sidecar at once, as upstream's
parallel ``killContainer`` calls record them before waiting.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from fakekube.kubelet.containers import RUNNING, ContainerRun, RunContext
from fakekube.kubelet.termination import MIN_GRACE_S

__all__ = ["MIN_GRACE_S", "finished_at", "stop_in_order"]


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
                  grace_s: float, ctx: RunContext) -> list[ContainerRun]:
    """Stop the running sidecars after the app containers, last declared first.

    ``now``: when the kubelet (re)considers stopping them, with ``grace_s`` of grace (with
    none there is no ordering: they stop as app containers do). Call it after the app
    containers' stops began. Idempotent (a container keeps the stop it began). Returns the
    sidecars asked to stop for the first time (the caller records their ``Killing`` at ``now``).
    """
    turn: datetime | None = _last_exit(runs, now) if grace_s > 0 else None
    first: list[ContainerRun] = []
    for run in reversed([run for run in init_runs if run.sidecar]):
        if run.begin_stop(now, grace_s, ctx, turn_at=turn):
            first.append(run)
        if turn is not None:
            turn = _last_exit([run], turn)
    return first


def _last_exit(runs: Sequence[ContainerRun], since: datetime) -> datetime:
    """When the last of ``runs`` has exited (or will, once asked to stop), and not before ``since``."""
    moments = [since]
    for run in runs:
        if run.stage == RUNNING:
            if (expected := run.expected_exit_at) is not None:
                moments.append(expected)
        elif (exited := _exited_at(run)) is not None:
            moments.append(exited)
    return max(moments)


def _exited_at(run: ContainerRun) -> datetime | None:
    instance = run.current
    return instance.finished_at if instance is not None else None
