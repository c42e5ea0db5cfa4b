"""What a simulated kubelet reports: container statuses, the pod phase and its conditions.

Pure functions of the kubelet's container runs and an instant, following upstream's
``convertToAPIContainerStatuses`` and ``getPhase`` (``pkg/kubelet/kubelet_pods.go``) and the
condition generators of ``pkg/kubelet/status/generate.go``: texts, reasons and the order
of the kubelet-owned conditions (PodReadyToStartContainers, Initialized, Ready,
ContainersReady, PodScheduled) are upstream's. Readiness gates and sidecar (restartable
init) containers are not modelled.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from fakekube.clock import format_rfc3339
from fakekube.kubelet.backoff import CRASH_LOOP_BACK_OFF, format_go_duration
from fakekube.kubelet.behaviour import ERR_IMAGE_PULL, IMAGE_PULL_BACKOFF, normalize_image
from fakekube.kubelet.containers import (
    BACKOFF,
    EXITED,
    PULL_BACKOFF,
    PULL_ERROR,
    RUNNING,
    STARTING,
    ContainerRun,
    Instance,
    image_id,
)

Obj = dict[str, Any]

PENDING, RUNNING_PHASE, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
TERMINAL_PHASES = (SUCCEEDED, FAILED)

#: Upstream's default waiting reasons (kubelet_pods.go) and condition reasons (status/generate.go).
CONTAINER_CREATING = "ContainerCreating"
POD_INITIALIZING = "PodInitializing"
CONTAINERS_NOT_READY = "ContainersNotReady"
CONTAINERS_NOT_INITIALIZED = "ContainersNotInitialized"
POD_COMPLETED = "PodCompleted"
POD_FAILED = "PodFailed"

#: Condition types the kubelet owns, in the order it writes them; others (DisruptionTarget) stay first.
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


# -- containers --------------------------------------------------------------------------

def container_status(run: ContainerRun, pod_label: str, has_init: bool, now: datetime) -> Obj:
    """One entry of ``containerStatuses`` / ``initContainerStatuses`` at ``now``."""
    state, last = _states(run, pod_label, has_init)
    instance = run.current
    status: Obj = {"name": run.name, "state": state, "lastState": last,
                   "ready": _ready(run, now), "restartCount": run.restart_count}
    if instance is None:
        status.update(image=run.image, imageID="", started=False)
        return status
    normalized = normalize_image(run.image)
    status.update(image=normalized, imageID=image_id(normalized),
                  containerID=instance.container_id, started=_started(run, now))
    return status


def _states(run: ContainerRun, pod_label: str, has_init: bool) -> tuple[Obj, Obj]:
    """(state, lastState) as upstream shows them for the run's stage."""
    current, previous = run.current, run.previous
    if run.stage == RUNNING and current is not None:
        return {"running": {"startedAt": format_rfc3339(current.started_at)}}, _terminated_or_empty(previous)
    if run.crash_backoff_s is not None and current is not None:
        message = (f"back-off {format_go_duration(run.crash_backoff_s)} restarting failed "
                   f"container={run.name} pod={pod_label}")
        return _waiting(CRASH_LOOP_BACK_OFF, message), terminated(current)
    if current is not None and current.finished_at is not None and run.stage in (EXITED, STARTING, BACKOFF):
        return terminated(current), _terminated_or_empty(previous)
    return _waiting_before_start(run, has_init), {}


def _waiting_before_start(run: ContainerRun, has_init: bool) -> Obj:
    if run.stage == PULL_ERROR:
        return _waiting(ERR_IMAGE_PULL, run.pull_message)
    if run.stage == PULL_BACKOFF or run.pull_attempts > 1:
        # The image as written in the spec (upstream image_manager.go names imgRef, not the tagged form).
        return _waiting(IMAGE_PULL_BACKOFF, f'Back-off pulling image "{run.image}"')
    return _waiting(POD_INITIALIZING if has_init else CONTAINER_CREATING)


def _waiting(reason: str, message: str = "") -> Obj:
    waiting: Obj = {"reason": reason}
    if message:
        waiting["message"] = message
    return {"waiting": waiting}


def terminated(instance: Instance) -> Obj:
    finished = instance.finished_at or instance.started_at
    return {"terminated": {"exitCode": instance.exit_code, "reason": instance.reason,
                           "startedAt": format_rfc3339(instance.started_at),
                           "finishedAt": format_rfc3339(finished), "containerID": instance.container_id}}


def _terminated_or_empty(instance: Instance | None) -> Obj:
    return terminated(instance) if instance is not None and instance.finished_at is not None else {}


def _ready(run: ContainerRun, now: datetime) -> bool:
    instance = run.current
    return run.stage == RUNNING and instance is not None and instance.plan.ready_at(instance.at_s(now))


def _started(run: ContainerRun, now: datetime) -> bool:
    instance = run.current
    if run.stage != RUNNING or instance is None or instance.plan.started_s is None:
        return False
    return instance.at_s(now) >= instance.plan.started_s


# -- phase ---------------------------------------------------------------------------------

def pod_phase(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], restart_policy: str,
              terminating_done: bool) -> str:
    """Upstream's ``getPhase``; ``terminating_done``: the pod was deleted and every process stopped."""
    if any(run.done and not run.succeeded for run in init_runs):
        return FAILED  # an init container failed under restartPolicy Never
    if not all(run.succeeded for run in init_runs):
        return PENDING
    waiting = running = stopped = succeeded = 0
    for run in runs:
        if run.stage == RUNNING:
            running += 1
        elif run.current is not None and run.current.finished_at is not None:
            stopped += 1
            succeeded += run.stage == EXITED and run.current.exit_code == 0
        else:
            waiting += 1
    return _phase_from_counts(waiting, running, stopped, succeeded, restart_policy, terminating_done)


def _phase_from_counts(waiting: int, running: int, stopped: int, succeeded: int, restart_policy: str,
                       terminating_done: bool) -> str:
    if waiting:
        return PENDING
    if running:
        return RUNNING_PHASE
    if not stopped:
        return PENDING
    if terminating_done:
        return SUCCEEDED if stopped == succeeded else FAILED
    if restart_policy == "Always":
        return RUNNING_PHASE
    if stopped == succeeded:
        return SUCCEEDED
    return FAILED if restart_policy == "Never" else RUNNING_PHASE


# -- conditions ----------------------------------------------------------------------------

def pod_conditions(existing: Sequence[Obj], init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun],
                   phase: str, now: datetime) -> list[Obj]:
    """Conditions others own first (unchanged), then the kubelet's, each keeping its
    ``lastTransitionTime`` while its status does not change."""
    before = {c.get("type"): c for c in existing}
    ready_status, ready_reason, ready_message = _containers_ready(init_runs, runs, phase, now)
    wanted = [
        ("PodReadyToStartContainers", "False" if phase in TERMINAL_PHASES else "True", "", ""),
        ("Initialized",) + _initialized(init_runs, runs, phase),
        ("Ready", ready_status, ready_reason, ready_message),
        ("ContainersReady", ready_status, ready_reason, ready_message),
        ("PodScheduled", "True", "", ""),
    ]
    others = [dict(c) for c in existing if c.get("type") not in KUBELET_CONDITIONS]
    return others + [_condition(kind, status, reason, message, before.get(kind), now)
                     for kind, status, reason, message in wanted]


def _condition(kind: str, status: str, reason: str, message: str, previous: Obj | None, now: datetime) -> Obj:
    unchanged = previous is not None and previous.get("status") == status
    transition = previous.get("lastTransitionTime") if unchanged and previous else None
    condition: Obj = {"type": kind, "status": status, "lastProbeTime": None,
                      "lastTransitionTime": transition or format_rfc3339(now)}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def _initialized(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], phase: str) -> tuple[str, str, str]:
    if not init_runs:
        return "True", "", ""
    if phase == SUCCEEDED and all(run.current is not None for run in init_runs):
        return "True", POD_COMPLETED, ""
    incomplete = [run.name for run in init_runs if not run.succeeded]
    if not incomplete or any(run.current is not None for run in runs):
        return "True", "", ""
    return "False", CONTAINERS_NOT_INITIALIZED, f"containers with incomplete status: [{' '.join(incomplete)}]"


def _containers_ready(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], phase: str,
                      now: datetime) -> tuple[str, str, str]:
    if phase == SUCCEEDED:
        return "False", POD_COMPLETED, ""
    if phase == FAILED:
        return "False", POD_FAILED, ""
    unready = [run.name for run in runs if not _ready(run, now)]
    if unready:
        return "False", CONTAINERS_NOT_READY, f"containers with unready status: [{' '.join(unready)}]"
    return "True", "", ""
